// SQL for groups and memberships. FreeRADIUS knows a group only by its name (radusergroup,
// radgroupcheck, radgroupreply): `groups` holds Wisp's id, description and timestamps beside it.
import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { lockedInTransaction } from "../../db/locking.ts";
import { deleteRadiusRows, renameRadiusRows } from "../../db/radius-rows.ts";
import type { GroupsTable, Schema } from "../../db/schema.ts";
import { NAMED_ROWS, ordered, type SortPlan } from "../../db/sort.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { planExists } from "../plans/repo.ts";
import { queueReauthorization } from "../sessions/reauthorize.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";

/** The ids of the account's groups with these names (group mappings of directories and IdPs). */
export async function groupIdsByName(
  db: Kysely<Schema>,
  accountId: number,
  names: string[],
): Promise<Map<string, number>> {
  if (names.length === 0) return new Map();
  const rows = await db
    .selectFrom("groups")
    .select(["id", "name"])
    .where("account_id", "=", accountId)
    .where("name", "in", names)
    .execute();
  return new Map(rows.map((r) => [r.name, r.id]));
}

import { likePattern } from "../shared/text.ts";
import type { GroupSortField, MemberSortField } from "./rules.ts";

export type GroupRow = Selectable<GroupsTable>;
export type GroupChanges = Omit<Updateable<GroupsTable>, "id" | "account_id" | "created">;

export interface MemberRow {
  userid: number;
  username: string;
  priority: number;
}

const GROUP_SORT: SortPlan<GroupSortField> = NAMED_ROWS;

const MEMBER_SORT: SortPlan<MemberSortField> = {
  keys: {
    userid: { column: "users.id" },
    username: { column: "users.username", text: true },
    priority: { column: "radusergroup.priority" },
  },
  // FreeRADIUS's order of a user's groups; here, of a group's users.
  defaultOrder: [
    { field: "priority", descending: false },
    { field: "username", descending: false },
  ],
  unique: [{ column: "users.id" }],
};

export class GroupsRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
    private readonly inTransaction = false,
  ) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn with a repository bound to one transaction. */
  /** Whether the plan is this account's (in this repository's transaction). */
  planExists(accountId: number, planId: number): Promise<boolean> {
    return planExists(this.db, accountId, planId);
  }

  transaction<T>(fn: (repo: GroupsRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new GroupsRepo(trx, this.dialect, true)));
  }

  async list(
    accountId: number,
    search: string | undefined,
    page: PageRequest,
    sort?: Sort<GroupSortField>,
  ): Promise<{ rows: GroupRow[]; total: number }> {
    let query = this.db.selectFrom("groups").where("account_id", "=", accountId);
    if (search) {
      const pattern = likePattern(search);
      query = query.where((eb) =>
        eb.or(
          ["name", "description"].map(
            (column) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`,
          ),
        ),
      );
    }
    const [rows, count] = await Promise.all([
      ordered(query.selectAll(), this.dialect, GROUP_SORT, sort)
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  findById(accountId: number, id: number): Promise<GroupRow | undefined> {
    return lockedInTransaction(
      this.db.selectFrom("groups").selectAll().where("account_id", "=", accountId).where("id", "=", id),
      this.dialect,
      this.inTransaction,
    ).executeTakeFirst();
  }

  findByName(accountId: number, name: string): Promise<GroupRow | undefined> {
    return this.db
      .selectFrom("groups")
      .selectAll()
      .where("account_id", "=", accountId)
      .where(sql`lower(name)`, "=", name.toLowerCase())
      .executeTakeFirst();
  }

  insert(row: Insertable<GroupsTable>): Promise<GroupRow> {
    return this.db.insertInto("groups").values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(accountId: number, id: number, changes: GroupChanges): Promise<GroupRow | undefined> {
    return this.db
      .updateTable("groups")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.db.deleteFrom("groups").where("account_id", "=", accountId).where("id", "=", id).execute();
  }

  /** The FreeRADIUS tables key groups by name: a rename carries memberships and attributes along. */
  async renameRadiusRows(accountId: number, from: string, to: string): Promise<void> {
    await renameRadiusRows(this.db, "groupname", accountId, from, to);
  }

  async deleteRadiusRows(accountId: number, name: string): Promise<void> {
    await deleteRadiusRows(this.db, "groupname", accountId, name);
  }

  findUser(accountId: number, id: number): Promise<{ id: number; username: string } | undefined> {
    return lockedInTransaction(
      this.db
        .selectFrom("users")
        .select(["id", "username"])
        .where("account_id", "=", accountId)
        .where("id", "=", id),
      this.dialect,
      this.inTransaction,
    ).executeTakeFirst();
  }

  /** Members are users of the account: radusergroup rows naming no user (other logins) are not shown. */
  private members(accountId: number, groupname: string) {
    return this.db
      .selectFrom("radusergroup")
      .innerJoin("users", (join) =>
        join
          .onRef("users.account_id", "=", "radusergroup.account_id")
          .onRef("users.username", "=", "radusergroup.username"),
      )
      .where("radusergroup.account_id", "=", accountId)
      .where("radusergroup.groupname", "=", groupname);
  }

  async listMembers(
    accountId: number,
    groupname: string,
    page: PageRequest,
    sort?: Sort<MemberSortField>,
  ): Promise<{ rows: MemberRow[]; total: number }> {
    const query = this.members(accountId, groupname);
    const [rows, count] = await Promise.all([
      ordered(
        query.select(["users.id as userid", "users.username", "radusergroup.priority"]),
        this.dialect,
        MEMBER_SORT,
        sort,
      )
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  findMember(accountId: number, groupname: string, userId: number): Promise<MemberRow | undefined> {
    return this.members(accountId, groupname)
      .select(["users.id as userid", "users.username", "radusergroup.priority"])
      .where("users.id", "=", userId)
      .executeTakeFirst();
  }

  async insertMember(accountId: number, groupname: string, username: string, priority: number) {
    await this.db
      .insertInto("radusergroup")
      .values({ account_id: accountId, groupname, username, priority })
      .execute();
  }

  /** Queues CoA-Requests of what a login gets now to these users' open sessions (with the change). */
  pushToSessions(accountId: number, usernames: string[], reason: string): Promise<void> {
    return queueReauthorization(this.db, this.dialect, accountId, { usernames }, reason);
  }

  /** Queues CoA-Requests of what a login gets now to the group's members' open sessions. */
  pushToGroup(accountId: number, group: string, reason: string): Promise<void> {
    return queueReauthorization(this.db, this.dialect, accountId, { group }, reason);
  }

  /** Returns whether a membership was removed. */
  async deleteMember(accountId: number, groupname: string, username: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("radusergroup")
      .where("account_id", "=", accountId)
      .where("groupname", "=", groupname)
      .where("username", "=", username)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

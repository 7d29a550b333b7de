// SQL of the SCIM door: users and groups looked up the way identity providers filter them, pages
// by offset, group memberships read and set in bulk. Writes that every door shares go through the
// users and groups repositories, bound to the same transaction (see transaction()).
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { lockedInTransaction } from "../../db/locking.ts";
import type { Schema } from "../../db/schema.ts";
import type { GroupRow } from "../groups/repo.ts";
import { GroupsRepo } from "../groups/repo.ts";
import { DEFAULT_PRIORITY } from "../groups/rules.ts";
import type { UserRow } from "../users/repo.ts";
import { UsersRepo } from "../users/repo.ts";

/** A filter Wisp answers (see filter.ts): one column compared with one value. */
export interface RowFilter {
  column: "username" | "external_id" | "display_name" | "id";
  value: string;
}

export interface Window {
  offset: number;
  limit: number;
}

export interface Member {
  id: number;
  username: string;
}

export interface ScimTransaction {
  scim: ScimRepo;
  users: UsersRepo;
  groups: GroupsRepo;
}

export class ScimRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
    private readonly inTransaction = false,
  ) {}

  /** Runs fn with the SCIM, users and groups repositories bound to one transaction. */
  transaction<T>(fn: (tx: ScimTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) =>
      fn({
        scim: new ScimRepo(trx, this.dialect, true),
        users: new UsersRepo(trx, this.dialect, true),
        groups: new GroupsRepo(trx, this.dialect, true),
      }),
    );
  }

  findUser(accountId: number, id: number): Promise<UserRow | undefined> {
    return lockedInTransaction(
      this.db.selectFrom("users").selectAll().where("account_id", "=", accountId).where("id", "=", id),
      this.dialect,
      this.inTransaction,
    ).executeTakeFirst();
  }

  /** userName is matched ignoring case (it is unique that way), externalId exactly (caseExact). */
  async listUsers(accountId: number, filter: RowFilter | undefined, window: Window) {
    let query = this.db.selectFrom("users").where("account_id", "=", accountId);
    if (filter?.column === "username")
      query = query.where(sql`lower(username)`, "=", filter.value.toLowerCase());
    if (filter?.column === "external_id") query = query.where("external_id", "=", filter.value);
    if (filter?.column === "id") query = query.where("id", "=", Number(filter.value));
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy("id").limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  findGroup(accountId: number, id: number): Promise<GroupRow | undefined> {
    return lockedInTransaction(
      this.db.selectFrom("groups").selectAll().where("account_id", "=", accountId).where("id", "=", id),
      this.dialect,
      this.inTransaction,
    ).executeTakeFirst();
  }

  /** displayName is the SCIM name when one was kept, else the Wisp name; matched ignoring case. */
  async listGroups(accountId: number, filter: RowFilter | undefined, window: Window) {
    let query = this.db.selectFrom("groups").where("account_id", "=", accountId);
    if (filter?.column === "display_name") {
      query = query.where(sql`lower(coalesce(display_name, name))`, "=", filter.value.toLowerCase());
    }
    if (filter?.column === "external_id") query = query.where("external_id", "=", filter.value);
    if (filter?.column === "id") query = query.where("id", "=", Number(filter.value));
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy("id").limit(window.limit).offset(window.offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  /** The groups of some users, by username (radusergroup names them by username and groupname). */
  async groupsOf(accountId: number, usernames: string[]): Promise<Map<string, GroupRow[]>> {
    const found = new Map<string, GroupRow[]>();
    if (usernames.length === 0) return found;
    const rows = await this.db
      .selectFrom("radusergroup")
      .innerJoin("groups", (join) =>
        join
          .onRef("groups.account_id", "=", "radusergroup.account_id")
          .onRef("groups.name", "=", "radusergroup.groupname"),
      )
      .where("radusergroup.account_id", "=", accountId)
      .where("radusergroup.username", "in", usernames)
      .selectAll("groups")
      .select("radusergroup.username as member")
      .orderBy("groups.id")
      .execute();
    for (const { member, ...group } of rows) found.set(member, [...(found.get(member) ?? []), group]);
    return found;
  }

  /** The users of some groups, by group name. */
  async membersOf(accountId: number, groupnames: string[]): Promise<Map<string, Member[]>> {
    const found = new Map<string, Member[]>();
    if (groupnames.length === 0) return found;
    const rows = await this.db
      .selectFrom("radusergroup")
      .innerJoin("users", (join) =>
        join
          .onRef("users.account_id", "=", "radusergroup.account_id")
          .onRef("users.username", "=", "radusergroup.username"),
      )
      .where("radusergroup.account_id", "=", accountId)
      .where("radusergroup.groupname", "in", groupnames)
      .select(["users.id", "users.username", "radusergroup.groupname"])
      .orderBy("users.id")
      .execute();
    for (const { groupname, ...member } of rows)
      found.set(groupname, [...(found.get(groupname) ?? []), member]);
    return found;
  }

  /** The account's users among these ids. */
  usersByIds(accountId: number, ids: number[]): Promise<Member[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom("users")
      .select(["id", "username"])
      .where("account_id", "=", accountId)
      .where("id", "in", ids)
      .execute();
  }

  /** Makes the group's users exactly `wanted`: those not wanted leave, the new ones join. */
  async setMembers(accountId: number, groupname: string, current: Member[], wanted: Member[]): Promise<void> {
    const keep = new Set(wanted.map((m) => m.username));
    const had = new Set(current.map((m) => m.username));
    const leaving = current.filter((m) => !keep.has(m.username)).map((m) => m.username);
    const joining = wanted.filter((m) => !had.has(m.username));
    if (leaving.length > 0) {
      await this.db
        .deleteFrom("radusergroup")
        .where("account_id", "=", accountId)
        .where("groupname", "=", groupname)
        .where("username", "in", leaving)
        .execute();
    }
    if (joining.length > 0) {
      await this.db
        .insertInto("radusergroup")
        .values(
          joining.map((m) => ({
            account_id: accountId,
            groupname,
            username: m.username,
            priority: DEFAULT_PRIORITY,
          })),
        )
        .execute();
    }
  }
}

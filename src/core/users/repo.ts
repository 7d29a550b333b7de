import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { lockedInTransaction } from "../../db/locking.ts";
import { prepared, preparedColumn } from "../../db/prepared.ts";
import { deleteRadiusRows, renameRadiusRows } from "../../db/radius-rows.ts";
import type { Schema, UsersTable } from "../../db/schema.ts";
import { ordered, orderTerms, type SortPlan } from "../../db/sort.ts";
import { TurnBatch } from "../../db/turn-batch.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { type EventKind, insertEvents } from "../events/repo.ts";
import { planExists } from "../plans/repo.ts";
import { queueDisconnect } from "../sessions/jobs.ts";
import { queueReauthorization } from "../sessions/reauthorize.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import { likePattern } from "../shared/text.ts";
import type { UserSortField } from "./rules.ts";

export type UserRow = Selectable<UsersTable>;
export type UserSort = Sort<UserSortField>;

const SORT: SortPlan<UserSortField> = {
  keys: {
    id: { column: "id" },
    username: { column: "username", text: true },
    email: { column: "email", text: true },
    fullname: { column: "fullname", text: true },
    status: { column: "status" },
    created: { column: "created" },
    updated: { column: "updated" },
  },
  defaultOrder: [{ field: "id", descending: false }],
  unique: [{ column: "id" }],
};

interface FilterShape {
  status: boolean;
  search: boolean;
}

interface ListQueries {
  rows(accountId: number, status: string, pattern: string, limit: number, offset: number): Promise<UserRow[]>;
  json(accountId: number, status: string, pattern: string, limit: number, offset: number): Promise<string[]>;
  total(accountId: number, status: string, pattern: string): Promise<{ total: number }[]>;
  /** PostgreSQL: the JSON page (joined by commas) and the total in one round trip. */
  jsonAndTotal(
    accountId: number,
    status: string,
    pattern: string,
    limit: number,
    offset: number,
  ): Promise<{ data: string; total: number }[]>;
}
export type UserChanges = Omit<Updateable<UsersTable>, "id" | "account_id" | "created">;

export interface UserFilter {
  status?: string | undefined;
  search?: string | undefined;
}

export class UsersRepo {
  /** GET /api/users/{id} outside transactions: compiled once. */
  private readonly byId;
  private readonly jsonById;
  private readonly jsonBatch: TurnBatch<string> | undefined;
  private readonly userCount;
  /** The list queries, compiled once per filter shape and order (see compiledFor). */
  private readonly listQueries = new Map<string, ListQueries>();

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
    private readonly inTransaction = false,
  ) {
    this.byId = prepared(db, (accountId: number, id: number) => this.selectById(accountId, id), 2);
    // SQLite answers at once (better-sqlite3 is synchronous); PostgreSQL is a round trip per query.
    this.jsonBatch =
      dialect === "postgres" && !inTransaction
        ? new TurnBatch<string>((keys) => this.loadJson(keys))
        : undefined;
    this.jsonById = preparedColumn(
      db,
      (accountId: number, id: number) =>
        db.selectFrom("users").select("api_json").where("account_id", "=", accountId).where("id", "=", id),
      2,
    );
    this.userCount = preparedColumn(
      db,
      (accountId: number) => db.selectFrom("accounts").select("user_count").where("id", "=", accountId),
      1,
    );
  }

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  private selectById(accountId: number, id: number) {
    return this.db.selectFrom("users").selectAll().where("account_id", "=", accountId).where("id", "=", id);
  }

  /** Whether the plan is this account's (in this repository's transaction). */
  planExists(accountId: number, planId: number): Promise<boolean> {
    return planExists(this.db, accountId, planId);
  }

  /** Runs fn with a repository bound to one transaction. */
  transaction<T>(fn: (repo: UsersRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new UsersRepo(trx, this.dialect, true)));
  }

  /**
   * The users an account's filter selects. `status` and `pattern` (a LIKE pattern) may be
   * markers of a compiled query: whether each applies is given apart, by `shape`.
   */
  private filtered(accountId: number, shape: FilterShape, status: unknown, pattern: unknown) {
    let query = this.db.selectFrom("users").where("account_id", "=", accountId);
    if (shape.status) query = query.where("status", "=", status as string);
    if (shape.search) {
      query = query.where((eb) =>
        eb.or(
          ["username", "email", "fullname"].map(
            (column) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`,
          ),
        ),
      );
    }
    return query;
  }

  /** Unfiltered, the account's count kept by the database (migration 008); filtered, a count. */
  private async total(accountId: number, filter: UserFilter): Promise<number> {
    if (!filter.status && !filter.search) return (await this.userCount(accountId))[0] ?? 0;
    // The count ignores the order: any compiled set of this filter shape has it.
    const [count] = await this.compiledFor(filter, undefined).total(...this.arguments(accountId, filter));
    return Number(count?.total ?? 0);
  }

  /** One set of compiled list queries per filter shape (status given or not, search given or not) and order. */
  private compiledFor(filter: UserFilter, sort: UserSort | undefined): ListQueries {
    const shape = { status: Boolean(filter.status), search: Boolean(filter.search) };
    const name = `${shape.status}:${shape.search}:${sort?.field}:${sort?.descending}`;
    let queries = this.listQueries.get(name);
    if (!queries) {
      queries = this.compileList(shape, sort);
      this.listQueries.set(name, queries);
    }
    return queries;
  }

  private arguments(accountId: number, filter: UserFilter): [number, string, string] {
    return [accountId, filter.status ?? "", filter.search ? likePattern(filter.search) : ""];
  }

  private compileList(shape: FilterShape, sort: UserSort | undefined): ListQueries {
    const page = (accountId: number, status: string, pattern: string, limit: number, offset: number) =>
      ordered(this.filtered(accountId, shape, status, pattern).selectAll(), this.dialect, SORT, sort)
        .limit(limit)
        .offset(offset);
    return {
      rows: prepared(this.db, page, 5),
      json: preparedColumn(
        this.db,
        (accountId: number, status: string, pattern: string, limit: number, offset: number) =>
          ordered(
            this.filtered(accountId, shape, status, pattern).select("api_json"),
            this.dialect,
            SORT,
            sort,
          )
            .limit(limit)
            .offset(offset),
        5,
      ),
      total: prepared(this.db, (a: number, s: string, p: string) => this.counted(a, shape, s, p), 3),
      jsonAndTotal: prepared(
        this.db,
        (accountId: number, status: string, pattern: string, limit: number, offset: number) => {
          const users = page(accountId, status, pattern, limit, offset);
          const total =
            shape.status || shape.search
              ? this.counted(accountId, shape, status, pattern)
              : this.db.selectFrom("accounts").select("user_count").where("id", "=", accountId);
          const query = sql<{ data: string; total: number }>`select
            coalesce((select string_agg(u.api_json, ',' order by ${orderTerms(this.dialect, SORT, sort)})
              from (${users}) as u), '') as data,
            (${total}) as total`;
          return { compile: () => query.compile(this.db) };
        },
        5,
      ),
    };
  }

  private counted(accountId: number, shape: FilterShape, status: unknown, pattern: unknown) {
    return this.filtered(accountId, shape, status, pattern).select((eb) =>
      eb.fn.countAll<number>().as("total"),
    );
  }

  /** A page of the account's users in the order asked for (by id by default). */
  async list(
    accountId: number,
    filter: UserFilter,
    page: PageRequest,
    sort?: UserSort,
  ): Promise<{ rows: UserRow[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.compiledFor(filter, sort).rows(...this.arguments(accountId, filter), page.limit, offsetOf(page)),
      this.total(accountId, filter),
    ]);
    return { rows, total };
  }

  /**
   * The same page as a JSON array of the users' stored JSON (migration 008): for the API, where
   * turning rows into objects and back into JSON costs several times what the query does.
   */
  async listJson(
    accountId: number,
    filter: UserFilter,
    page: PageRequest,
    sort?: UserSort,
  ): Promise<{ json: string; total: number }> {
    const queries = this.compiledFor(filter, sort);
    const args = [...this.arguments(accountId, filter), page.limit, offsetOf(page)] as const;
    if (this.dialect === "postgres") {
      // Each query is a round trip there: one for both.
      const [row] = await queries.jsonAndTotal(...args);
      return { json: `[${row?.data ?? ""}]`, total: Number(row?.total ?? 0) };
    }
    const [users, total] = await Promise.all([queries.json(...args), this.total(accountId, filter)]);
    return { json: `[${users.join(",")}]`, total };
  }

  /**
   * One user as the API shows it (stored JSON, migration 008), outside transactions. Without a
   * read connection (PostgreSQL), the users asked for in one turn are read in one query.
   */
  async findJson(accountId: number, id: number): Promise<string | undefined> {
    if (this.jsonBatch) return this.jsonBatch.get(`${accountId}:${id}`);
    return (await this.jsonById(accountId, id))[0] ?? undefined;
  }

  /** Several users' JSON at once, by "account:id" keys (the turn batch of findJson). */
  async loadJson(keys: string[]): Promise<Map<string, string>> {
    const accounts: number[] = [];
    const ids: number[] = [];
    for (const key of keys) {
      const [accountId, id] = key.split(":");
      accounts.push(Number(accountId));
      ids.push(Number(id));
    }
    const { rows } = await sql<{ account_id: number; id: number; api_json: string }>`
      select u.account_id, u.id, u.api_json from users u
      join unnest(${accounts}::integer[], ${ids}::integer[]) as wanted(account_id, id)
        on u.account_id = wanted.account_id and u.id = wanted.id
      where u.account_id = any(${[...new Set(accounts)]}::integer[])`.execute(this.db);
    return new Map(rows.map((r) => [`${r.account_id}:${r.id}`, r.api_json]));
  }

  /** Inside a transaction on PostgreSQL the row stays locked until commit (see lockedInTransaction). */
  async findById(accountId: number, id: number): Promise<UserRow | undefined> {
    if (!this.inTransaction) return (await this.byId(accountId, id))[0];
    return lockedInTransaction(this.selectById(accountId, id), this.dialect, true).executeTakeFirst();
  }

  findByUsername(accountId: number, username: string): Promise<UserRow | undefined> {
    return this.db
      .selectFrom("users")
      .selectAll()
      .where("account_id", "=", accountId)
      .where(sql`lower(username)`, "=", username.toLowerCase())
      .executeTakeFirst();
  }

  insert(row: Insertable<UsersTable>): Promise<UserRow> {
    return this.db.insertInto("users").values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(accountId: number, id: number, changes: UserChanges): Promise<UserRow | undefined> {
    return this.db
      .updateTable("users")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.db.deleteFrom("users").where("account_id", "=", accountId).where("id", "=", id).execute();
  }

  /**
   * Replaces the user's password: every check item named in `replacing` (all password items: with
   * another left in front of it, the new one would not decide) gives way to `item` (FreeRADIUS:
   * Cleartext-Password := secret, or Password-With-Header := {scheme}hash).
   */
  async setPassword(
    accountId: number,
    username: string,
    item: { attribute: string; value: string },
    replacing: readonly string[],
  ): Promise<void> {
    await this.db
      .deleteFrom("radcheck")
      .where("account_id", "=", accountId)
      .where("username", "=", username)
      .where("attribute", "in", [...replacing])
      .execute();
    await this.db
      .insertInto("radcheck")
      .values({ account_id: accountId, username, attribute: item.attribute, op: ":=", value: item.value })
      .execute();
  }

  /** Replaces one check item of the user (e.g. Expiration := Unix seconds). */
  async setCheckItem(accountId: number, username: string, attribute: string, value: string): Promise<void> {
    await this.db
      .deleteFrom("radcheck")
      .where("account_id", "=", accountId)
      .where("username", "=", username)
      .where("attribute", "=", attribute)
      .execute();
    await this.db
      .insertInto("radcheck")
      .values({ account_id: accountId, username, attribute, op: ":=", value })
      .execute();
  }

  /** Puts the user in the group unless already there. */
  async joinGroup(accountId: number, groupname: string, username: string): Promise<void> {
    const existing = await this.db
      .selectFrom("radusergroup")
      .select("username")
      .where("account_id", "=", accountId)
      .where("groupname", "=", groupname)
      .where("username", "=", username)
      .executeTakeFirst();
    if (existing) return;
    await this.db
      .insertInto("radusergroup")
      .values({ account_id: accountId, groupname, username, priority: 1 })
      .execute();
  }

  /**
   * Leaves the groups among `managed` that are not in `wanted`, joins those in `wanted`: an identity
   * provider's mapping decides these groups alone, the user's other groups stay as they are.
   */
  async setManagedGroups(
    accountId: number,
    username: string,
    managed: readonly string[],
    wanted: readonly string[],
  ): Promise<void> {
    const leave = managed.filter((g) => !wanted.includes(g));
    if (leave.length > 0) {
      await this.db
        .deleteFrom("radusergroup")
        .where("account_id", "=", accountId)
        .where("username", "=", username)
        .where("groupname", "in", leave)
        .execute();
    }
    for (const groupname of wanted) await this.joinGroup(accountId, groupname, username);
  }

  /** The FreeRADIUS tables key users by name: a rename carries their rows along. */
  async renameRadiusRows(accountId: number, from: string, to: string): Promise<void> {
    await renameRadiusRows(this.db, "username", accountId, from, to);
  }

  /** The change's event, written with this repository's connection (the change's transaction). */
  /** Queues the disconnection of the user's open sessions, in this repository's transaction. */
  disconnectSessions(accountId: number, username: string, reason: string): Promise<void> {
    return queueDisconnect(this.db, this.dialect, accountId, { usernames: [username], reason });
  }

  async recordEvent(accountId: number, kind: EventKind, data: Record<string, unknown>): Promise<void> {
    await insertEvents(this.db, [{ accountId, kind, data }]);
  }

  async deleteRadiusRows(accountId: number, username: string): Promise<void> {
    await deleteRadiusRows(this.db, "username", accountId, username);
  }

  /** Queues CoA-Requests of what a login gets now to these users' open sessions (with the change). */
  pushToSessions(accountId: number, usernames: string[], reason: string): Promise<void> {
    return queueReauthorization(this.db, this.dialect, accountId, { usernames }, reason);
  }
}

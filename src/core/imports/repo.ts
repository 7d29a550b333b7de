// SQL of an import on Wisp's side: what the account already holds (to skip or leave unchanged), the
// rows an import writes in bulk, one chunk per transaction, and where each import stands.
import { type Insertable, type Kysely, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { RadacctTable, RadpostauthTable, Schema } from "../../db/schema.ts";
import type { StoredItem } from "../attributes/rules.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { NetworksRepo } from "../networks/repo.ts";
import type { Membership } from "./check.ts";

export type Phase = "users" | "radacct" | "radpostauth";

export interface Progress {
  cursor: string;
  finished: boolean;
  rows_done: number;
}

/** A user or group as the account holds it now: exact name and its rows in id order. */
export interface Existing {
  name: string;
  check: StoredItem[];
  reply: StoredItem[];
  groups: Membership[];
  /** Whether a users / groups row carries the name (rows can exist without one, written outside Wisp). */
  registered: boolean;
}

export interface NewUser {
  username: string;
  email: string;
  fullname: string;
  phone: string;
  check: StoredItem[];
  reply: StoredItem[];
  groups: Membership[];
}

/** Rows per INSERT: under SQLite's 32,766 bound parameters and PostgreSQL's 65,535 at radacct's width. */
const BATCH = 500;

function batches<T>(rows: readonly T[], size = BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

type ItemTable = "radcheck" | "radreply" | "radgroupcheck" | "radgroupreply";

export class ImportRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {}

  /** The chunk's audit row, with this repository's connection (the chunk's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn with a repository bound to one transaction (one chunk: all of it or none). */
  transaction<T>(fn: (repo: ImportRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new ImportRepo(trx, this.dialect)));
  }

  /** The networks' repository on this repository's connection (its transaction, in one). */
  networks(): NetworksRepo {
    return new NetworksRepo(this.db, this.dialect);
  }

  async progress(accountId: number, source: string, phase: Phase): Promise<Progress | undefined> {
    const row = await this.db
      .selectFrom("import_progress")
      .select(["cursor", "finished", "rows_done"])
      .where("account_id", "=", accountId)
      .where("source", "=", source)
      .where("phase", "=", phase)
      .executeTakeFirst();
    return row && { cursor: row.cursor, finished: row.finished === 1, rows_done: Number(row.rows_done) };
  }

  async saveProgress(accountId: number, source: string, phase: Phase, progress: Progress, at: string) {
    const values = {
      cursor: progress.cursor,
      finished: progress.finished ? 1 : 0,
      rows_done: progress.rows_done,
      updated: at,
    };
    await this.db
      .insertInto("import_progress")
      .values({ account_id: accountId, source, phase, ...values })
      .onConflict((oc) => oc.columns(["account_id", "source", "phase"]).doUpdateSet(values))
      .execute();
  }

  /** The account's users (or groups) whose lower-case name is one of `names`, with their rows. */
  async existing(accountId: number, kind: "user" | "group", names: string[]): Promise<Map<string, Existing>> {
    const found = new Map<string, Existing>();
    if (names.length === 0) return found;
    const lower = [...new Set(names.map((n) => n.toLowerCase()))];
    const registered =
      kind === "user"
        ? await this.db
            .selectFrom("users")
            .select("username as name")
            .where("account_id", "=", accountId)
            .where(sql`lower(username)`, "in", lower)
            .execute()
        : await this.db
            .selectFrom("groups")
            .select("name")
            .where("account_id", "=", accountId)
            .where(sql`lower(name)`, "in", lower)
            .execute();
    const entry = (name: string): Existing => {
      let e = found.get(name.toLowerCase());
      if (!e) {
        e = { name, check: [], reply: [], groups: [], registered: false };
        found.set(name.toLowerCase(), e);
      }
      return e;
    };
    for (const row of registered) entry(row.name).registered = true;
    const exact = [...new Set([...names, ...registered.map((r) => r.name)])];
    const [checkTable, replyTable] =
      kind === "user" ? (["radcheck", "radreply"] as const) : (["radgroupcheck", "radgroupreply"] as const);
    for (const [table, list] of [
      [checkTable, "check"],
      [replyTable, "reply"],
    ] as const) {
      for (const row of await this.items(accountId, table, exact)) entry(row.owner)[list].push(row.item);
    }
    if (kind === "user") {
      for (const row of await this.memberships(accountId, exact)) entry(row.username).groups.push(row);
    }
    return found;
  }

  /** Rows of an attribute table for exact owner names, by id, as { owner, item }. */
  private async items(accountId: number, table: ItemTable, names: string[]) {
    const rows =
      table === "radcheck" || table === "radreply"
        ? await this.db
            .selectFrom(table)
            .select(["username as owner", "attribute", "op", "value"])
            .where("account_id", "=", accountId)
            .where("username", "in", names)
            .orderBy("id")
            .execute()
        : await this.db
            .selectFrom(table)
            .select(["groupname as owner", "attribute", "op", "value"])
            .where("account_id", "=", accountId)
            .where("groupname", "in", names)
            .orderBy("id")
            .execute();
    // op is char(2): PostgreSQL pads "=" to "= ".
    return rows.map(({ owner, attribute, op, value }) => ({
      owner,
      item: { attribute, op: op.trim(), value },
    }));
  }

  private memberships(accountId: number, names: string[]) {
    return this.db
      .selectFrom("radusergroup")
      .select(["username", "groupname", "priority"])
      .where("account_id", "=", accountId)
      .where("username", "in", names)
      .execute();
  }

  async insertGroups(
    accountId: number,
    groups: { name: string; check: StoredItem[]; reply: StoredItem[] }[],
    at: string,
  ) {
    for (const batch of batches(groups)) {
      await this.db
        .insertInto("groups")
        .values(
          batch.map((g) => ({
            account_id: accountId,
            name: g.name,
            description: "",
            created: at,
            updated: at,
          })),
        )
        .execute();
    }
    await this.insertItems(
      accountId,
      "radgroupcheck",
      groups.flatMap((g) => g.check.map((i) => ({ owner: g.name, ...i }))),
    );
    await this.insertItems(
      accountId,
      "radgroupreply",
      groups.flatMap((g) => g.reply.map((i) => ({ owner: g.name, ...i }))),
    );
  }

  async insertUsers(accountId: number, users: NewUser[], at: string) {
    for (const batch of batches(users)) {
      await this.db
        .insertInto("users")
        .values(
          batch.map((u) => ({
            account_id: accountId,
            username: u.username,
            email: u.email,
            fullname: u.fullname,
            phone: u.phone,
            status: "enabled",
            created: at,
            updated: at,
          })),
        )
        .execute();
    }
    await this.insertItems(
      accountId,
      "radcheck",
      users.flatMap((u) => u.check.map((i) => ({ owner: u.username, ...i }))),
    );
    await this.insertItems(
      accountId,
      "radreply",
      users.flatMap((u) => u.reply.map((i) => ({ owner: u.username, ...i }))),
    );
    const memberships = users.flatMap((u) =>
      u.groups.map((g) => ({ account_id: accountId, username: u.username, ...g })),
    );
    for (const batch of batches(memberships))
      await this.db.insertInto("radusergroup").values(batch).execute();
  }

  /** Items in the order given: FreeRADIUS reads them by id, so the source's order is kept. */
  private async insertItems(accountId: number, table: ItemTable, items: (StoredItem & { owner: string })[]) {
    const column = table === "radcheck" || table === "radreply" ? "username" : "groupname";
    for (const batch of batches(items)) {
      const rows = batch.map((i) => ({
        account_id: accountId,
        [column]: i.owner,
        attribute: i.attribute,
        op: i.op,
        value: i.value,
      }));
      await this.db
        .insertInto(table)
        .values(rows as never)
        .execute();
    }
  }

  /** The account ids of the sessions whose key is one of `keys` (null: a row of no account). */
  async sessionKeys(keys: string[]): Promise<Map<string, number | null>> {
    const found = new Map<string, number | null>();
    for (const batch of batches(keys)) {
      const rows = await this.db
        .selectFrom("radacct")
        .select(["acctuniqueid", "account_id"])
        .where("acctuniqueid", "in", batch)
        .execute();
      for (const row of rows) found.set(row.acctuniqueid, row.account_id);
    }
    return found;
  }

  /** Ids of the account's users by exact name, for the history rows' user_id. */
  async userIds(accountId: number, names: string[]): Promise<Map<string, number>> {
    const ids = new Map<string, number>();
    for (const batch of batches([...new Set(names)])) {
      const rows = await this.db
        .selectFrom("users")
        .select(["id", "username"])
        .where("account_id", "=", accountId)
        .where("username", "in", batch)
        .execute();
      for (const row of rows) ids.set(row.username, row.id);
    }
    return ids;
  }

  /** The account's networks by address, for the history rows' network_id. */
  async networkIds(accountId: number): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom("nas")
      .select(["id", "nasname"])
      .where("account_id", "=", accountId)
      .execute();
    return new Map(rows.map((r) => [r.nasname, r.id]));
  }

  async insertSessions(rows: Insertable<RadacctTable>[]) {
    for (const batch of batches(rows)) await this.db.insertInto("radacct").values(batch).execute();
  }

  async insertAttempts(rows: Insertable<RadpostauthTable>[]) {
    for (const batch of batches(rows)) await this.db.insertInto("radpostauth").values(batch).execute();
  }
}

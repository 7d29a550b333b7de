// The policies table, the account's default outcome and time zone, and the facts a login's
// evaluation may need (the user's groups, a registered device, a pending portal sign-in). Every
// statement names the account.

import { type Insertable, type Kysely, type Selectable, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { prepared } from "../../db/prepared.ts";
import type { PoliciesTable, Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { queueReauthorization } from "../sessions/reauthorize.ts";

export type PolicyRow = Selectable<PoliciesTable>;
export type NewPolicyRow = Insertable<PoliciesTable>;

/** What every login reads: the account's zone, default outcome and list version, the network's zone. */
export interface HeadRow {
  account_tz: string | null;
  policy_default: string | null;
  network_tz: string | null;
  version: number;
}

/** One rule as stored. */
export interface RuleRow {
  id: number;
  name: string;
  position: number;
  conditions: string;
  outcome: string;
}

export class PoliciesRepo {
  private readonly headQuery;
  private readonly rulesQuery;
  private readonly groupsByUser;
  private readonly groupsByName;
  private readonly registered;
  private readonly portalMethod;

  constructor(
    readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {
    this.headQuery = prepared(
      db,
      (accountId: number, networkId: number) =>
        db
          .selectFrom("accounts as a")
          .where("a.id", "=", accountId)
          .select([
            "a.time_zone as account_tz",
            "a.policy_default",
            "a.policies_version as version",
            (eb) =>
              eb
                .selectFrom("nas")
                .select("nas.time_zone")
                .where("nas.id", "=", networkId)
                .whereRef("nas.account_id", "=", "a.id")
                .as("network_tz"),
          ]),
      2,
    );
    this.rulesQuery = prepared(
      db,
      (accountId: number) =>
        db
          .selectFrom("policies")
          .select(["id", "name", "position", "conditions", "outcome"])
          .where("account_id", "=", accountId)
          .orderBy("position"),
      1,
    );
    const groupIds = (accountId: number) =>
      db
        .selectFrom("radusergroup as r")
        .innerJoin("groups as g", (j) =>
          j.onRef("g.name", "=", "r.groupname").onRef("g.account_id", "=", "r.account_id"),
        )
        .select("g.id")
        .where("r.account_id", "=", accountId);
    this.groupsByName = prepared(
      db,
      (accountId: number, username: string) => groupIds(accountId).where("r.username", "=", username),
      2,
    );
    this.groupsByUser = prepared(
      db,
      (accountId: number, userId: number) =>
        groupIds(accountId).where("r.username", "=", (eb) =>
          eb
            .selectFrom("users")
            .select("users.username")
            .where("users.id", "=", userId)
            .where("users.account_id", "=", accountId),
        ),
      2,
    );
    this.registered = prepared(
      db,
      (accountId: number, mac: string, now: string) =>
        db
          .selectFrom("devices")
          .select("id")
          .where("account_id", "=", accountId)
          .where("mac", "=", mac)
          .where("status", "=", "enabled")
          .where("kind", "=", "registered")
          .where((eb) => eb.or([eb("expires", "is", null), eb("expires", ">", now)])),
      3,
    );
    // The sign-in src/core/aaa/recording.ts would link the attempt to: same account and username,
    // not expired, the same device when both name one; the newest.
    this.portalMethod = prepared(
      db,
      (accountId: number, username: string, mac: string, now: number) =>
        db
          .selectFrom("portal_logins")
          .select("method")
          .where("account_id", "=", accountId)
          .where("username", "=", username)
          .where("expires", ">=", now)
          .where((eb) => eb.or([eb("client_mac", "is", null), eb("client_mac", "=", mac)]))
          .orderBy("id", "desc")
          .limit(1),
      4,
    );
  }

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: PoliciesRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new PoliciesRepo(trx, this.dialect)));
  }

  async head(accountId: number, networkId: number): Promise<HeadRow | undefined> {
    return (await this.headQuery(accountId, networkId))[0] as HeadRow | undefined;
  }

  /** The whole list in one statement: a reorder is seen whole or not at all. */
  rules(accountId: number): Promise<RuleRow[]> {
    return this.rulesQuery(accountId) as Promise<RuleRow[]>;
  }

  /** In every change's transaction: logins reload the list. */
  async bumpVersion(accountId: number): Promise<void> {
    await this.db
      .updateTable("accounts")
      .set((eb) => ({ policies_version: eb("policies_version", "+", 1) }))
      .where("id", "=", accountId)
      .execute();
    // What the rules give may have changed for any open session of the account: CoA pushes it.
    await queueReauthorization(this.db, this.dialect, accountId, { account: true }, "policies changed");
  }

  async groupIds(accountId: number, who: { userId: number | null; username: string }): Promise<number[]> {
    const rows =
      who.userId === null
        ? await this.groupsByName(accountId, who.username)
        : await this.groupsByUser(accountId, who.userId);
    return rows.map((r) => r.id);
  }

  async deviceRegistered(accountId: number, mac: string, nowIso: string): Promise<boolean> {
    return (await this.registered(accountId, mac, nowIso)).length > 0;
  }

  async pendingPortalMethod(accountId: number, username: string, mac: string | null, now: number) {
    return (await this.portalMethod(accountId, username, mac ?? "", now))[0]?.method ?? null;
  }

  /**
   * Serialises the account's policy changes (PostgreSQL: the account row locked until the end of the
   * transaction; SQLite writes are serialised already), so positions stay 1..n.
   */
  async lockAccount(accountId: number): Promise<void> {
    if (this.dialect === "postgres") {
      await sql`select id from accounts where id = ${accountId} for update`.execute(this.db);
    }
  }

  list(accountId: number): Promise<PolicyRow[]> {
    return this.db
      .selectFrom("policies")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("position")
      .execute();
  }

  find(accountId: number, id: number): Promise<PolicyRow | undefined> {
    return this.db
      .selectFrom("policies")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  insert(row: NewPolicyRow): Promise<PolicyRow> {
    return this.db.insertInto("policies").values(row).returningAll().executeTakeFirstOrThrow();
  }

  async update(accountId: number, id: number, changes: Partial<NewPolicyRow>): Promise<void> {
    await this.db
      .updateTable("policies")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.db.deleteFrom("policies").where("account_id", "=", accountId).where("id", "=", id).execute();
  }

  /** Writes positions 1..n in the order of `ids` (only the rows whose position changes). */
  async renumber(accountId: number, ids: readonly number[]): Promise<void> {
    for (const [i, id] of ids.entries()) {
      await this.db
        .updateTable("policies")
        .set({ position: i + 1 })
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .where("position", "!=", i + 1)
        .execute();
    }
  }

  async account(accountId: number) {
    return this.db
      .selectFrom("accounts")
      .select(["time_zone", "policy_default"])
      .where("id", "=", accountId)
      .executeTakeFirst();
  }

  async setDefault(accountId: number, outcome: string | null): Promise<void> {
    await this.db
      .updateTable("accounts")
      .set({ policy_default: outcome })
      .where("id", "=", accountId)
      .execute();
  }

  async setTimeZone(accountId: number, zone: string | null): Promise<void> {
    await this.db.updateTable("accounts").set({ time_zone: zone }).where("id", "=", accountId).execute();
  }

  async networkIdsOf(accountId: number, ids: readonly number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom("nas")
      .select("id")
      .where("account_id", "=", accountId)
      .where("id", "in", [...ids])
      .execute();
    return rows.map((r) => r.id);
  }

  async groupIdsOf(accountId: number, ids: readonly number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom("groups")
      .select("id")
      .where("account_id", "=", accountId)
      .where("id", "in", [...ids])
      .execute();
    return rows.map((r) => r.id);
  }

  /** The network as a login sees it (its interim interval, its vendor for plans). */
  network(accountId: number, networkId: number) {
    return this.db
      .selectFrom("nas")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", networkId)
      .executeTakeFirst();
  }
}

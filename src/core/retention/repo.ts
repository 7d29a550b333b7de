// The retention sweep's SQL. Each table is read in keyset order through an index, a batch of ids at
// a time, within one scope (an account, or a job status), and the ids found are deleted in one short
// transaction; the delete checks the rule again, so a row that changed in between (a session
// reopened, a delivery resent) stays. Every statement on an account's table names the account.
// Times as stored: radpostauth.authdate is 'YYYY-MM-DD HH:MM:SS' text and radacct times Unix seconds
// on SQLite, timestamptz on PostgreSQL; events.created and jobs.updated ISO 8601 text on both.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { isoNow } from "../shared/time.ts";
import { type WebhookDb, withWebhookTables } from "../webhooks/tables.ts";

/** An account's rows, or those of no account (radpostauth/radacct of unknown clients). */
export type AccountScope = number | null;

/** A batch of ids to delete, and where the next batch starts (undefined: the scan is done). */
export interface Found<K> {
  ids: number[];
  next: K | undefined;
}

/** radpostauth: (authdate, id); radacct: (acctstoptime, radacctid); jobs: (run_at, id). */
export type TimeKey = { at: unknown; id: number };

export interface EventsPruned {
  events: number;
  webhook_deliveries: number;
  webhook_attempts: number;
}

export class RetentionRepo {
  private readonly w: WebhookDb;

  constructor(
    readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {
    this.w = withWebhookTables(db);
  }

  /** Every account, then the rows of no account. */
  async accountScopes(): Promise<AccountScope[]> {
    const rows = await this.db.selectFrom("accounts").select("id").orderBy("id").execute();
    return [...rows.map((r) => r.id), null];
  }

  /** radpostauth.authdate as stored. */
  private authTime(at: Date): string | Date {
    return this.dialect === "sqlite" ? at.toISOString().slice(0, 19).replace("T", " ") : at;
  }

  /** radacct times as stored. */
  private sessionTime(at: Date): number | Date {
    return this.dialect === "sqlite" ? Math.floor(at.getTime() / 1000) : at;
  }

  async oldAuth(scope: AccountScope, before: Date, after: TimeKey | undefined, limit: number) {
    const cutoff = this.authTime(before);
    let query = this.db
      .selectFrom("radpostauth")
      .select(["id", "authdate"])
      .where("account_id", scope === null ? "is" : "=", scope)
      .where("authdate", "<", cutoff);
    if (after) {
      const at = after.at as string | Date;
      query = query.where((eb) =>
        eb.or([eb("authdate", ">", at), eb.and([eb("authdate", "=", at), eb("id", ">", after.id)])]),
      );
    }
    const rows = await query.orderBy("authdate").orderBy("id").limit(limit).execute();
    return found(rows, limit, (r) => ({ at: r.authdate, id: Number(r.id) }));
  }

  async deleteAuth(scope: AccountScope, ids: readonly number[]): Promise<number> {
    return this.deleteListed("radpostauth", "id", scope, ids, sql`true`);
  }

  /**
   * Deletes listed ids of an account's rows that still meet `rule`. On SQLite the planner, left to
   * choose, may walk the account's (account_id, ...) index testing every row against the list (a
   * batch then costs a scan of the account); NOT INDEXED leaves it the rowid lookups, one per id.
   */
  private async deleteListed(
    table: "radpostauth" | "radacct",
    key: "id" | "radacctid",
    scope: AccountScope,
    ids: readonly number[],
    rule: ReturnType<typeof sql>,
  ): Promise<number> {
    if (ids.length === 0) return 0;
    const from = sql.raw(this.dialect === "sqlite" ? `${table} not indexed` : table);
    const account = scope === null ? sql`account_id is null` : sql`account_id = ${scope}`;
    const result = await sql`delete from ${from} where ${sql.ref(key)} in (${sql.join(ids)})
      and ${account} and ${rule}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  /** Closed sessions that stopped before the cutoff. */
  async oldSessions(scope: AccountScope, before: Date, after: TimeKey | undefined, limit: number) {
    const cutoff = this.sessionTime(before);
    let query = this.db
      .selectFrom("radacct")
      .select(["radacctid", "acctstoptime"])
      .where("account_id", scope === null ? "is" : "=", scope)
      .where("acctstoptime", "is not", null)
      .where("acctstoptime", "<", cutoff);
    if (after) {
      const at = after.at as number | Date;
      query = query.where((eb) =>
        eb.or([
          eb("acctstoptime", ">", at),
          eb.and([eb("acctstoptime", "=", at), eb("radacctid", ">", after.id)]),
        ]),
      );
    }
    const rows = await query.orderBy("acctstoptime").orderBy("radacctid").limit(limit).execute();
    return found(
      rows.map((r) => ({ id: Number(r.radacctid), at: r.acctstoptime })),
      limit,
      (r) => r,
    );
  }

  /** Deletes the sessions among `ids` still closed before the cutoff (never one reopened since). */
  async deleteSessions(scope: AccountScope, ids: readonly number[], before: Date): Promise<number> {
    const stopped = sql`acctstoptime is not null and acctstoptime < ${this.sessionTime(before)}`;
    return this.deleteListed("radacct", "radacctid", scope, ids, stopped);
  }

  /**
   * Events of the account created before the cutoff that the webhook dispatcher has passed (at or
   * before its cursor) and that have no pending delivery. Read by id through (account_id, id):
   * events are written in time order, so the scan stops at the first one at or after the cutoff.
   */
  async oldEvents(
    accountId: number,
    before: Date,
    after: number | undefined,
    limit: number,
  ): Promise<Found<number>> {
    const cutoff = isoNow(before);
    const rows = await sql<{ id: number; created: string; txid: number }>`select id, created,
        ${sql.raw(this.dialect === "postgres" ? "txid" : "0 as txid")}
      from events where account_id = ${accountId} and id > ${after ?? 0}
      order by id limit ${limit}`.execute(this.db);
    const old: { id: number; txid: number }[] = [];
    for (const row of rows.rows) {
      if (row.created >= cutoff) break;
      old.push({ id: Number(row.id), txid: Number(row.txid) });
    }
    const next = old.length === limit ? old[old.length - 1]!.id : undefined;
    if (old.length === 0) return { ids: [], next };
    const cursor = await this.w
      .selectFrom("webhook_cursors")
      .select(["last_txid", "last_event_id"])
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    // Past the cursor: not fanned out to deliveries yet (see webhooks/outbox.ts for the order).
    const dispatched = old.filter((e) => {
      if (!cursor) return true;
      const txid = Number(cursor.last_txid);
      const id = Number(cursor.last_event_id);
      return this.dialect === "postgres" ? e.txid < txid || (e.txid === txid && e.id <= id) : e.id <= id;
    });
    const pending = await this.pendingEvents(
      this.w,
      accountId,
      dispatched.map((e) => e.id),
    );
    return { ids: dispatched.map((e) => e.id).filter((id) => !pending.has(id)), next };
  }

  private async pendingEvents(w: WebhookDb, accountId: number, ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await w
      .selectFrom("webhook_deliveries")
      .select("event_id")
      .distinct()
      .where("account_id", "=", accountId)
      .where("event_id", "in", ids)
      .where("status", "=", "pending")
      .execute();
    return new Set(rows.map((r) => Number(r.event_id)));
  }

  /**
   * Deletes events with their deliveries and those deliveries' attempts, in one transaction: a
   * process killed half-way leaves all of them or none. An event whose delivery turned pending
   * since (a resend) stays, with its deliveries.
   */
  async deleteEvents(accountId: number, ids: readonly number[]): Promise<EventsPruned> {
    return this.db.transaction().execute(async (trx) => {
      const w = withWebhookTables(trx);
      const pending = await this.pendingEvents(w, accountId, ids);
      const doomed = ids.filter((id) => !pending.has(id));
      if (doomed.length === 0) return { events: 0, webhook_deliveries: 0, webhook_attempts: 0 };
      const deliveries = w
        .selectFrom("webhook_deliveries")
        .select("id")
        .where("account_id", "=", accountId)
        .where("event_id", "in", doomed);
      const attempts = await w
        .deleteFrom("webhook_attempts")
        .where("account_id", "=", accountId)
        .where("delivery_id", "in", deliveries)
        .executeTakeFirst();
      const gone = await w
        .deleteFrom("webhook_deliveries")
        .where("account_id", "=", accountId)
        .where("event_id", "in", doomed)
        .executeTakeFirst();
      const events = await trx
        .deleteFrom("events")
        .where("account_id", "=", accountId)
        .where("id", "in", doomed)
        .executeTakeFirst();
      return {
        events: Number(events.numDeletedRows),
        webhook_deliveries: Number(gone.numDeletedRows),
        webhook_attempts: Number(attempts.numDeletedRows),
      };
    });
  }

  /** Jobs of a final status ("done" or "failed") that finished before the cutoff. */
  async oldJobs(status: string, before: Date, after: TimeKey | undefined, limit: number) {
    const ms = before.getTime();
    // A job finishes at or after it was due: run_at < cutoff narrows the scan through
    // (status, run_at), and updated (when it finished) decides.
    let query = this.db
      .selectFrom("jobs")
      .select(["id", "run_at", "updated"])
      .where("status", "=", status)
      .where("run_at", "<", ms);
    if (after) {
      const at = Number(after.at);
      query = query.where((eb) =>
        eb.or([eb("run_at", ">", at), eb.and([eb("run_at", "=", at), eb("id", ">", after.id)])]),
      );
    }
    const rows = await query.orderBy("run_at").orderBy("id").limit(limit).execute();
    const cutoff = isoNow(before);
    const scanned = found(rows, limit, (r) => ({ at: Number(r.run_at), id: Number(r.id) }));
    return { ids: rows.filter((r) => r.updated < cutoff).map((r) => Number(r.id)), next: scanned.next };
  }

  /** Audit rows of an account made before the cutoff, through (account_id, created). */
  async oldAudit(scope: number, before: Date, after: TimeKey | undefined, limit: number) {
    const cutoff = isoNow(before);
    let query = this.db
      .selectFrom("audit_log")
      .select(["id", "created"])
      .where("account_id", "=", scope)
      .where("created", "<", cutoff);
    if (after) {
      const at = String(after.at);
      query = query.where((eb) =>
        eb.or([eb("created", ">", at), eb.and([eb("created", "=", at), eb("id", ">", after.id)])]),
      );
    }
    const rows = await query.orderBy("created").orderBy("id").limit(limit).execute();
    return found(rows, limit, (r) => ({ at: r.created, id: Number(r.id) }));
  }

  async deleteAudit(scope: number, ids: readonly number[], before: Date): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.db
      .deleteFrom("audit_log")
      .where("account_id", "=", scope)
      .where("id", "in", ids)
      .where("created", "<", isoNow(before))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async deleteJobs(ids: readonly number[]): Promise<number> {
    const result = await this.db
      .deleteFrom("jobs")
      .where("id", "in", ids)
      .where("status", "in", ["done", "failed"])
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** The ids of a keyset batch, and the key after its last row when the batch was full. */
function found<R extends { id: number | bigint }>(
  rows: R[],
  limit: number,
  key: (row: R) => TimeKey,
): Found<TimeKey> {
  const last = rows[rows.length - 1];
  return { ids: rows.map((r) => Number(r.id)), next: rows.length === limit && last ? key(last) : undefined };
}

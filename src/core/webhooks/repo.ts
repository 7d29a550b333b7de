// SQL of webhook endpoints, deliveries and attempts. Every query is scoped by account_id.

import { type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import {
  type WebhookAttemptsTable,
  type WebhookDb,
  type WebhookDeliveriesTable,
  type WebhookEndpointsTable,
  withWebhookTables,
} from "./tables.ts";

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type EndpointListRow = EndpointRow & { account_name: string };
export type EndpointChanges = Omit<Updateable<WebhookEndpointsTable>, "id" | "account_id" | "created">;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type DeliveryListRow = DeliveryRow & { kind: string };
export type AttemptRow = Selectable<WebhookAttemptsTable>;
export type NewDeliveryRow = Omit<DeliveryRow, "id">;
export type NewAttemptRow = Omit<AttemptRow, "id">;

export interface EventRow {
  id: number;
  account_id: number;
  kind: string;
  data: string;
  created: string;
}

/** What one attempt changed, written together with the attempt. */
export interface AttemptOutcome {
  delivery: Pick<DeliveryRow, "status" | "tries" | "attempts" | "next_at" | "last_status" | "last_error">;
  /** Set when the endpoint is to be disabled (HTTP 410). */
  disableReason?: string;
}

/** Chunks keep multi-row inserts under SQLite's bound-parameter limit. */
const CHUNK = 500;

export class WebhooksRepo {
  private readonly w: WebhookDb;

  constructor(
    readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {
    this.w = withWebhookTables(db);
  }

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: WebhooksRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new WebhooksRepo(trx, this.dialect)));
  }

  // Endpoints

  insertEndpoint(row: Omit<EndpointRow, "id">): Promise<EndpointRow> {
    return this.w.insertInto("webhook_endpoints").values(row).returningAll().executeTakeFirstOrThrow();
  }

  endpoint(accountId: number, id: number): Promise<EndpointRow | undefined> {
    return this.w
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** Operators' listing (CLI): every account's endpoints unless one is given, or one by id. */
  listWithAccounts(filter: { accountId?: number | undefined; id?: number }): Promise<EndpointListRow[]> {
    let query = this.w
      .selectFrom("webhook_endpoints")
      .innerJoin("accounts", "accounts.id", "webhook_endpoints.account_id")
      .selectAll("webhook_endpoints")
      .select("accounts.name as account_name")
      .orderBy("webhook_endpoints.id");
    if (filter.accountId !== undefined)
      query = query.where("webhook_endpoints.account_id", "=", filter.accountId);
    if (filter.id !== undefined) query = query.where("webhook_endpoints.id", "=", filter.id);
    return query.execute();
  }

  list(accountId: number): Promise<EndpointRow[]> {
    return this.w
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("id")
      .execute();
  }

  updateEndpoint(accountId: number, id: number, changes: EndpointChanges): Promise<EndpointRow | undefined> {
    return this.w
      .updateTable("webhook_endpoints")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  /** Deletes the endpoint with its deliveries and their attempts. */
  async deleteEndpoint(accountId: number, id: number): Promise<void> {
    const deliveries = this.w
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("account_id", "=", accountId)
      .where("endpoint_id", "=", id);
    await this.w
      .deleteFrom("webhook_attempts")
      .where("account_id", "=", accountId)
      .where("delivery_id", "in", deliveries)
      .execute();
    await this.w
      .deleteFrom("webhook_deliveries")
      .where("account_id", "=", accountId)
      .where("endpoint_id", "=", id)
      .execute();
    await this.w
      .deleteFrom("webhook_endpoints")
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  async countEndpoints(accountId: number): Promise<number> {
    const row = await this.w
      .selectFrom("webhook_endpoints")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Takes the endpoint's sending lease when it is free or expired, making `jobId` its driver; else
   * says when the lease ends.
   */
  async lockEndpoint(
    accountId: number,
    id: number,
    lock: { token: string; jobId: number; leaseMs: number },
  ): Promise<{ acquired: boolean; until: number | null }> {
    const now = Date.now();
    const { token, jobId, leaseMs } = lock;
    const result = await this.w
      .updateTable("webhook_endpoints")
      .set({ lock_by: token, lock_until: now + leaseMs, driver_job: jobId })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where((eb) => eb.or([eb("lock_until", "is", null), eb("lock_until", "<", now)]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) return { acquired: true, until: now + leaseMs };
    const row = await this.w
      .selectFrom("webhook_endpoints")
      .select("lock_until")
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
    return { acquired: false, until: row?.lock_until === undefined ? null : Number(row.lock_until) };
  }

  /** Extends a lease this token holds; false when it was lost. */
  async renewLock(accountId: number, id: number, token: string, leaseMs: number): Promise<boolean> {
    const result = await this.w
      .updateTable("webhook_endpoints")
      .set({ lock_until: Date.now() + leaseMs })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("lock_by", "=", token)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async unlock(accountId: number, id: number, token: string): Promise<void> {
    await this.w
      .updateTable("webhook_endpoints")
      .set({ lock_by: null, lock_until: null })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("lock_by", "=", token)
      .execute();
  }

  // Events, deliveries, attempts

  event(accountId: number, id: number): Promise<EventRow | undefined> {
    return this.db
      .selectFrom("events")
      .select(["id", "account_id", "kind", "data", "created"])
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** Writes an event outside insertEvents' kinds (webhook.test); returns its id. */
  async insertEvent(accountId: number, kind: string, data: unknown, created: string): Promise<number> {
    const row = await this.db
      .insertInto("events")
      .values({ account_id: accountId, kind, data: JSON.stringify(data), created })
      .returning("id")
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async insertDeliveries(rows: readonly NewDeliveryRow[]): Promise<Pick<DeliveryRow, "id" | "account_id">[]> {
    const out: Pick<DeliveryRow, "id" | "account_id">[] = [];
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      out.push(
        ...(await this.w
          .insertInto("webhook_deliveries")
          .values(chunk)
          .returning(["id", "account_id"])
          .execute()),
      );
    }
    return out;
  }

  delivery(accountId: number, id: number): Promise<DeliveryRow | undefined> {
    return this.w
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** The account a delivery belongs to (operators name deliveries by id alone). */
  async deliveryAccount(id: number): Promise<number | undefined> {
    const row = await this.w
      .selectFrom("webhook_deliveries")
      .select("account_id")
      .where("id", "=", id)
      .executeTakeFirst();
    return row?.account_id;
  }

  /** Newest first. */
  listDeliveries(accountId: number, endpointId: number, limit: number): Promise<DeliveryListRow[]> {
    return this.w
      .selectFrom("webhook_deliveries")
      .innerJoin("events", (join) =>
        join
          .onRef("events.id", "=", "webhook_deliveries.event_id")
          .onRef("events.account_id", "=", "webhook_deliveries.account_id"),
      )
      .selectAll("webhook_deliveries")
      .select("events.kind")
      .where("webhook_deliveries.account_id", "=", accountId)
      .where("webhook_deliveries.endpoint_id", "=", endpointId)
      .orderBy("webhook_deliveries.id", "desc")
      .limit(limit)
      .execute();
  }

  async attemptsOf(accountId: number, deliveryIds: readonly number[]): Promise<AttemptRow[]> {
    if (deliveryIds.length === 0) return [];
    return this.w
      .selectFrom("webhook_attempts")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("delivery_id", "in", deliveryIds)
      .orderBy("id")
      .execute();
  }

  /** Pending deliveries of an endpoint that are due, in outbox order. */
  dueDeliveries(accountId: number, endpointId: number, now: number, limit: number): Promise<DeliveryRow[]> {
    return this.w
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("endpoint_id", "=", endpointId)
      .where("status", "=", "pending")
      .where("next_at", "<=", now)
      .orderBy("id")
      .limit(limit)
      .execute();
  }

  /**
   * Logs an attempt and applies its outcome, unless the delivery moved on meanwhile (another
   * attempt was recorded, or it was resent). In the same transaction, extends the endpoint lease
   * of `lock`; returns whether it is still held.
   */
  async recordAttempt(
    before: Pick<DeliveryRow, "id" | "account_id" | "endpoint_id" | "attempts">,
    attempt: NewAttemptRow,
    outcome: AttemptOutcome,
    lock: { token: string; leaseMs: number },
    now: string,
  ): Promise<{ recorded: boolean; locked: boolean }> {
    return this.transaction(async (repo) => {
      // Not waiting for PostgreSQL's disk flush halves the sender's time per delivery. Should the
      // database server itself crash, the newest attempts may be lost with it: their deliveries
      // are then sent again with the same webhook-id (at least once, as promised).
      if (this.dialect === "postgres") await sql`set local synchronous_commit = off`.execute(repo.db);
      const result = await repo.w
        .updateTable("webhook_deliveries")
        .set({ ...outcome.delivery, updated: now })
        .where("account_id", "=", before.account_id)
        .where("id", "=", before.id)
        .where("status", "=", "pending")
        .where("attempts", "=", before.attempts)
        .executeTakeFirst();
      const recorded = Number(result.numUpdatedRows) > 0;
      if (recorded) {
        await repo.w.insertInto("webhook_attempts").values(attempt).execute();
        if (outcome.disableReason !== undefined) {
          await repo.w
            .updateTable("webhook_endpoints")
            .set({ enabled: 0, disabled_reason: outcome.disableReason, updated: now })
            .where("account_id", "=", before.account_id)
            .where("id", "=", before.endpoint_id)
            .execute();
        }
      }
      const locked = await repo.renewLock(before.account_id, before.endpoint_id, lock.token, lock.leaseMs);
      return { recorded, locked };
    });
  }

  /** When the endpoint's next pending delivery is due (epoch ms); undefined when none is pending. */
  async soonestPending(accountId: number, endpointId: number): Promise<number | undefined> {
    const row = await this.w
      .selectFrom("webhook_deliveries")
      .select((eb) => eb.fn.min("next_at").as("next_at"))
      .where("account_id", "=", accountId)
      .where("endpoint_id", "=", endpointId)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return row?.next_at === null || row?.next_at === undefined ? undefined : Number(row.next_at);
  }

  /** Whether the endpoint has a pending delivery that is due. */
  async hasDue(accountId: number, endpointId: number, now: number): Promise<boolean> {
    return (await this.dueDeliveries(accountId, endpointId, now, 1)).length > 0;
  }

  /** Ends pending deliveries without an attempt (their endpoint is disabled). */
  async failPending(accountId: number, ids: readonly number[], error: string, now: string): Promise<void> {
    if (ids.length === 0) return;
    await this.w
      .updateTable("webhook_deliveries")
      .set({ status: "failed", last_error: error, updated: now })
      .where("account_id", "=", accountId)
      .where("id", "in", ids)
      .where("status", "=", "pending")
      .execute();
  }

  /** Starts a new attempt sequence: pending, due now, the retry schedule from its start. */
  restartDelivery(
    accountId: number,
    id: number,
    now: number,
    updated: string,
  ): Promise<DeliveryRow | undefined> {
    return this.w
      .updateTable("webhook_deliveries")
      .set({ status: "pending", tries: 0, next_at: now, updated })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  /** Whether any account has webhook endpoints (a dispatcher cursor). */
  async anyCursor(): Promise<boolean> {
    const row = await this.w.selectFrom("webhook_cursors").select("account_id").limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Starts the account's dispatch cursor at "now": events written before the first endpoint are
   * not delivered. On PostgreSQL "now" is the snapshot's xmax: every transaction that had an id
   * by now is before, every later one after (see outbox.ts). The snapshot's xmin would not do:
   * a transaction still running elsewhere holds it down, and events committed before the
   * endpoint existed, by transactions above it, would then count as new.
   */
  async ensureCursor(accountId: number): Promise<void> {
    const exists = await this.w
      .selectFrom("webhook_cursors")
      .select("account_id")
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    if (exists) return;
    if (this.dialect === "postgres") {
      await sql`insert into webhook_cursors (account_id, last_txid, last_event_id)
        values (${accountId}, pg_snapshot_xmax(pg_current_snapshot())::text::bigint - 1,
          ${Number.MAX_SAFE_INTEGER})
        on conflict (account_id) do nothing`.execute(this.db);
      return;
    }
    const max = await this.db
      .selectFrom("events")
      .select((eb) => eb.fn.max("id").as("id"))
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    await this.w
      .insertInto("webhook_cursors")
      .values({ account_id: accountId, last_txid: 0, last_event_id: Number(max?.id ?? 0) })
      .onConflict((oc) => oc.column("account_id").doNothing())
      .execute();
  }

  async deleteCursor(accountId: number): Promise<void> {
    await this.w.deleteFrom("webhook_cursors").where("account_id", "=", accountId).execute();
  }
}

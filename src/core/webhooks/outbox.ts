// The dispatcher's SQL: reads the events written since the last pass, per account with webhook
// endpoints, and moves each account's cursor in the transaction that creates the deliveries.
//
// On PostgreSQL an event id is taken from a sequence before its transaction commits, so a lower id
// can become visible after a higher one. An id cursor would skip it. Each event therefore carries
// the id of the transaction that wrote it (events.txid, migration 006); a pass only takes events
// whose transaction is older than every transaction still running (the snapshot's xmin), in
// (txid, id) order, and that order is final. SQLite commits one writer at a time: ids suffice.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { type WebhookDb, withWebhookTables } from "./tables.ts";

export interface OutboxEvent {
  id: number;
  account_id: number;
  kind: string;
  txid: number;
}

export interface EndpointSubscription {
  id: number;
  account_id: number;
  event_kinds: string;
}

export class OutboxRepo {
  private readonly w: WebhookDb;

  constructor(
    readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {
    this.w = withWebhookTables(db);
  }

  transaction<T>(fn: (repo: OutboxRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new OutboxRepo(trx, this.dialect)));
  }

  /**
   * The accounts with endpoints and new events that this pass handles (an index probe each). On
   * PostgreSQL their cursor rows stay locked until commit and are skipped by other dispatchers
   * meanwhile, so two workers never fan out the same event.
   */
  async lockCursors(limit: number): Promise<number[]> {
    const query =
      this.dialect === "postgres"
        ? sql<{ account_id: number }>`select c.account_id from webhook_cursors c
            where exists (select 1 from events e where e.account_id = c.account_id
              and (e.txid, e.id) > (c.last_txid, c.last_event_id)
              and e.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint)
            order by c.account_id limit ${limit} for update of c skip locked`
        : sql<{ account_id: number }>`select c.account_id from webhook_cursors c
            where exists (select 1 from events e where e.account_id = c.account_id and e.id > c.last_event_id)
            order by c.account_id limit ${limit}`;
    return (await query.execute(this.db)).rows.map((r) => r.account_id);
  }

  /** The next events after each account's cursor, in outbox order. */
  async newEvents(accountIds: readonly number[], limit: number): Promise<OutboxEvent[]> {
    if (accountIds.length === 0) return [];
    const accounts = sql.join(accountIds);
    const query =
      this.dialect === "postgres"
        ? sql<OutboxEvent>`select e.id, e.account_id, e.kind, e.txid from events e
            join webhook_cursors c on c.account_id = e.account_id
            where c.account_id in (${accounts})
              and (e.txid, e.id) > (c.last_txid, c.last_event_id)
              and e.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
            order by e.txid, e.id limit ${limit}`
        : sql<OutboxEvent>`select e.id, e.account_id, e.kind, 0 as txid from events e
            join webhook_cursors c on c.account_id = e.account_id
            where c.account_id in (${accounts}) and e.id > c.last_event_id
            order by e.id limit ${limit}`;
    const rows = (await query.execute(this.db)).rows;
    return rows.map((r) => ({ ...r, id: Number(r.id), txid: Number(r.txid) }));
  }

  enabledEndpoints(accountIds: readonly number[]): Promise<EndpointSubscription[]> {
    if (accountIds.length === 0) return Promise.resolve([]);
    return this.w
      .selectFrom("webhook_endpoints")
      .select(["id", "account_id", "event_kinds"])
      .where("account_id", "in", accountIds)
      .where("enabled", "=", 1)
      .orderBy("id")
      .execute();
  }

  async advance(accountId: number, txid: number, eventId: number): Promise<void> {
    await this.w
      .updateTable("webhook_cursors")
      .set({ last_txid: txid, last_event_id: eventId })
      .where("account_id", "=", accountId)
      .execute();
  }
}

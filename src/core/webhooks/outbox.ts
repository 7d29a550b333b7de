// The dispatcher's SQL: reads the events written since the last pass, per account with webhook
// endpoints, and moves each account's cursor in the transaction that creates the deliveries.
//
// On PostgreSQL an event id is taken from a sequence before its transaction commits, so a lower id
// can become visible after a higher one. An id cursor would skip it. Each event therefore carries
// the id of the transaction that wrote it (events.txid, migration 006); a pass only takes events
// whose transaction is older than every transaction still running in this database (HORIZON), in
// (txid, id) order, and that order is final. SQLite commits one writer at a time: ids suffice.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { type WebhookDb, withWebhookTables } from "./tables.ts";

/**
 * The txid below which no transaction that can still write this database's events is running.
 * The snapshot's xmin will not do: it counts the transactions of every database on the server, so
 * one left open in another database would stop every delivery. Instead: the oldest transaction
 * the snapshot sees running (its xip list; xmax when none), leaving out those pg_stat_activity
 * shows in a backend of another database. A transaction is left out only when positively seen
 * elsewhere: one that ended between the snapshot and the read of pg_stat_activity is still
 * waited for (its events, committed after the snapshot, are not visible to this statement). A
 * backend's database and backend_xid are readable by every role, superuser or not. backend_xid
 * is the 32-bit xid; the snapshot's are 64-bit (epoch above), and those running are unique in
 * their low 32 bits. pg_current_snapshot() is the statement's snapshot, the one the events are
 * read with.
 */
const HORIZON = sql<string>`(select coalesce(
    (select min(x::text::bigint) from pg_snapshot_xip(pg_current_snapshot()) x
      where not exists (select 1 from pg_stat_activity a
        where a.backend_xid::text::bigint = x::text::bigint % 4294967296
          and a.datname <> current_database())),
    pg_snapshot_xmax(pg_current_snapshot())::text::bigint))`;

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
              and e.txid < ${HORIZON})
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
              and e.txid < ${HORIZON}
            order by e.txid, e.id limit ${limit}`
        : sql<OutboxEvent>`select e.id, e.account_id, e.kind, 0 as txid from events e
            join webhook_cursors c on c.account_id = e.account_id
            where c.account_id in (${accounts}) and e.id > c.last_event_id
            order by e.id limit ${limit}`;
    const rows = (await query.execute(this.db)).rows;
    return rows.map((r) => ({ ...r, id: Number(r.id), txid: Number(r.txid) }));
  }

  /** HORIZON now (PostgreSQL): events of lower txid are all committed or never will be. */
  async horizon(): Promise<number> {
    const { rows } = await sql<{ horizon: string }>`select ${HORIZON} as horizon`.execute(this.db);
    return Number(rows[0]!.horizon);
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

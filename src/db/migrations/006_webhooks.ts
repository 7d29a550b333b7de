// Webhooks: endpoints (secret encrypted), one delivery per event per subscribed endpoint, every
// attempt, and the dispatcher's cursor per account. On PostgreSQL each event also records the id
// of the transaction that wrote it, so the dispatcher can wait for transactions still in flight
// (sequence values are handed out before commit, so ids alone can commit out of order).
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await withId(db.schema.createTable("webhook_endpoints"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("url", "varchar(2048)", (c) => c.notNull())
    /** JSON array of event kinds; ["*"] = all. */
    .addColumn("event_kinds", "text", (c) => c.notNull())
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("disabled_reason", "varchar(300)")
    /** AES-256-GCM ciphertext of the whsec_ secret (see src/core/webhooks/crypto.ts). */
    .addColumn("secret", "text", (c) => c.notNull())
    /** The per-endpoint sending lease: one delivery in flight per endpoint. */
    .addColumn("lock_by", "varchar(120)")
    .addColumn("lock_until", "bigint")
    /** The deliver job that last took the lease: it runs the endpoint's retries (delivery.ts). */
    .addColumn("driver_job", "integer")
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_webhook_endpoints_account")
    .on("webhook_endpoints")
    .columns(["account_id", "id"])
    .execute();

  await withId(db.schema.createTable("webhook_deliveries"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("endpoint_id", "integer", (c) =>
      c.notNull().references("webhook_endpoints.id").onDelete("cascade"),
    )
    .addColumn("event_id", "bigint", (c) => c.notNull())
    /** The webhook-id header: the same on every attempt and resend. */
    .addColumn("message_id", "varchar(40)", (c) => c.notNull().unique())
    /** pending | succeeded | failed */
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    /** Attempts in the current sequence (a resend starts a new one): the retry schedule's index. */
    .addColumn("tries", "integer", (c) => c.notNull())
    /** Attempts ever made. */
    .addColumn("attempts", "integer", (c) => c.notNull())
    /** Epoch milliseconds: due from then on while pending. */
    .addColumn("next_at", "bigint", (c) => c.notNull())
    .addColumn("last_status", "integer")
    .addColumn("last_error", "varchar(500)")
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_webhook_deliveries_due")
    .on("webhook_deliveries")
    .columns(["account_id", "endpoint_id", "status", "next_at"])
    .execute();
  await db.schema
    .createIndex("wisp_webhook_deliveries_endpoint")
    .on("webhook_deliveries")
    .columns(["account_id", "endpoint_id", "id"])
    .execute();

  await withId(db.schema.createTable("webhook_attempts"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("delivery_id", "integer", (c) =>
      c.notNull().references("webhook_deliveries.id").onDelete("cascade"),
    )
    .addColumn("attempt", "integer", (c) => c.notNull())
    /** ISO 8601 UTC with milliseconds. */
    .addColumn("started", "varchar(24)", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("error", "varchar(500)")
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    /** The first ~1 KB of the response body. */
    .addColumn("response", "text")
    .execute();
  await db.schema
    .createIndex("wisp_webhook_attempts_delivery")
    .on("webhook_attempts")
    .columns(["account_id", "delivery_id", "id"])
    .execute();

  /** Per account with endpoints: the last event fanned out, as (txid, id) (txid 0 on SQLite). */
  await db.schema
    .createTable("webhook_cursors")
    .addColumn("account_id", "integer", (c) => c.primaryKey().references("accounts.id"))
    .addColumn("last_txid", "bigint", (c) => c.notNull())
    .addColumn("last_event_id", "bigint", (c) => c.notNull())
    .execute();

  if (dialect === "postgres") {
    // SQLite commits one writer at a time, so its ids commit in order and need no such column.
    await db.schema
      .alterTable("events")
      .addColumn("txid", "bigint", (c) => c.notNull().defaultTo(sql`(pg_current_xact_id()::text::bigint)`))
      .execute();
    await db.schema
      .createIndex("wisp_events_account_txid")
      .on("events")
      .columns(["account_id", "txid", "id"])
      .execute();
  }
}

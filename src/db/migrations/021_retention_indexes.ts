// Indexes the retention sweep's cutoff scans read by (src/core/retention). radpostauth and events,
// written at every login, get none: their existing (account_id, authdate) and (account_id, id)
// indexes serve the scans, and another index would slow every login's insert.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  // Closed sessions of an account by stop time (the open-session indexes lead with username/NAS).
  await sql`create index if not exists wisp_radacct_account_stop on radacct (account_id, acctstoptime)`.execute(
    db,
  );
  // An event's deliveries: whether one is still pending, and which to delete with it.
  await sql`create index if not exists wisp_webhook_deliveries_event
    on webhook_deliveries (account_id, event_id)`.execute(db);
  // Deleting a delivery makes the database look for its attempts (the foreign key cascades);
  // without an index led by delivery_id that is a scan of every attempt per delivery deleted.
  await sql`create index if not exists wisp_webhook_attempts_delivery_id
    on webhook_attempts (delivery_id)`.execute(db);
}

// Live sessions and their control (issue 15): each network's Dynamic Authorization Server (RFC 5176
// CoA port and switch) and accounting interval; the outcome of the last disconnect sent for a
// session; vouchers' data limits; and an index for the open sessions of an account.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  // Off by default: a NAS takes Disconnect-Requests only from clients configured on it.
  await db.schema
    .alterTable("nas")
    .addColumn("coa_enabled", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  /** RFC 5176 section 3: the DAS listens on UDP 3799 unless told otherwise. */
  await db.schema
    .alterTable("nas")
    .addColumn("coa_port", "integer", (c) => c.notNull().defaultTo(3799))
    .execute();
  /** Seconds sent as Acct-Interim-Interval in every Access-Accept; 0: none sent. */
  await db.schema
    .alterTable("nas")
    .addColumn("interim_interval", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  /** Seconds without accounting after which an open session is closed (Lost-Carrier); 0: 3 intervals. */
  await db.schema
    .alterTable("nas")
    .addColumn("stale_after", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  for (const [column, type] of [
    ["disconnect_result", "varchar(12)"],
    ["disconnect_cause", "varchar(200)"],
    ["disconnect_at", "varchar(24)"],
  ] as const) {
    await db.schema.alterTable("radacct").addColumn(column, type).execute();
  }
  await db.schema.alterTable("vouchers").addColumn("data_limit", "bigint").execute();
  await db.schema.alterTable("voucher_batches").addColumn("data_limit", "bigint").execute();
  await sql`create index wisp_radacct_account_open on radacct (account_id, acctstoptime, radacctid)`.execute(
    db,
  );
}

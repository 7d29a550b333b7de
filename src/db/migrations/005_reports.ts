// Report tasks (asynchronous CSV files), the demo-seed marker, and the indexes the reports read by.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  // One row per asynchronous report; the work itself is a job (jobs.id = job_id).
  await withId(db.schema.createTable("report_tasks"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    /** Random and unguessable; also the file's name under DATA_DIR/reports. */
    .addColumn("name", "varchar(64)", (c) => c.notNull().unique())
    .addColumn("report_id", "integer", (c) => c.notNull())
    /** Unix seconds: the window earliest <= t < latest. */
    .addColumn("earliest", "bigint", (c) => c.notNull())
    .addColumn("latest", "bigint", (c) => c.notNull())
    .addColumn("job_id", "integer", (c) => c.notNull())
    /** queued | done | failed (running is the job's state). */
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("rows", "bigint")
    /** A sentence for the client; the job keeps the technical error. */
    .addColumn("error", "text")
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("finished", "varchar(20)")
    /** Unix seconds after which the task and its file are deleted. */
    .addColumn("expires", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("wisp_report_tasks_expires").on("report_tasks").column("expires").execute();

  // `wisp demo seed` runs once per account.
  await db.schema
    .createTable("demo_seeds")
    .addColumn("account_id", "integer", (c) => c.primaryKey().references("accounts.id"))
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    /** JSON: what the seed made. */
    .addColumn("summary", "text", (c) => c.notNull())
    .execute();

  // Report 115 lists the users created in a window, newest first, with their sessions' totals.
  await db.schema
    .createIndex("wisp_users_account_created")
    .on("users")
    .columns(["account_id", "created"])
    .execute();
  await sql`create index wisp_radacct_account_user on radacct (account_id, user_id)`.execute(db);
  if (dialect === "postgres") {
    // Reports page newest first with the row id as tie-break (keyset pagination). SQLite's indexes
    // end with the rowid already; PostgreSQL's need it spelled out. The new indexes replace the
    // old ones, which are their prefixes.
    await sql`drop index wisp_radacct_account_start`.execute(db);
    await sql`create index wisp_radacct_account_start
      on radacct (account_id, acctstarttime, radacctid)`.execute(db);
    await sql`drop index wisp_radpostauth_account_date`.execute(db);
    await sql`create index wisp_radpostauth_account_date
      on radpostauth (account_id, authdate, id)`.execute(db);
  }
}

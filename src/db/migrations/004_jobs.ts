// The jobs table: background work (webhook deliveries, report files) that survives a crash. A
// job is claimed with a lease; a worker that dies leaves the lease to expire and the job is
// claimed again, so nothing stays "running" forever.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await withId(db.schema.createTable("jobs"), dialect)
    .addColumn("account_id", "integer", (c) => c.references("accounts.id"))
    .addColumn("kind", "varchar(40)", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    /** queued | running | done | failed */
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    /** Epoch milliseconds: not before. */
    .addColumn("run_at", "bigint", (c) => c.notNull())
    .addColumn("locked_by", "varchar(64)")
    /** Epoch milliseconds: the lease of a running job ends. */
    .addColumn("locked_until", "bigint")
    .addColumn("progress", "text")
    .addColumn("result", "text")
    .addColumn("last_error", "text")
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("wisp_jobs_due").on("jobs").columns(["status", "run_at"]).execute();
  await db.schema
    .createIndex("wisp_jobs_account_kind")
    .on("jobs")
    .columns(["account_id", "kind", "id"])
    .execute();
}

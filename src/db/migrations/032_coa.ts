// Changes reach live sessions (issue 25 point 4): per network, what to do when a CoA-Request is
// refused or unanswered (none, or a Disconnect-Request) and how many CoA-Requests per second its
// NAS takes; per session, the outcome of the last CoA-Request and of its fallback.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable("nas")
    .addColumn("coa_fallback", "varchar(12)", (c) => c.notNull().defaultTo("none"))
    .execute();
  await db.schema
    .alterTable("nas")
    .addColumn("coa_rate", "integer", (c) => c.notNull().defaultTo(20))
    .execute();
  for (const [column, type] of [
    ["coa_result", "varchar(12)"],
    ["coa_cause", "varchar(200)"],
    ["coa_at", "varchar(24)"],
    ["coa_fallback_result", "varchar(12)"],
    ["coa_fallback_cause", "varchar(200)"],
  ] as const) {
    await db.schema.alterTable("radacct").addColumn(column, type).execute();
  }
}

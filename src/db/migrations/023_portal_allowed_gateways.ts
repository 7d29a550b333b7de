// The gateways a captive portal may hand guests' credentials to (issue 22): comma-separated host
// names and CIDRs (src/core/portals/gateways.ts); empty, as every existing portal starts, allows the
// private, CGNAT, link-local and unique local ranges only.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable("captive_portals")
    .addColumn("allowed_gateways", "text", (c) => c.notNull().defaultTo(""))
    .execute();
}

// Two hand-off options of a captive portal (issue 13): how a CoovaChilli portal sends the password
// (CHAP response or PAP-encoded password), and fixed or passed-through extra fields of the generic
// form POST that some controllers require (pfSense's `accept`, `zone`; Cisco WLC's `buttonClicked`).
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable("captive_portals")
    .addColumn("uam_auth", "varchar(8)", (c) => c.notNull().defaultTo("chap"))
    .execute();
  await db.schema
    .alterTable("captive_portals")
    .addColumn("generic_extra_fields", "varchar(500)", (c) => c.notNull().defaultTo(""))
    .execute();
}

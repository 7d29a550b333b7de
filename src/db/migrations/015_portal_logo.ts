// A captive portal's logo, kept in the database beside the portal (one per portal, removed with
// it): the image bytes as uploaded after a type check by magic bytes (src/core/portals/logo.ts),
// their type and a SHA-256 digest that is the guest page's ETag.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await db.schema
    .createTable("portal_logos")
    .addColumn("portal_id", "integer", (c) =>
      c.primaryKey().references("captive_portals.id").onDelete("cascade"),
    )
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    /** image/png | image/jpeg | image/webp */
    .addColumn("content_type", "varchar(16)", (c) => c.notNull())
    .addColumn("data", dialect === "postgres" ? "bytea" : "blob", (c) => c.notNull())
    .addColumn("sha256", "varchar(64)", (c) => c.notNull())
    .addColumn("width", "integer", (c) => c.notNull())
    .addColumn("height", "integer", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("wisp_portal_logos_account").on("portal_logos").column("account_id").execute();
}

// SCIM 2.0 provisioning (issue 30 point 3): the identity provider's own id for a user or group
// (RFC 7643 section 3.1, externalId), where a user came from (`source`: "local", or "scim" for one an
// identity provider created), the SCIM name, displayName and emails Wisp has no columns for (JSON),
// and a group's SCIM displayName when it is not a valid Wisp group name.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable("users").addColumn("external_id", "text").execute();
  await db.schema
    .alterTable("users")
    .addColumn("source", "text", (c) => c.notNull().defaultTo("local"))
    .execute();
  await db.schema.alterTable("users").addColumn("scim_profile", "text").execute();
  await db.schema.alterTable("groups").addColumn("external_id", "text").execute();
  await db.schema.alterTable("groups").addColumn("display_name", "text").execute();
  // filter=externalId eq "..." (what Entra ID and Okta look users and groups up by).
  await db.schema
    .createIndex("users_account_external_id")
    .on("users")
    .columns(["account_id", "external_id"])
    .execute();
  await db.schema
    .createIndex("groups_account_external_id")
    .on("groups")
    .columns(["account_id", "external_id"])
    .execute();
  // filter=displayName eq "..." on groups, matched ignoring case like the name.
  await sql`create index groups_account_display_name on groups (account_id, lower(display_name))`.execute(db);
}

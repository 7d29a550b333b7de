// Click-through and guest registration on the portal pages (issue 13): each portal's validity and
// session limits and guest group; the portal sign-ins waiting for the gateway's RADIUS request
// (so the Access-Accept can be linked to the portal and method); and the portal on radpostauth rows.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const columns: [string, number][] = [
    /** Seconds a click-through credential stays valid from its first use (1 day). */
    ["clickthrough_validity", 86_400],
    /** Seconds one click-through session may last (Session-Timeout; 1 hour). */
    ["clickthrough_session_timeout", 3_600],
    /** Seconds a registered guest stays valid (the user's Expiration; 7 days). */
    ["registration_validity", 604_800],
  ];
  for (const [name, fallback] of columns) {
    await db.schema
      .alterTable("captive_portals")
      .addColumn(name, "integer", (c) => c.notNull().defaultTo(fallback))
      .execute();
  }
  /** A group of the portal's account that registered guests join; null: none (registration off). */
  await db.schema.alterTable("captive_portals").addColumn("guest_group_id", "integer").execute();
  await db.schema.alterTable("radpostauth").addColumn("portal_id", "integer").execute();
  // A sign-in handed to the gateway; consumed by the RADIUS Access-Accept that follows it.
  const id =
    dialect === "postgres" ? sql`id bigserial primary key` : sql`id integer primary key autoincrement`;
  await sql`create table portal_logins (
    ${id},
    account_id integer not null,
    portal_id integer not null,
    method varchar(16) not null,
    username varchar(64) not null,
    client_mac varchar(17),
    expires bigint not null
  )`.execute(db);
  await sql`create index wisp_portal_logins_user on portal_logins (account_id, username)`.execute(db);
  await sql`create index wisp_radpostauth_account_portal on radpostauth (account_id, portal_id)`.execute(db);
}

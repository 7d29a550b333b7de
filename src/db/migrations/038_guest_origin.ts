// Where a guest came from (issue 31, /api/guests): how users created by a captive portal or an
// identity-provider sign-in registered (`guest_method`), on which portal, with which provider and
// from which device. Wisp did not record this before: users.source becomes "portal" or "idp" for
// them from now on, and users created earlier are recognised by the usernames those paths give
// (core/portals/signin.ts guestUsername: "guest-<portal id>-<digest>"; core/idp/rules.ts
// idpUsername: "<provider name>:<subject>"), without method, provider-portal or device.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await db.schema.alterTable("users").addColumn("guest_method", "text").execute();
  await db.schema.alterTable("users").addColumn("guest_portal_id", "integer").execute();
  await db.schema.alterTable("users").addColumn("guest_provider_id", "integer").execute();
  await db.schema.alterTable("users").addColumn("guest_client_mac", "text").execute();
  // The guests list reads users of an account by source, newest first.
  await db.schema
    .createIndex("users_account_source")
    .on("users")
    .columns(["account_id", "source", "id"])
    .execute();
  // Earlier portal registrations: the portal id is in the username.
  const portalId =
    dialect === "postgres"
      ? sql`cast(case when username ~ '^guest-[0-9]{1,9}-' then split_part(username, '-', 2) end as integer)`
      : sql`cast(substr(username, 7, instr(substr(username, 7), '-') - 1) as integer)`;
  await sql`
    update users set source = 'portal', guest_portal_id = ${portalId}
    where source = 'local' and substr(username, 1, 6) = 'guest-'
      and exists (select 1 from captive_portals p where p.account_id = users.account_id
                  and p.id = ${portalId})`.execute(db);
  // Earlier identity-provider sign-ins: "<provider name>:" opens the username.
  await sql`
    update users set source = 'idp', guest_method = 'idp',
      guest_provider_id = (select min(i.id) from identity_providers i
        where i.account_id = users.account_id and substr(users.username, 1, length(i.name) + 1) = i.name || ':')
    where source = 'local' and exists (select 1 from identity_providers i
      where i.account_id = users.account_id and substr(users.username, 1, length(i.name) + 1) = i.name || ':')`.execute(
    db,
  );
}

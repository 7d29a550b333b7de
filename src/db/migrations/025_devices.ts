// Devices (issue 24): MAC addresses an account knows, for MAC authentication (MAB) on its networks
// and for guests a captive portal remembers. Each network says whether it does MAC authentication
// and which password its gateways send with it; each portal whether and how long it remembers
// guests' devices, and whether it takes randomised (locally administered) addresses.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await withId(db.schema.createTable("devices"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull())
    /** Canonical: lower-case, colon-separated (core/devices/mac.ts). */
    .addColumn("mac", "varchar(17)", (c) => c.notNull())
    .addColumn("name", "varchar(100)", (c) => c.notNull().defaultTo(""))
    .addColumn("description", "varchar(200)", (c) => c.notNull().defaultTo(""))
    .addColumn("status", "varchar(16)", (c) => c.notNull().defaultTo("enabled"))
    /** registered (by an operator or its owner) or remembered (after a portal sign-in). */
    .addColumn("kind", "varchar(16)", (c) => c.notNull().defaultTo("registered"))
    .addColumn("user_id", "integer")
    .addColumn("voucher_id", "integer")
    .addColumn("group_id", "integer")
    .addColumn("portal_id", "integer")
    .addColumn("expires", "varchar(20)")
    .addColumn("last_seen", "varchar(20)")
    .addColumn("last_network_id", "integer")
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await sql`create unique index wisp_devices_account_mac on devices (account_id, mac)`.execute(db);
  await sql`create index wisp_devices_account_user on devices (account_id, user_id)`.execute(db);
  await sql`create index wisp_devices_account_voucher on devices (account_id, voucher_id)`.execute(db);

  /** off, devices (registered devices only), or guests (devices and remembered guests). */
  await db.schema
    .alterTable("nas")
    .addColumn("mab_mode", "varchar(16)", (c) => c.notNull().defaultTo("off"))
    .execute();
  /** What the gateways send as MAB password: mac (the MAC itself), empty, or secret (mab_secret). */
  await db.schema
    .alterTable("nas")
    .addColumn("mab_password", "varchar(16)", (c) => c.notNull().defaultTo("mac"))
    .execute();
  await db.schema
    .alterTable("nas")
    .addColumn("mab_secret", "varchar(128)", (c) => c.notNull().defaultTo(""))
    .execute();

  /** never, ask (the guest ticks a box), always. */
  await db.schema
    .alterTable("captive_portals")
    .addColumn("remember_devices", "varchar(8)", (c) => c.notNull().defaultTo("never"))
    .execute();
  await db.schema
    .alterTable("captive_portals")
    .addColumn("remember_days", "integer", (c) => c.notNull().defaultTo(30))
    .execute();
  /** refuse or allow remembering randomised (locally administered) MAC addresses. */
  await db.schema
    .alterTable("captive_portals")
    .addColumn("random_macs", "varchar(8)", (c) => c.notNull().defaultTo("refuse"))
    .execute();

  // The device page's sessions and authentications, found by the device's MAC.
  await sql`create index wisp_radacct_account_client_mac on radacct (account_id, client_mac)`.execute(db);
  await sql`create index wisp_radpostauth_account_client_mac on radpostauth (account_id, client_mac)`.execute(
    db,
  );
}

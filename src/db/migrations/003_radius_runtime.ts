// What the RADIUS server records beyond FreeRADIUS's columns (who, where, why), the devices a
// voucher was used from, and the events table every change writes to (the webhook outbox).
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  for (const [column, type] of [
    ["reason", "varchar(100)"],
    ["user_id", "integer"],
    ["voucher_id", "integer"],
    ["network_id", "integer"],
    ["client_mac", "varchar(17)"],
    ["ap_mac", "varchar(17)"],
    ["ssid", "varchar(64)"],
    ["nas_ip", "varchar(45)"],
    ["nas_identifier", "varchar(64)"],
  ] as const) {
    await db.schema.alterTable("radpostauth").addColumn(column, type).execute();
  }
  for (const [column, type] of [
    ["user_id", "integer"],
    ["voucher_id", "integer"],
    ["network_id", "integer"],
    ["client_mac", "varchar(17)"],
    ["ap_mac", "varchar(17)"],
    ["ssid", "varchar(64)"],
  ] as const) {
    await db.schema.alterTable("radacct").addColumn(column, type).execute();
  }

  // Lists page through an account's users by id; without this index SQLite sorts the whole account.
  await db.schema.createIndex("wisp_users_account_id").on("users").columns(["account_id", "id"]).execute();
  // Logins look users up by their exact name, as FreeRADIUS's queries do.
  await db.schema
    .createIndex("wisp_users_account_exact")
    .on("users")
    .columns(["account_id", "username"])
    .execute();

  await db.schema
    .createTable("voucher_devices")
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("voucher_id", "integer", (c) => c.notNull().references("vouchers.id").onDelete("cascade"))
    .addColumn("mac", "varchar(17)", (c) => c.notNull())
    .addColumn("first_seen", "varchar(20)", (c) => c.notNull())
    .addPrimaryKeyConstraint("voucher_devices_pk", ["voucher_id", "mac"])
    .execute();

  await withId(db.schema.createTable("events"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("kind", "varchar(40)", (c) => c.notNull())
    /** The JSON body's `data`, as text. */
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("created", "varchar(24)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("wisp_events_account").on("events").columns(["account_id", "id"]).execute();
}

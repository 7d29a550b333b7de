// Accounts, API keys, users, and the FreeRADIUS per-user tables (radcheck, radreply, radusergroup).
// Index names on FreeRADIUS's tables carry a wisp_ prefix: FreeRADIUS's own schema.sql creates
// indexes without IF NOT EXISTS, and must still run over a Wisp database.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await withId(db.schema.createTable("accounts"), dialect)
    .addColumn("name", "varchar(64)", (c) => c.notNull().unique())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable("api_keys"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("key_hash", "char(64)", (c) => c.notNull().unique())
    .addColumn("key_tail", "varchar(8)", (c) => c.notNull())
    .addColumn("permissions", "text", (c) => c.notNull())
    .addColumn("allow_ips", "text", (c) => c.notNull())
    .addColumn("rate_limit", "integer")
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("last_used", "varchar(20)")
    .addColumn("revoked", "varchar(20)")
    .execute();
  await db.schema.createIndex("api_keys_account").on("api_keys").column("account_id").execute();

  await withId(db.schema.createTable("users"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("username", "varchar(64)", (c) => c.notNull())
    .addColumn("email", "varchar(254)", (c) => c.notNull().defaultTo(""))
    .addColumn("fullname", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  // Usernames are unique per account ignoring case (FreeRADIUS deployments often lower-case them).
  await db.schema
    .createIndex("users_account_username")
    .on("users")
    .columns(["account_id"])
    .expression(sql`lower(username)`)
    .unique()
    .execute();

  // FreeRADIUS's own column names and defaults, plus account_id (the tenant, and the shard key).
  for (const [table, defaultOp] of [
    ["radcheck", "=="],
    ["radreply", "="],
  ] as const) {
    await withId(db.schema.createTable(table), dialect)
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
      .addColumn("username", "varchar(64)", (c) => c.notNull().defaultTo(""))
      .addColumn("attribute", "varchar(64)", (c) => c.notNull().defaultTo(""))
      .addColumn("op", "char(2)", (c) => c.notNull().defaultTo(defaultOp))
      .addColumn("value", "varchar(253)", (c) => c.notNull().defaultTo(""))
      .execute();
    await db.schema
      .createIndex(`wisp_${table}_username`)
      .on(table)
      .columns(["username", "attribute"])
      .execute();
    await db.schema
      .createIndex(`wisp_${table}_account_username`)
      .on(table)
      .columns(["account_id", "username"])
      .execute();
  }

  await withId(db.schema.createTable("radusergroup"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("username", "varchar(64)", (c) => c.notNull().defaultTo(""))
    .addColumn("groupname", "varchar(64)", (c) => c.notNull().defaultTo(""))
    .addColumn("priority", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex("wisp_radusergroup_username").on("radusergroup").column("username").execute();
  await db.schema
    .createIndex("wisp_radusergroup_account_member")
    .on("radusergroup")
    .columns(["account_id", "groupname", "username"])
    .unique()
    .execute();
}

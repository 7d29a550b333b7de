// The console's own tables: its users (operators who log in with email and password, each in one
// account) and their sessions (only a SHA-256 of each session token is stored). Also an index for
// the console's network page, which lists a network's most recent authentications.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await withId(db.schema.createTable("console_admins"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    /** Lower-case; unique across accounts, since a login names no account. */
    .addColumn("email", "varchar(254)", (c) => c.notNull().unique())
    /** scrypt$<N>$<r>$<p>$<salt base64>$<hash base64> */
    .addColumn("password_hash", "varchar(255)", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .addColumn("last_login", "varchar(20)")
    .execute();
  await db.schema
    .createIndex("wisp_console_admins_account")
    .on("console_admins")
    .columns(["account_id", "id"])
    .execute();

  await withId(db.schema.createTable("console_sessions"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("admin_id", "integer", (c) => c.notNull().references("console_admins.id").onDelete("cascade"))
    /** SHA-256 of the cookie's token, hex. The token itself is never stored. */
    .addColumn("token_hash", "char(64)", (c) => c.notNull().unique())
    /** The synchronizer token every form of this session carries. */
    .addColumn("csrf_token", "varchar(64)", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("last_seen", "varchar(20)", (c) => c.notNull())
    /** Idle expiry, moved forward as the session is used (never past created + the absolute limit). */
    .addColumn("expires", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_console_sessions_admin")
    .on("console_sessions")
    .columns(["account_id", "admin_id"])
    .execute();

  await db.schema
    .createIndex("wisp_radpostauth_account_network")
    .on("radpostauth")
    .columns(["account_id", "network_id", "id"])
    .execute();
}

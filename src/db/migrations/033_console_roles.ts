// Console roles, team invitations and the console's session list (issue 29 points 1 and 4). Every
// console admin gets a role; those that existed before are owners (they could do everything). A
// session remembers the device (User-Agent) and address it was last used from. An invitation is a
// single-use link mailed to a new team member: only an HMAC of its secret is stored.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable("console_admins")
    .addColumn("role", "varchar(32)", (c) => c.notNull().defaultTo("owner"))
    .execute();
  await db.schema.alterTable("console_sessions").addColumn("user_agent", "varchar(400)").execute();
  await db.schema.alterTable("console_sessions").addColumn("address", "varchar(64)").execute();

  await withId(db.schema.createTable("console_invites"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    /** Lower-case, as console_admins.email. */
    .addColumn("email", "varchar(254)", (c) => c.notNull())
    .addColumn("role", "varchar(32)", (c) => c.notNull())
    /** HMAC-SHA256 (hex) of the link's secret under a key derived from the deployment's secret key. */
    .addColumn("token_digest", "char(64)", (c) => c.notNull().unique())
    /** The owner who sent it (no foreign key: the row outlives a removed owner). */
    .addColumn("invited_by", "integer", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("expires", "varchar(20)", (c) => c.notNull())
    /** When the link was used (single use); null while open. */
    .addColumn("accepted", "varchar(20)")
    /** When an owner withdrew it, or a newer invitation to the same email replaced it. */
    .addColumn("revoked", "varchar(20)")
    .execute();
  await db.schema
    .createIndex("wisp_console_invites_account")
    .on("console_invites")
    .columns(["account_id", "email"])
    .execute();
}

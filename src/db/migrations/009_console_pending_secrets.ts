// Secrets made in the console wait here, bound to the session that made them, between the POST
// that made them and the page that shows them once (Post/Redirect/Get). Sealed like webhook secrets
// (src/core/webhooks/crypto.ts); a row lives a few minutes at most and goes with its session.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await withId(db.schema.createTable("console_pending_secrets"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("session_id", "integer", (c) =>
      c.notNull().references("console_sessions.id").onDelete("cascade"),
    )
    /** What the secret belongs to, as "<kind>:<id>": "keys:3", "webhooks:7", "networks:12". */
    .addColumn("subject", "varchar(64)", (c) => c.notNull())
    /** "created" or "rotated": how the page that shows it names it. */
    .addColumn("event", "varchar(16)", (c) => c.notNull())
    /** AES-256-GCM ciphertext of the secret, authenticated with the session and subject. */
    .addColumn("secret", "text", (c) => c.notNull())
    .addColumn("expires", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_console_pending_secrets_session")
    .on("console_pending_secrets")
    .columns(["account_id", "session_id", "subject"])
    .execute();
}

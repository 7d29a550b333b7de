// Two-factor sign-in to the console (issue 29 point 2): an admin's TOTP secret (sealed, like webhook
// secrets), the last time step a code was accepted at (so a code works once), recovery codes (keyed
// hashes only), passkeys (WebAuthn public keys), the sign-ins waiting for their second factor, the
// account's requirement of a second factor, and which factor a session was made with.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const admins = () => db.schema.alterTable("console_admins");
  /** AES-256-GCM ciphertext of the base32 secret, once confirmed by a first code; null: no TOTP. */
  await admins().addColumn("totp_secret", "text").execute();
  /** A secret being enrolled (shown as a QR code, not yet confirmed). */
  await admins().addColumn("totp_pending", "text").execute();
  /** RFC 6238 time step (unix time / 30) of the last accepted code: a code at or before it is refused. */
  await admins().addColumn("totp_last_step", "bigint").execute();
  /** WebAuthn user handle (base64url of 32 random bytes), made with the first passkey. */
  await admins().addColumn("webauthn_user_id", "varchar(64)").execute();

  await db.schema
    .alterTable("accounts")
    .addColumn("console_require_second_factor", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  /** "totp", "recovery", "passkey" (second factor or alone); null: one factor only. */
  await db.schema.alterTable("console_sessions").addColumn("second_factor", "varchar(16)").execute();

  await withId(db.schema.createTable("console_recovery_codes"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("admin_id", "integer", (c) => c.notNull().references("console_admins.id").onDelete("cascade"))
    /** HMAC-SHA256 of the normalised code under a key derived from the sealing key, hex. */
    .addColumn("code_hash", "char(64)", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("used", "varchar(20)")
    .execute();
  await db.schema
    .createIndex("wisp_console_recovery_codes_admin")
    .on("console_recovery_codes")
    .columns(["admin_id", "code_hash"])
    .unique()
    .execute();

  await withId(db.schema.createTable("console_passkeys"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("admin_id", "integer", (c) => c.notNull().references("console_admins.id").onDelete("cascade"))
    /** The credential ID, base64url (at most 1023 bytes: WebAuthn Level 3, section 5.1). */
    .addColumn("credential_id", "varchar(1400)", (c) => c.notNull().unique())
    /** The COSE public key, base64url. */
    .addColumn("public_key", "text", (c) => c.notNull())
    /** The authenticator's signature counter (WebAuthn section 6.1.1); 0 for most passkeys. */
    .addColumn("counter", "bigint", (c) => c.notNull())
    /** JSON array of transports the browser reported ("internal", "usb", ...). */
    .addColumn("transports", "varchar(200)", (c) => c.notNull())
    .addColumn("name", "varchar(64)", (c) => c.notNull())
    /** 1: a synced passkey (backup state); 0: bound to one device. */
    .addColumn("backed_up", "integer", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("last_used", "varchar(20)")
    .execute();
  await db.schema
    .createIndex("wisp_console_passkeys_admin")
    .on("console_passkeys")
    .columns(["account_id", "admin_id"])
    .execute();

  await withId(db.schema.createTable("console_sign_ins"), dialect)
    /** Null while a passkey sign-in does not yet know who signs in. */
    .addColumn("account_id", "integer", (c) => c.references("accounts.id").onDelete("cascade"))
    .addColumn("admin_id", "integer", (c) => c.references("console_admins.id").onDelete("cascade"))
    /** SHA-256 of the sign-in cookie's token, hex. */
    .addColumn("token_hash", "char(64)", (c) => c.notNull().unique())
    /** "second-factor", "enrol" or "passkey" (a sign-in with a passkey alone). */
    .addColumn("stage", "varchar(16)", (c) => c.notNull())
    /** The identity provider the first factor came from; null: a password. */
    .addColumn("provider_id", "integer")
    /** The WebAuthn challenge of the ceremony this page started, base64url. */
    .addColumn("challenge", "varchar(128)")
    /** Where to go once signed in (a console path). */
    .addColumn("next", "varchar(512)", (c) => c.notNull())
    .addColumn("failures", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("expires", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_console_sign_ins_expires")
    .on("console_sign_ins")
    .column("expires")
    .execute();
}

// Certificates for WPA-Enterprise (issue 14): the CA and RADIUS server certificate Wisp makes for
// itself when no EAP_* files are configured, kept once for the whole deployment so every instance
// presents the same server certificate; and the client certificates issued for EAP-TLS.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  // One row for the deployment, like `deployment` (migration 012): the CA is not an account's.
  await db.schema
    .createTable("eap_authority")
    /** Always 1: the first instance to insert it wins, the others read its row. */
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    /** PEM certificates; the private keys are sealed (AES-256-GCM, core/webhooks/crypto.ts). */
    .addColumn("ca_cert", "text", (c) => c.notNull())
    .addColumn("ca_key", "text", (c) => c.notNull())
    /** The DNS name in the server certificate's SAN, which clients match. */
    .addColumn("server_name", "varchar(253)", (c) => c.notNull())
    .addColumn("server_cert", "text", (c) => c.notNull())
    .addColumn("server_key", "text", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await withId(db.schema.createTable("client_certificates"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    /** Lowercase hex, random (x509.ts randomSerial), unique over the deployment. */
    .addColumn("serial", "varchar(40)", (c) => c.notNull().unique())
    .addColumn("username", "varchar(64)", (c) => c.notNull())
    .addColumn("not_before", "varchar(20)", (c) => c.notNull())
    .addColumn("not_after", "varchar(20)", (c) => c.notNull())
    .addColumn("revoked_at", "varchar(20)")
    /** SHA-256 of the certificate's DER, colon-separated hex: the exact certificate issued. */
    .addColumn("fingerprint", "varchar(95)", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_client_certificates_user")
    .on("client_certificates")
    .columns(["account_id", "username"])
    .execute();
}

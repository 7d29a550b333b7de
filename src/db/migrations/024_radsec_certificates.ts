// RadSec (issue 23): a NAS is identified by its TLS client certificate, not its address. Wisp's own
// RadSec client CA (one per deployment, apart from the EAP CA so a user's EAP-TLS certificate can
// never pass as a NAS), the certificates it issues for networks, and the outside CAs operators upload
// for a network with the rule that matches a certificate to it. A network reached over RadSec only
// has no address: its nasname is '' (FreeRADIUS's read_clients skips such a row with an error line).
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await db.schema
    .createTable("radsec_authority")
    /** Always 1: the first instance to insert it wins, the others read its row. */
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("ca_cert", "text", (c) => c.notNull())
    /** Sealed (AES-256-GCM, core/webhooks/crypto.ts). */
    .addColumn("ca_key", "text", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable("radsec_certificates"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    /** No foreign key: a certificate outlives its network, and is refused once the network is gone. */
    .addColumn("network_id", "integer", (c) => c.notNull())
    /** Lowercase hex, random, unique over the deployment: the handshake finds the row by it. */
    .addColumn("serial", "varchar(40)", (c) => c.notNull().unique())
    .addColumn("subject", "varchar(255)", (c) => c.notNull())
    .addColumn("not_before", "varchar(20)", (c) => c.notNull())
    .addColumn("not_after", "varchar(20)", (c) => c.notNull())
    .addColumn("revoked_at", "varchar(20)")
    /** SHA-256 of the DER, colon-separated hex: the exact certificate issued. */
    .addColumn("fingerprint", "varchar(95)", (c) => c.notNull())
    /** The certificate (public), PEM, for download; the private key is never kept. */
    .addColumn("cert", "text", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_radsec_certificates_network")
    .on("radsec_certificates")
    .columns(["account_id", "network_id"])
    .execute();

  // One uploaded CA per network, with its match rule.
  await withId(db.schema.createTable("radsec_trust"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("network_id", "integer", (c) => c.notNull())
    .addColumn("ca_cert", "text", (c) => c.notNull())
    .addColumn("ca_subject", "varchar(1024)", (c) => c.notNull())
    /** SHA-256 of the subject as node:crypto prints it: leaves name their issuer so (the lookup key). */
    .addColumn("ca_subject_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("ca_fingerprint", "varchar(95)", (c) => c.notNull())
    .addColumn("ca_not_after", "varchar(20)", (c) => c.notNull())
    /** cn, dns or uri. */
    .addColumn("match_field", "varchar(8)", (c) => c.notNull())
    /** JSON array of glob patterns. */
    .addColumn("match_patterns", "text", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_radsec_trust_network")
    .on("radsec_trust")
    .columns(["account_id", "network_id"])
    .unique()
    .execute();
  await db.schema
    .createIndex("wisp_radsec_trust_subject")
    .on("radsec_trust")
    .column("ca_subject_hash")
    .execute();
  await db.schema
    .createIndex("wisp_radsec_trust_fingerprint")
    .on("radsec_trust")
    .column("ca_fingerprint")
    .execute();

  // nasname '' (no address) may repeat; addresses stay unique. The lookup by address keeps a plain
  // index: SQLite cannot prove `nasname in (...)` implies the partial index's condition.
  await sql`drop index wisp_nas_nasname`.execute(db);
  await sql`create index wisp_nas_nasname on nas (nasname)`.execute(db);
  await sql`create unique index wisp_nas_nasname_unique on nas (nasname) where nasname <> ''`.execute(db);
}

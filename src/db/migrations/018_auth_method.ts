// EAP (issue 14): how each login was proven and the outer identity of tunnelled methods, on
// radpostauth (report 110 shows both); and each network's default EAP method, proposed first to
// supplicants (a NAK may pick another served one).
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  /** PAP, CHAP, MSCHAPv2, PEAP, TTLS or TLS; null for rows written before (or with no credentials). */
  await db.schema.alterTable("radpostauth").addColumn("method", "varchar(16)").execute();
  /** The EAP-Response/Identity when the user was named inside a tunnel (anonymous@realm...). */
  await db.schema.alterTable("radpostauth").addColumn("outer_identity", "varchar(253)").execute();
  /** PEAP, TTLS or TLS. */
  await db.schema
    .alterTable("nas")
    .addColumn("eap_method", "varchar(8)", (c) => c.notNull().defaultTo("PEAP"))
    .execute();
}

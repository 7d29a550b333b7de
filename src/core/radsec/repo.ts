// SQL of RadSec certificates (migration 024): Wisp's RadSec client CA, the certificates it issued for
// networks, and the CAs uploaded for networks. Statements that span accounts are the handshake's
// (authorities, by serial, by issuer): the account is not known until the certificate names it.

import type { Kysely, Selectable } from "kysely";
import type {
  NasTable,
  RadsecAuthorityTable,
  RadsecCertificatesTable,
  RadsecTrustTable,
  Schema,
} from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";

export type RadsecAuthorityRow = Omit<RadsecAuthorityTable, "id">;
export type RadsecCertificateRow = Selectable<RadsecCertificatesTable>;
export type NewRadsecCertificate = Omit<RadsecCertificateRow, "id" | "revoked_at">;
export type RadsecTrustRow = Selectable<RadsecTrustTable>;
export type NewRadsecTrust = Omit<RadsecTrustRow, "id">;
export type NasRow = Selectable<NasTable>;

export class RadsecRepo {
  constructor(private readonly db: Kysely<Schema>) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: RadsecRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new RadsecRepo(trx)));
  }

  authority(): Promise<RadsecAuthorityRow | undefined> {
    return this.db
      .selectFrom("radsec_authority")
      .select(["ca_cert", "ca_key", "created"])
      .where("id", "=", 1)
      .executeTakeFirst();
  }

  /** Inserts the row unless another instance did first; the caller reads back whichever won. */
  async insertAuthorityIfAbsent(row: RadsecAuthorityRow): Promise<void> {
    await this.db
      .insertInto("radsec_authority")
      .values({ id: 1, ...row })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  }

  /** The network, secret included (the RADIUS door's row), when it exists in the account. */
  network(accountId: number, networkId: number): Promise<NasRow | undefined> {
    return this.db
      .selectFrom("nas")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", networkId)
      .executeTakeFirst();
  }

  insertCertificate(row: NewRadsecCertificate): Promise<RadsecCertificateRow> {
    return this.db.insertInto("radsec_certificates").values(row).returningAll().executeTakeFirstOrThrow();
  }

  certificates(accountId: number, networkId: number): Promise<RadsecCertificateRow[]> {
    return this.db
      .selectFrom("radsec_certificates")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("network_id", "=", networkId)
      .orderBy("id")
      .execute();
  }

  certificate(
    accountId: number,
    networkId: number,
    serial: string,
  ): Promise<RadsecCertificateRow | undefined> {
    return this.db
      .selectFrom("radsec_certificates")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("network_id", "=", networkId)
      .where("serial", "=", serial)
      .executeTakeFirst();
  }

  /** The handshake: the serial (unique over the deployment) names the account. */
  certificateBySerial(serial: string): Promise<RadsecCertificateRow | undefined> {
    return this.db
      .selectFrom("radsec_certificates")
      .selectAll()
      .where("serial", "=", serial)
      .executeTakeFirst();
  }

  async revoke(accountId: number, networkId: number, serial: string, when: string): Promise<void> {
    await this.db
      .updateTable("radsec_certificates")
      .set({ revoked_at: when })
      .where("account_id", "=", accountId)
      .where("network_id", "=", networkId)
      .where("serial", "=", serial)
      .where("revoked_at", "is", null)
      .execute();
  }

  trust(accountId: number, networkId: number): Promise<RadsecTrustRow | undefined> {
    return this.db
      .selectFrom("radsec_trust")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("network_id", "=", networkId)
      .executeTakeFirst();
  }

  /** Uploads or replaces the network's CA (one per network). */
  async putTrust(row: NewRadsecTrust): Promise<RadsecTrustRow> {
    const { account_id, network_id, created: _created, ...changes } = row;
    await this.db
      .insertInto("radsec_trust")
      .values(row)
      .onConflict((oc) => oc.columns(["account_id", "network_id"]).doUpdateSet(changes))
      .execute();
    return (await this.trust(account_id, network_id))!;
  }

  async deleteTrust(accountId: number, networkId: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom("radsec_trust")
      .where("account_id", "=", accountId)
      .where("network_id", "=", networkId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The handshake: uploaded CAs whose subject is a certificate's issuer, of every account. */
  trustByIssuer(subjectHash: string): Promise<RadsecTrustRow[]> {
    return this.db
      .selectFrom("radsec_trust")
      .selectAll()
      .where("ca_subject_hash", "=", subjectHash)
      .orderBy("id")
      .execute();
  }

  /** The listener's poll: the uploaded CAs of every account, each CA once, by fingerprint. */
  async trustFingerprints(): Promise<string[]> {
    const rows = await this.db
      .selectFrom("radsec_trust")
      .select("ca_fingerprint")
      .distinct()
      .orderBy("ca_fingerprint")
      .execute();
    return rows.map((r) => r.ca_fingerprint);
  }

  /** The uploaded CAs of every account (PEM), read again only when trustFingerprints changed. */
  async trustCertificates(): Promise<{ ca_fingerprint: string; ca_cert: string }[]> {
    return this.db
      .selectFrom("radsec_trust")
      .select(["ca_fingerprint", "ca_cert"])
      .orderBy("ca_fingerprint")
      .execute();
  }

  /** Which of the account's networks have RadSec set up: a certificate not revoked, or a CA. */
  async networksWithRadsec(accountId: number, networkIds: number[]): Promise<Set<number>> {
    if (networkIds.length === 0) return new Set();
    const [certs, cas] = await Promise.all([
      this.db
        .selectFrom("radsec_certificates")
        .select("network_id")
        .distinct()
        .where("account_id", "=", accountId)
        .where("network_id", "in", networkIds)
        .where("revoked_at", "is", null)
        .execute(),
      this.db
        .selectFrom("radsec_trust")
        .select("network_id")
        .where("account_id", "=", accountId)
        .where("network_id", "in", networkIds)
        .execute(),
    ]);
    return new Set([...certs, ...cas].map((r) => r.network_id));
  }
}

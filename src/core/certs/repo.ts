// SQL of the certificates (migration 017): the deployment's one CA row and the client certificates.

import type { Generated, Kysely, Selectable } from "kysely";
import { prepared } from "../../db/prepared.ts";
import type { Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";

export interface EapAuthorityTable {
  id: number;
  ca_cert: string;
  /** Sealed. */
  ca_key: string;
  server_name: string;
  server_cert: string;
  /** Sealed. */
  server_key: string;
  created: string;
  updated: string;
}

export interface ClientCertificatesTable {
  id: Generated<number>;
  account_id: number;
  serial: string;
  username: string;
  not_before: string;
  not_after: string;
  revoked_at: string | null;
  fingerprint: string;
  created: string;
}

export type AuthorityRow = Omit<EapAuthorityTable, "id">;
export type ClientCertificateRow = Selectable<ClientCertificatesTable>;
export type NewClientCertificate = Omit<ClientCertificateRow, "id" | "revoked_at">;

type Tables = { eap_authority: EapAuthorityTable; client_certificates: ClientCertificatesTable };

export class CertsRepo {
  private readonly db: Kysely<Schema & Tables>;

  /** Every EAP-TLS login reads its certificate's row: compiled once (db/prepared.ts). */
  private readonly clientForLogin: (
    accountId: number,
    serial: string,
  ) => Promise<(ClientCertificateRow & { user_id: number | null })[]>;

  constructor(db: Kysely<Schema>) {
    this.db = db.withTables<Tables>();
    // Given the root Kysely, not withTables' copy: on SQLite the read runs outside Kysely.
    this.clientForLogin = prepared(
      db,
      (accountId: number, serial: string) =>
        this.db
          .selectFrom("client_certificates as c")
          .leftJoin("users as u", (join) =>
            join.onRef("u.account_id", "=", "c.account_id").onRef("u.username", "=", "c.username"),
          )
          .selectAll("c")
          .select("u.id as user_id")
          .where("c.account_id", "=", accountId)
          .where("c.serial", "=", serial),
      2,
    );
  }

  /** Runs fn with a repository bound to one transaction (a change and its audit row). */
  transaction<T>(fn: (repo: CertsRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new CertsRepo(trx as unknown as Kysely<Schema>)));
  }

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  async authority(): Promise<AuthorityRow | undefined> {
    return this.db
      .selectFrom("eap_authority")
      .select(["ca_cert", "ca_key", "server_name", "server_cert", "server_key", "created", "updated"])
      .where("id", "=", 1)
      .executeTakeFirst();
  }

  /** Inserts the row unless another instance did first; the caller reads back whichever won. */
  async insertAuthorityIfAbsent(row: AuthorityRow): Promise<void> {
    await this.db
      .insertInto("eap_authority")
      .values({ id: 1, ...row })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  }

  /**
   * Replaces the server certificate only if it is still the one `previous` names (compare and
   * set): of two instances renewing at once, one wins and both then read the winner's.
   */
  async replaceServer(
    previous: string,
    next: { server_name: string; server_cert: string; server_key: string; updated: string },
  ): Promise<void> {
    await this.db
      .updateTable("eap_authority")
      .set(next)
      .where("id", "=", 1)
      .where("server_cert", "=", previous)
      .execute();
  }

  async insertClient(row: NewClientCertificate): Promise<ClientCertificateRow> {
    return this.db.insertInto("client_certificates").values(row).returningAll().executeTakeFirstOrThrow();
  }

  async findClient(accountId: number, serial: string): Promise<ClientCertificateRow | undefined> {
    return this.db
      .selectFrom("client_certificates")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("serial", "=", serial)
      .executeTakeFirst();
  }

  /** The certificate with whether its user still exists, in one query (the EAP-TLS hot path). */
  async findClientForLogin(
    accountId: number,
    serial: string,
  ): Promise<(ClientCertificateRow & { user_id: number | null }) | undefined> {
    return (await this.clientForLogin(accountId, serial))[0];
  }

  async listClients(accountId: number, username?: string): Promise<ClientCertificateRow[]> {
    let query = this.db.selectFrom("client_certificates").selectAll().where("account_id", "=", accountId);
    if (username !== undefined) query = query.where("username", "=", username);
    return query.orderBy("id").execute();
  }

  /** Marks the certificate revoked; false when it does not exist or already was. */
  async revoke(accountId: number, serial: string, when: string): Promise<boolean> {
    const result = await this.db
      .updateTable("client_certificates")
      .set({ revoked_at: when })
      .where("account_id", "=", accountId)
      .where("serial", "=", serial)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async userExists(accountId: number, username: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("users")
      .select("id")
      .where("account_id", "=", accountId)
      .where("username", "=", username)
      .executeTakeFirst();
    return row !== undefined;
  }
}

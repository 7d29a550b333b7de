// Wisp's own CA and RADIUS server certificate, used when no EAP_* files are configured: made once
// per deployment and kept in the database (migration 017), private keys sealed at rest, so every
// instance on the database presents the same server certificate.
import { X509Certificate } from "node:crypto";
import { isoNow } from "../shared/time.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import { EKU_SERVER_AUTH } from "./pem.ts";
import type { AuthorityRow, CertsRepo } from "./repo.ts";
import { AUTHORITY_DAYS, AUTHORITY_NAME, SERVER_DAYS, SERVER_RENEW_DAYS } from "./rules.ts";
import type { Signer } from "./x509.ts";

/** Certificate making, loaded when first needed (see pem.ts). */
const making = () => import("./x509.ts");

const DAY_MS = 86_400_000;
/** Authenticated with each sealed key, so a key copied into the other column does not open. */
const CA_KEY = "eap_authority:ca_key";
const SERVER_KEY = "eap_authority:server_key";

export interface LoadedAuthority {
  row: AuthorityRow;
  /** The server certificate's private key, PEM. */
  serverKey: string;
}

export class GeneratedAuthority {
  private loaded: Promise<LoadedAuthority> | undefined;
  private signing: Promise<Signer> | undefined;

  constructor(
    private readonly repo: CertsRepo,
    private readonly box: SecretBox,
    private readonly serverName: string,
    private readonly now: () => Date,
  ) {}

  /**
   * The CA's key, ready to sign client certificates. Read when first needed: the certificate code
   * it loads (@peculiar/x509 and its ASN.1 parts, about 0.8 MB of source) stays out of a server
   * that only presents its certificate.
   */
  signer(): Promise<Signer> {
    this.signing ??= this.get()
      .then(({ row }) => this.signerOf(row))
      .catch((error) => {
        this.signing = undefined; // as get(): a failure is retried by the next call
        throw error;
      });
    return this.signing;
  }

  private async signerOf(row: Pick<AuthorityRow, "ca_cert" | "ca_key">): Promise<Signer> {
    return (await making()).signerOf({ cert: row.ca_cert, key: this.box.open(row.ca_key, CA_KEY) });
  }

  /** The deployment's CA and server certificate, read (or made) once per process. */
  get(): Promise<LoadedAuthority> {
    this.loaded ??= this.load().catch((error) => {
      this.loaded = undefined; // a failure (database away) is retried by the next call
      throw error;
    });
    return this.loaded;
  }

  /**
   * Instances starting together each find no row, make a CA, insert it unless a row exists by
   * then, and read back the row that won, so all present the same. A server certificate for
   * another name (EAP_SERVER_NAME changed) or near its end is replaced, signed by the same CA, with
   * a compare-and-set on the certificate it replaces; again every instance reads the winner.
   */
  private async load(): Promise<LoadedAuthority> {
    let row = await this.repo.authority();
    if (!row) {
      const now = this.now();
      const { createAuthority, signerOf } = await making();
      const ca = await createAuthority(AUTHORITY_NAME, AUTHORITY_DAYS, now);
      const server = await this.serverLeaf(await signerOf(ca), now);
      await this.repo.insertAuthorityIfAbsent({
        ca_cert: ca.cert,
        ca_key: this.box.seal(ca.key, CA_KEY),
        server_name: this.serverName,
        server_cert: server.cert,
        server_key: this.box.seal(server.key, SERVER_KEY),
        created: isoNow(now),
        updated: isoNow(now),
      });
      row = await this.mustRead();
    }
    const renewBy = new Date(this.now().getTime() + SERVER_RENEW_DAYS * DAY_MS);
    const ends = new Date(new X509Certificate(row.server_cert).validTo);
    if (row.server_name !== this.serverName || ends < renewBy) {
      const server = await this.serverLeaf(await this.signerOf(row), this.now());
      await this.repo.replaceServer(row.server_cert, {
        server_name: this.serverName,
        server_cert: server.cert,
        server_key: this.box.seal(server.key, SERVER_KEY),
        updated: isoNow(this.now()),
      });
      row = await this.mustRead();
    }
    return { row, serverKey: this.box.open(row.server_key, SERVER_KEY) };
  }

  private async mustRead(): Promise<AuthorityRow> {
    const row = await this.repo.authority();
    if (!row) throw new Error("the EAP certificate authority row vanished after it was written");
    return row;
  }

  private async serverLeaf(signer: Signer, now: Date) {
    return (await making()).createLeaf(signer, {
      commonName: this.serverName,
      names: [{ type: "dns", value: this.serverName }],
      purpose: EKU_SERVER_AUTH,
      days: SERVER_DAYS,
      now,
    });
  }
}

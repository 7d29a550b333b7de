// Certificates for WPA-Enterprise: the identity the RADIUS server's EAP methods (PEAP, TTLS, TLS)
// present, from EAP_* files or made by Wisp once per deployment and kept in the database; and the
// client certificates of EAP-TLS, issued per account and checked at every handshake.
import { X509Certificate } from "node:crypto";
import type { Database } from "../../db/database.ts";
import { AppError, NotFoundError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import { SecretBox } from "../webhooks/crypto.ts";
import { GeneratedAuthority } from "./authority.ts";
import { type EapFiles, serverAuthority } from "./files.ts";
import { EKU_CLIENT_AUTH, fingerprint, pemToDer } from "./pem.ts";
import { type PresentedCertificate, presentedCertificate } from "./presented.ts";
import { CertsRepo, type ClientCertificateRow } from "./repo.ts";
import {
  CLIENT_DAYS,
  certificateStatus,
  clientNames,
  defaultServerName,
  identityMatches,
  MAX_CLIENT_DAYS,
  MAX_PKCS12_PASSWORD,
  MIN_PKCS12_PASSWORD,
  normalizeSerial,
  REFUSALS,
} from "./rules.ts";
import type { Signer } from "./x509.ts";

/** Certificate making, loaded when first needed (see pem.ts). */
const making = () => import("./x509.ts");

/** What the EAP engine's TLS needs (structurally the radius door's EapServerCredentials). PEM. */
export interface EapServerCredentials {
  key: string;
  cert: string;
  chain: string[];
  /** The CAs client certificates (EAP-TLS) must chain to. */
  ca: string[];
}

/** The CA clients install to check the server: PEM, DER and SHA-256 fingerprint. */
export interface AuthorityCertificate {
  pem: string;
  der: Buffer;
  fingerprint: string;
  subject: string;
  not_after: string;
}

export interface ClientCertificate {
  serial: string;
  username: string;
  not_before: string;
  not_after: string;
  revoked_at: string | null;
  status: "valid" | "revoked" | "expired";
  fingerprint: string;
  created: string;
}

export interface IssueRequest {
  username: string;
  days?: number | undefined;
  /** Protects the PKCS#12 file. */
  password: string;
}

export interface IssuedCertificate {
  certificate: ClientCertificate;
  /** The certificate alone, PEM (the file holds it too). */
  cert: string;
  /** Certificate, private key and CA, protected by the request's password. */
  pkcs12: Buffer;
}

/** Issuing needs a CA key: Wisp's own, or EAP_CA_KEY_FILE. */
export class NoIssuingAuthorityError extends AppError {
  constructor() {
    super(
      409,
      "client certificates cannot be issued: the CA comes from EAP_CA_FILE and no EAP_CA_KEY_FILE is set " +
        "(issue them with your own CA, or set EAP_CA_KEY_FILE)",
    );
  }
}

export interface CertsOptions {
  files?: EapFiles | undefined;
  /** The DNS name in the generated server certificate; the files' own names otherwise. */
  serverName: string;
  box: SecretBox;
  /** The clock; tests move it. */
  now?: () => Date;
}

const iso = (date: string) => isoNow(new Date(date));

export class CertsService {
  private readonly generated: GeneratedAuthority;
  private readonly now: () => Date;

  constructor(
    private readonly repo: CertsRepo,
    private readonly options: CertsOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.generated = new GeneratedAuthority(repo, options.box, options.serverName, this.now);
  }

  /** Whether the identity comes from EAP_* files (else Wisp's own CA in the database). */
  get fromFiles(): boolean {
    return this.options.files !== undefined;
  }

  /** The server identity for the EAP engine; made and stored on first use when not from files. */
  async serverCredentials(): Promise<EapServerCredentials> {
    const files = this.options.files;
    if (files) return { key: files.key, cert: files.cert, chain: files.chain, ca: files.ca };
    const { row, serverKey } = await this.generated.get();
    return {
      key: serverKey,
      cert: row.server_cert,
      chain: [],
      ca: [row.ca_cert],
    };
  }

  /** The name clients should match (domain_match): the generated certificate's, or the files'. */
  serverName(): string {
    return this.options.serverName;
  }

  /** The CA that clients install to check the server; null when the files do not hold it. */
  async authorityCertificate(): Promise<AuthorityCertificate | null> {
    const pem = this.options.files
      ? serverAuthority(this.options.files)
      : (await this.generated.get()).row.ca_cert;
    if (!pem) return null;
    const cert = new X509Certificate(pem);
    return {
      pem: cert.toString(),
      der: cert.raw,
      fingerprint: fingerprint(cert.raw),
      subject: cert.subject,
      not_after: iso(cert.validTo),
    };
  }

  private async issuingSigner(): Promise<{ signer: Signer; caPem: string }> {
    const files = this.options.files;
    if (!files) {
      const { row } = await this.generated.get();
      return { signer: await this.generated.signer(), caPem: row.ca_cert };
    }
    if (!files.authority) throw new NoIssuingAuthorityError();
    const { cert, keyDer, type, curve } = files.authority;
    return { signer: await (await making()).importSigner(cert, keyDer, type, curve), caPem: cert };
  }

  /** Issues a client certificate for one of the account's users, as a PKCS#12 file. */
  async issue(accountId: number, request: IssueRequest): Promise<IssuedCertificate> {
    const days = request.days ?? CLIENT_DAYS;
    if (!Number.isInteger(days) || days < 1 || days > MAX_CLIENT_DAYS) {
      throw ValidationError.field("days", `must be a whole number from 1 to ${MAX_CLIENT_DAYS}`);
    }
    const length = [...request.password].length;
    if (length < MIN_PKCS12_PASSWORD || length > MAX_PKCS12_PASSWORD) {
      throw ValidationError.field(
        "password",
        `must be ${MIN_PKCS12_PASSWORD} to ${MAX_PKCS12_PASSWORD} characters (it protects the private key)`,
      );
    }
    if (!(await this.repo.userExists(accountId, request.username))) {
      throw new NotFoundError(`no user named "${request.username}" in this account`);
    }
    const { signer, caPem } = await this.issuingSigner();
    const now = this.now();
    const leaf = await (await making()).createLeaf(signer, {
      commonName: request.username,
      names: clientNames(request.username),
      purpose: EKU_CLIENT_AUTH,
      days,
      now,
    });
    const cert = new X509Certificate(leaf.cert);
    const { buildPkcs12 } = await import("./pkcs12.ts");
    const pkcs12 = await buildPkcs12({
      certDer: leaf.der,
      keyDer: pemToDer(leaf.key, "PRIVATE KEY"),
      caDers: [pemToDer(caPem)],
      name: request.username,
      password: request.password,
    });
    // Recorded only once the file exists: a failure above leaves no row for a certificate nobody has.
    const row = await this.repo.transaction(async (repo) => {
      const inserted = await repo.insertClient({
        account_id: accountId,
        serial: normalizeSerial(cert.serialNumber)!,
        username: request.username,
        not_before: iso(cert.validFrom),
        not_after: iso(cert.validTo),
        fingerprint: fingerprint(leaf.der),
        created: isoNow(now),
      });
      const after = this.present(inserted);
      await repo.audit({
        accountId,
        resource: "client_certificate",
        id: inserted.serial,
        action: "create",
        after,
      });
      return inserted;
    });
    return { certificate: this.present(row), cert: leaf.cert, pkcs12 };
  }

  async list(accountId: number, filter: { user?: string | undefined } = {}): Promise<ClientCertificate[]> {
    return (await this.repo.listClients(accountId, filter.user)).map((row) => this.present(row));
  }

  async revoke(accountId: number, serialText: string): Promise<ClientCertificate> {
    const serial = normalizeSerial(serialText);
    if (!serial) throw ValidationError.field("serial", "must be the certificate's serial number in hex");
    const found = await this.repo.findClient(accountId, serial);
    if (!found) throw new NotFoundError(`no client certificate with serial ${serial} in this account`);
    await this.repo.transaction(async (repo) => {
      await repo.revoke(accountId, serial, isoNow(this.now()));
      const before = this.present(found);
      await repo.audit({ accountId, resource: "client_certificate", id: serial, action: "revoke", before });
    });
    return this.present((await this.repo.findClient(accountId, serial))!);
  }

  /**
   * EAP-TLS, after TLS has checked the chain to one of `ca`: null when this certificate may log in
   * as `identity` on the network, else the reason it may not. The exact certificate (serial and
   * fingerprint) must have been issued by this deployment for the network's account, not be
   * revoked or expired, name the identity, and its user must exist; the login itself is then
   * decided like any other (a disabled user is rejected there).
   */
  async checkClientCertificate(
    client: { account_id: number },
    certificate: Buffer | PresentedCertificate,
    identity: string,
  ): Promise<string | null> {
    let cert: PresentedCertificate;
    try {
      cert = Buffer.isBuffer(certificate)
        ? presentedCertificate(new X509Certificate(certificate))
        : certificate;
    } catch {
      return REFUSALS.unreadable;
    }
    const serial = normalizeSerial(cert.serialNumber);
    const row = serial ? await this.repo.findClientForLogin(client.account_id, serial) : undefined;
    if (!row || row.fingerprint !== fingerprint(cert.der)) return REFUSALS.foreign;
    if (row.revoked_at !== null) return REFUSALS.revoked;
    const now = this.now();
    // An unreadable time is NaN: no comparison with it holds, so it is refused as expired.
    if (!(now <= cert.validTo && now >= cert.validFrom) || isoNow(now) > row.not_after)
      return REFUSALS.expired;
    if (!identityMatches(identity, cert.commonName) || identity !== row.username) return REFUSALS.identity;
    if (row.user_id === null) return REFUSALS.noUser;
    return null;
  }

  private present(row: ClientCertificateRow): ClientCertificate {
    const status = certificateStatus(row, isoNow(this.now()));
    return {
      serial: row.serial,
      username: row.username,
      not_before: row.not_before,
      not_after: row.not_after,
      revoked_at: row.revoked_at,
      status,
      fingerprint: row.fingerprint,
      created: row.created,
    };
  }
}

export interface CertsCoreOptions {
  publicUrl: string;
  /** Where the key sealing the private keys comes from (WEBHOOK_SECRET_KEY, else DATA_DIR). */
  webhookSecretKey?: string | undefined;
  dataDir?: string | undefined;
  eapFiles?: EapFiles | undefined;
  /** EAP_SERVER_NAME, checked by the config; unset: the files' first name or defaultServerName. */
  eapServerName?: string | undefined;
}

export function createCerts(database: Database, options: CertsCoreOptions): CertsService {
  const files = options.eapFiles;
  const serverName = options.eapServerName ?? files?.serverNames[0] ?? defaultServerName(options.publicUrl);
  return new CertsService(new CertsRepo(database.db), {
    files,
    serverName,
    box: new SecretBox({ secretKey: options.webhookSecretKey, dataDir: options.dataDir }, "CA private key"),
  });
}

// RadSec certificates: which network a NAS's TLS client certificate belongs to (RadsecTrust, for the
// listener), and each network's RadSec settings for operators (certificates Wisp issues from its
// own RadSec client CA; an outside CA with the rule that matches its certificates to the network).
// Everything an operator changes is scoped by account; only the handshake's lookups span accounts,
// and they answer with one network or a refusal, never with another account's data.
import { createHash, createPrivateKey, X509Certificate } from "node:crypto";
import type { Database } from "../../db/database.ts";
import { EKU_CLIENT_AUTH, fingerprint, pemToDer } from "../certs/pem.ts";
import {
  certificateStatus,
  MAX_PKCS12_PASSWORD,
  MIN_PKCS12_PASSWORD,
  normalizeSerial,
} from "../certs/rules.ts";
import { NotFoundError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import { SecretBox } from "../webhooks/crypto.ts";
import { RadsecAuthority } from "./authority.ts";
import { checkUploadedCa, namesOf, signedBy, spkiOf, subjectHash } from "./inspect.ts";
import { type NasRow, type RadsecCertificateRow, RadsecRepo, type RadsecTrustRow } from "./repo.ts";
import {
  type CertificateNames,
  MATCH_FIELDS,
  MAX_CHAIN_DEPTH,
  MAX_PATTERNS,
  MAX_RADSEC_CERT_DAYS,
  type MatchField,
  type MatchRule,
  patternProblem,
  RADSEC_CERT_DAYS,
  RADSEC_REFUSALS,
  ruleMatches,
} from "./rules.ts";
import type { RadsecIdentity, RadsecPeer, RadsecTrust } from "./types.ts";

/** Certificate making, loaded when first needed (see core/certs/pem.ts). */
const making = () => import("../certs/x509.ts");

export interface RadsecCertificate {
  serial: string;
  subject: string;
  not_before: string;
  not_after: string;
  revoked_at: string | null;
  status: "valid" | "revoked" | "expired";
  /** SHA-256 of the DER, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint: string;
  created: string;
}

export interface IssuedRadsecCertificate {
  certificate: RadsecCertificate;
  /** The certificate, PEM. */
  cert: string;
  /** Its private key, PKCS#8 PEM encrypted with the request's password (AES-256-CBC). */
  key: string;
  /** Wisp's RadSec client CA, which issued it, PEM. */
  ca: string;
  /** Certificate, key and CA as one PKCS#12 file protected by the password. */
  pkcs12: Buffer;
}

export interface TrustedCa {
  subject: string;
  fingerprint: string;
  not_after: string;
  match: MatchRule;
  pem: string;
  created: string;
  updated: string;
}

export interface RadsecIssueRequest {
  days?: number | undefined;
  password: string;
}

export interface RadsecTrustRequest {
  ca: unknown;
  /** { field, patterns }, checked here (it may come from anywhere). */
  match: unknown;
}

export interface RadsecOptions {
  box: SecretBox;
  /** The CAs users' EAP-TLS certificates chain to (PEM): never accepted as a network's CA. */
  eapAuthorities: () => Promise<string[]>;
  /** The clock; tests move it. */
  now?: () => Date;
}

const iso = (date: string) => isoNow(new Date(date));

function notFound(networkId: number): NotFoundError {
  return new NotFoundError(`network ${networkId} not found`);
}

/** The match rule of a request, checked; patterns kept in order, each once. */
function checkRule(input: unknown): MatchRule {
  const match = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const field = match.field;
  if (typeof field !== "string" || !(MATCH_FIELDS as readonly string[]).includes(field)) {
    throw ValidationError.field("match.field", `must be one of ${MATCH_FIELDS.join(", ")}`);
  }
  const patterns = match.patterns;
  if (!Array.isArray(patterns) || patterns.length < 1 || patterns.length > MAX_PATTERNS) {
    throw ValidationError.field("match.patterns", `must be a list of 1 to ${MAX_PATTERNS} patterns`);
  }
  for (const pattern of patterns) {
    const problem = typeof pattern === "string" ? patternProblem(pattern) : "must be text";
    if (problem) throw ValidationError.field("match.patterns", `${JSON.stringify(pattern)} ${problem}`);
  }
  return { field: field as MatchField, patterns: [...new Set(patterns as string[])] };
}

function ruleOf(row: RadsecTrustRow): MatchRule {
  return { field: row.match_field as MatchField, patterns: JSON.parse(row.match_patterns) as string[] };
}

function presentTrust(row: RadsecTrustRow): TrustedCa {
  return {
    subject: row.ca_subject,
    fingerprint: row.ca_fingerprint,
    not_after: row.ca_not_after,
    match: ruleOf(row),
    pem: row.ca_cert,
    created: row.created,
    updated: row.updated,
  };
}

/** What the log line says of a certificate no rule matched: its names, which are not secrets. */
function describeNames(names: CertificateNames): string {
  const parts = [
    ...names.cn.map((n) => `CN=${n}`),
    ...names.dns.map((n) => `DNS:${n}`),
    ...names.uri.map((n) => `URI:${n}`),
  ];
  return parts.length === 0 ? "no names" : parts.join(", ").slice(0, 300);
}

export class RadsecService implements RadsecTrust {
  private readonly authority: RadsecAuthority;
  private readonly now: () => Date;
  private cached: { tag: string; pems: string[] } | undefined;

  constructor(
    private readonly repo: RadsecRepo,
    private readonly options: RadsecOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.authority = new RadsecAuthority(repo, options.box, this.now);
  }

  /** Wisp's RadSec client CA (made on first use). */
  async authorityCertificate(): Promise<{
    pem: string;
    fingerprint: string;
    subject: string;
    not_after: string;
  }> {
    const { pem, cert } = await this.authority.get();
    return { pem, fingerprint: fingerprint(cert.raw), subject: cert.subject, not_after: iso(cert.validTo) };
  }

  private async network(accountId: number, networkId: number): Promise<NasRow> {
    const network = await this.repo.network(accountId, networkId);
    if (!network) throw notFound(networkId);
    return network;
  }

  // ---- Operators: certificates Wisp issues for a network ----

  async certificates(accountId: number, networkId: number): Promise<RadsecCertificate[]> {
    await this.network(accountId, networkId);
    return (await this.repo.certificates(accountId, networkId)).map((row) => this.present(row));
  }

  /** One certificate with its PEM (public, for download; the key is never kept). */
  async certificate(
    accountId: number,
    networkId: number,
    serialText: string,
  ): Promise<{ certificate: RadsecCertificate; cert: string }> {
    const row = await this.findCertificate(accountId, networkId, serialText);
    return { certificate: this.present(row), cert: row.cert };
  }

  private async findCertificate(accountId: number, networkId: number, serialText: string) {
    await this.network(accountId, networkId);
    const serial = normalizeSerial(serialText);
    if (!serial) throw ValidationError.field("serial", "must be the certificate's serial number in hex");
    const row = await this.repo.certificate(accountId, networkId, serial);
    if (!row) throw new NotFoundError(`network ${networkId} has no RadSec certificate with serial ${serial}`);
    return row;
  }

  /** Issues a client certificate for the network's NAS from Wisp's RadSec CA. */
  async issue(
    accountId: number,
    networkId: number,
    request: RadsecIssueRequest,
  ): Promise<IssuedRadsecCertificate> {
    const days = request.days ?? RADSEC_CERT_DAYS;
    if (!Number.isInteger(days) || days < 1 || days > MAX_RADSEC_CERT_DAYS) {
      throw ValidationError.field("days", `must be a whole number from 1 to ${MAX_RADSEC_CERT_DAYS}`);
    }
    const length = typeof request.password === "string" ? [...request.password].length : 0;
    if (length < MIN_PKCS12_PASSWORD || length > MAX_PKCS12_PASSWORD) {
      throw ValidationError.field(
        "password",
        `must be ${MIN_PKCS12_PASSWORD} to ${MAX_PKCS12_PASSWORD} characters (it protects the private key)`,
      );
    }
    await this.network(accountId, networkId);
    const { pem: caPem } = await this.authority.get();
    const now = this.now();
    const name = `wisp-network-${networkId}`;
    const leaf = await (await making()).createLeaf(await this.authority.signer(), {
      commonName: name,
      names: [{ type: "url", value: `urn:wisp:network:${networkId}` }],
      purpose: EKU_CLIENT_AUTH,
      days,
      now,
    });
    const cert = new X509Certificate(leaf.cert);
    const { buildPkcs12 } = await import("../certs/pkcs12.ts");
    const pkcs12 = await buildPkcs12({
      certDer: leaf.der,
      keyDer: pemToDer(leaf.key, "PRIVATE KEY"),
      caDers: [pemToDer(caPem)],
      name,
      password: request.password,
    });
    const key = createPrivateKey(leaf.key).export({
      type: "pkcs8",
      format: "pem",
      cipher: "aes-256-cbc",
      passphrase: request.password,
    }) as string;
    // Recorded once the files exist: a failure above leaves no row for a certificate nobody has.
    const row = await this.repo.transaction(async (repo) => {
      const inserted = await repo.insertCertificate({
        account_id: accountId,
        network_id: networkId,
        serial: normalizeSerial(cert.serialNumber)!,
        subject: cert.subject,
        not_before: iso(cert.validFrom),
        not_after: iso(cert.validTo),
        fingerprint: fingerprint(leaf.der),
        cert: leaf.cert,
        created: isoNow(now),
      });
      const after = { network_id: networkId, ...this.present(inserted) };
      await repo.audit({
        accountId,
        resource: "radsec_certificate",
        id: inserted.serial,
        action: "create",
        after,
      });
      return inserted;
    });
    return { certificate: this.present(row), cert: leaf.cert, key, ca: caPem, pkcs12 };
  }

  /** Revokes the certificate: the listener refuses it from the next handshake. */
  async revoke(accountId: number, networkId: number, serialText: string): Promise<RadsecCertificate> {
    const row = await this.findCertificate(accountId, networkId, serialText);
    await this.repo.transaction(async (repo) => {
      await repo.revoke(accountId, networkId, row.serial, isoNow(this.now()));
      const before = { network_id: networkId, ...this.present(row) };
      await repo.audit({
        accountId,
        resource: "radsec_certificate",
        id: row.serial,
        action: "revoke",
        before,
      });
    });
    return this.present((await this.repo.certificate(accountId, networkId, row.serial))!);
  }

  private present(row: RadsecCertificateRow): RadsecCertificate {
    const status = certificateStatus(row, isoNow(this.now()));
    return {
      serial: row.serial,
      subject: row.subject,
      not_before: row.not_before,
      not_after: row.not_after,
      revoked_at: row.revoked_at,
      status,
      fingerprint: row.fingerprint,
      created: row.created,
    };
  }

  // ---- Operators: an outside CA for a network ----

  async trusted(accountId: number, networkId: number): Promise<TrustedCa | null> {
    await this.network(accountId, networkId);
    const row = await this.repo.trust(accountId, networkId);
    return row ? presentTrust(row) : null;
  }

  /** Uploads (or replaces) the network's outside CA and its match rule. */
  async trust(accountId: number, networkId: number, request: RadsecTrustRequest): Promise<TrustedCa> {
    const match = checkRule(request.match);
    const now = this.now();
    const cert = await checkUploadedCa(request.ca, now);
    await this.refuseOwnAuthorities(cert);
    await this.network(accountId, networkId);
    const row = await this.repo.transaction(async (repo) => {
      const before = await repo.trust(accountId, networkId);
      const stored = await repo.putTrust({
        account_id: accountId,
        network_id: networkId,
        ca_cert: cert.toString(),
        ca_subject: cert.subject.slice(0, 1024),
        ca_subject_hash: subjectHash(cert.subject),
        ca_fingerprint: fingerprint(cert.raw),
        ca_not_after: iso(cert.validTo),
        match_field: match.field,
        match_patterns: JSON.stringify(match.patterns),
        created: isoNow(now),
        updated: isoNow(now),
      });
      const after = presentTrust(stored);
      await repo.audit({
        accountId,
        resource: "radsec_ca",
        id: networkId,
        action: "update",
        before: before && presentTrust(before),
        after,
      });
      return stored;
    });
    return presentTrust(row);
  }

  /**
   * Wisp's RadSec CA would let the network claim every network's Wisp certificates, and the EAP CA
   * every user's EAP-TLS certificate: neither may be uploaded (same key, whatever the certificate).
   */
  private async refuseOwnAuthorities(cert: X509Certificate): Promise<void> {
    const key = spkiOf(cert);
    const own = [(await this.authority.get()).pem, ...(await this.options.eapAuthorities())];
    for (const pem of own) {
      if (spkiOf(new X509Certificate(pem)).equals(key)) {
        throw ValidationError.field(
          "ca",
          "is one of Wisp's own CAs (RadSec or EAP): issue network certificates instead",
        );
      }
    }
  }

  async untrust(accountId: number, networkId: number): Promise<void> {
    await this.network(accountId, networkId);
    await this.repo.transaction(async (repo) => {
      const before = await repo.trust(accountId, networkId);
      if (!before || !(await repo.deleteTrust(accountId, networkId))) {
        throw new NotFoundError(`network ${networkId} has no uploaded RadSec CA`);
      }
      await repo.audit({
        accountId,
        resource: "radsec_ca",
        id: networkId,
        action: "delete",
        before: presentTrust(before),
      });
    });
  }

  /** Which of the account's networks have RadSec set up (a certificate not revoked, or a CA). */
  networksWithRadsec(accountId: number, networkIds: number[]): Promise<Set<number>> {
    return this.repo.networksWithRadsec(accountId, networkIds);
  }

  // ---- The listener (RadsecTrust) ----

  /**
   * Wisp's RadSec CA and every uploaded CA, each once. The poll reads only the fingerprints; the
   * certificates are read again when they changed.
   */
  async authorities(): Promise<{ tag: string; pems: string[] }> {
    const ours = await this.authorityCertificate();
    const tagOf = (fingerprints: string[]) =>
      createHash("sha256")
        .update([ours.fingerprint, ...fingerprints].join("\n"))
        .digest("hex")
        .slice(0, 32);
    const quick = tagOf(await this.repo.trustFingerprints());
    if (this.cached?.tag === quick) return this.cached;
    const unique = new Map<string, string>();
    for (const row of await this.repo.trustCertificates()) unique.set(row.ca_fingerprint, row.ca_cert);
    this.cached = { tag: tagOf([...unique.keys()]), pems: [ours.pem, ...unique.values()] };
    return this.cached;
  }

  async identify(peer: RadsecPeer): Promise<RadsecIdentity> {
    let leaf: X509Certificate;
    try {
      leaf = new X509Certificate(peer.chain[0] ?? Buffer.alloc(0));
    } catch {
      return { refused: RADSEC_REFUSALS.unreadable };
    }
    if (leaf.ca) return { refused: RADSEC_REFUSALS.caLeaf };
    const now = this.now();
    if (now > new Date(leaf.validTo) || now < new Date(leaf.validFrom))
      return { refused: RADSEC_REFUSALS.expired };
    const ours = await this.authority.get();
    if (signedBy(leaf, ours.cert)) return this.identifyIssued(leaf);
    return this.identifyUploaded(leaf, peer.chain.slice(1));
  }

  /** A certificate of Wisp's RadSec CA: the exact one issued with this serial, not revoked. */
  private async identifyIssued(leaf: X509Certificate): Promise<RadsecIdentity> {
    const serial = normalizeSerial(leaf.serialNumber);
    const row = serial ? await this.repo.certificateBySerial(serial) : undefined;
    if (!row) return { refused: RADSEC_REFUSALS.unknownSerial };
    if (row.fingerprint !== fingerprint(leaf.raw)) return { refused: RADSEC_REFUSALS.tampered };
    if (row.revoked_at !== null) return { refused: RADSEC_REFUSALS.revoked };
    if (isoNow(this.now()) > row.not_after) return { refused: RADSEC_REFUSALS.expired };
    const network = await this.repo.network(row.account_id, row.network_id);
    return network ? { network } : { refused: RADSEC_REFUSALS.networkGone };
  }

  /**
   * A certificate of an uploaded CA: only the networks that uploaded a CA which signed it (checked
   * by signature, not name) are considered, so one account's rules never see another account's
   * CA; exactly one of them must match, or the certificate is refused.
   */
  private async identifyUploaded(leaf: X509Certificate, intermediates: Buffer[]): Promise<RadsecIdentity> {
    const candidates = await this.issuingTrust(leaf, intermediates);
    if (candidates.length === 0) return { refused: RADSEC_REFUSALS.untrusted };
    const names = await namesOf(leaf.raw);
    const matched = new Map<string, RadsecTrustRow>();
    for (const row of candidates) {
      if (ruleMatches(ruleOf(row), names)) matched.set(`${row.account_id}:${row.network_id}`, row);
    }
    if (matched.size === 0) return { refused: `${RADSEC_REFUSALS.noMatch} (${describeNames(names)})` };
    if (matched.size > 1) return { refused: RADSEC_REFUSALS.ambiguous };
    const [only] = matched.values();
    const network = await this.repo.network(only!.account_id, only!.network_id);
    return network ? { network } : { refused: RADSEC_REFUSALS.networkGone };
  }

  /** The uploaded CAs that signed the leaf, directly or through intermediates the NAS sent. */
  private async issuingTrust(leaf: X509Certificate, intermediates: Buffer[]): Promise<RadsecTrustRow[]> {
    const pool: X509Certificate[] = [];
    for (const der of intermediates.slice(0, MAX_CHAIN_DEPTH)) {
      try {
        const cert = new X509Certificate(der);
        if (cert.ca) pool.push(cert);
      } catch {
        // an unreadable extra certificate leads nowhere; TLS already checked the chain it used
      }
    }
    let current = leaf;
    for (let depth = 0; depth <= MAX_CHAIN_DEPTH; depth++) {
      const rows = await this.repo.trustByIssuer(subjectHash(current.issuer));
      const issuing = rows.filter((row) => signedBy(current, new X509Certificate(row.ca_cert)));
      if (issuing.length > 0) return issuing;
      const next = pool.find((cert) => cert !== current && signedBy(current, cert));
      if (!next) return [];
      current = next;
    }
    return [];
  }
}

export interface RadsecCoreOptions {
  webhookSecretKey?: string | undefined;
  dataDir?: string | undefined;
}

export function createRadsec(
  database: Database,
  options: RadsecCoreOptions,
  eapAuthorities: () => Promise<string[]>,
): RadsecService {
  return new RadsecService(new RadsecRepo(database.db), {
    box: new SecretBox(
      { secretKey: options.webhookSecretKey, dataDir: options.dataDir },
      "RadSec CA private key",
    ),
    eapAuthorities,
  });
}

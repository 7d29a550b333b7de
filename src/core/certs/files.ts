// The EAP server identity from files (EAP_CERT_FILE, EAP_KEY_FILE, EAP_CA_FILE, EAP_CA_KEY_FILE),
// read and checked when a process starts, synchronously with node:crypto, so a bad file stops it
// with one line naming the file and the problem, before any client meets a broken handshake.
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import fs from "node:fs";
import { EKU_CLIENT_AUTH, EKU_SERVER_AUTH } from "./pem.ts";

export interface EapFileSettings {
  certFile?: string | undefined;
  keyFile?: string | undefined;
  caFile?: string | undefined;
  caKeyFile?: string | undefined;
}

/** The CA key that signs client certificates, with the certificate of EAP_CA_FILE it belongs to. */
export interface FileAuthority {
  cert: string;
  /** PKCS#8 DER. */
  keyDer: Buffer;
  type: "rsa" | "ec";
  curve: string | undefined;
}

export interface EapFiles {
  /** The server certificate (the first in EAP_CERT_FILE), PEM. */
  cert: string;
  /** The rest of EAP_CERT_FILE: intermediates sent after the server certificate, PEM. */
  chain: string[];
  /** The server's private key, PKCS#8 PEM. */
  key: string;
  /** EAP_CA_FILE: the CAs client certificates must chain to, PEM; empty without the file. */
  ca: string[];
  /** EAP_CA_KEY_FILE with its certificate; absent: client certificates cannot be issued. */
  authority: FileAuthority | undefined;
  /** DNS names of the server certificate (SAN, else CN): what clients match (domain_match). */
  serverNames: string[];
}

export class EapFileError extends Error {}

const ANY_PURPOSE = "2.5.29.37.0";

function read(setting: string, file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code;
    throw new EapFileError(`${setting}: cannot read ${file}: ${why ?? (error as Error).message}`);
  }
}

function certificates(setting: string, file: string): X509Certificate[] {
  const blocks =
    read(setting, file).match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new EapFileError(`${setting}: ${file} holds no PEM certificate`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new EapFileError(`${setting}: certificate ${i + 1} in ${file} is not a valid X.509 certificate`);
    }
  });
}

function privateKey(setting: string, file: string): KeyObject {
  const text = read(setting, file);
  if (/ENCRYPTED/.test(text)) {
    throw new EapFileError(
      `${setting}: ${file} is encrypted; give the key unencrypted (and chmod 600 ${file})`,
    );
  }
  try {
    return createPrivateKey(text);
  } catch {
    throw new EapFileError(`${setting}: ${file} holds no PEM private key`);
  }
}

/** Whether the certificate may serve `purpose`: no EKU at all, the purpose, or any purpose. */
function allows(cert: X509Certificate, purpose: string): boolean {
  const usages = cert.keyUsage; // node:crypto's name for the extended key usages
  return !usages || usages.length === 0 || usages.includes(purpose) || usages.includes(ANY_PURPOSE);
}

function current(setting: string, file: string, cert: X509Certificate, now: Date): void {
  if (new Date(cert.validTo) < now) {
    throw new EapFileError(`${setting}: the certificate in ${file} expired on ${cert.validTo}`);
  }
}

/** The DNS names in the SAN, else the CN (RFC 6125 section 6.4.4, as domain_match does). */
export function dnsNames(cert: X509Certificate): string[] {
  const san = (cert.subjectAltName ?? "")
    .split(", ")
    .filter((name) => name.startsWith("DNS:"))
    .map((name) => name.slice(4));
  if (san.length > 0) return san;
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject);
  return cn ? [cn[1]!] : [];
}

function pkcs8Pem(key: KeyObject): string {
  return key.export({ type: "pkcs8", format: "pem" }).toString();
}

/** Reads and checks the configured files; undefined when none is configured (Wisp makes its own). */
export function loadEapFiles(settings: EapFileSettings, now = new Date()): EapFiles | undefined {
  const { certFile, keyFile, caFile, caKeyFile } = settings;
  if (!certFile && !keyFile && !caFile && !caKeyFile) return undefined;
  if (!certFile || !keyFile) {
    throw new EapFileError(
      "EAP_CERT_FILE and EAP_KEY_FILE go together (EAP_CA_FILE and EAP_CA_KEY_FILE need them too); " +
        "leave all unset to let Wisp make its own CA and server certificate",
    );
  }
  if (caKeyFile && !caFile)
    throw new EapFileError("EAP_CA_KEY_FILE needs EAP_CA_FILE (the CA certificate it belongs to)");
  const [server, ...chain] = certificates("EAP_CERT_FILE", certFile);
  const key = privateKey("EAP_KEY_FILE", keyFile);
  if (!server!.checkPrivateKey(key)) {
    throw new EapFileError(`EAP_KEY_FILE: ${keyFile} does not match the certificate in ${certFile}`);
  }
  current("EAP_CERT_FILE", certFile, server!, now);
  if (!allows(server!, EKU_SERVER_AUTH)) {
    throw new EapFileError(
      `EAP_CERT_FILE: the certificate in ${certFile} has an extended key usage without serverAuth; ` +
        "supplicants refuse it (OpenSSL error 26, unsuitable certificate purpose)",
    );
  }
  const ca = caFile ? certificates("EAP_CA_FILE", caFile) : [];
  for (const [i, cert] of ca.entries()) {
    if (!cert.ca)
      throw new EapFileError(`EAP_CA_FILE: certificate ${i + 1} in ${caFile} is not a CA (CA:TRUE)`);
  }
  return {
    cert: server!.toString(),
    chain: chain.map((cert) => cert.toString()),
    key: pkcs8Pem(key),
    ca: ca.map((cert) => cert.toString()),
    authority: caKeyFile ? fileAuthority(caKeyFile, caFile!, ca) : undefined,
    serverNames: dnsNames(server!),
  };
}

function fileAuthority(caKeyFile: string, caFile: string, ca: X509Certificate[]): FileAuthority {
  const key = privateKey("EAP_CA_KEY_FILE", caKeyFile);
  const cert = ca.find((candidate) => candidate.checkPrivateKey(key));
  if (!cert) throw new EapFileError(`EAP_CA_KEY_FILE: ${caKeyFile} matches no certificate in ${caFile}`);
  const type = key.asymmetricKeyType;
  if (type !== "rsa" && type !== "ec") {
    throw new EapFileError(`EAP_CA_KEY_FILE: ${caKeyFile} is a ${type} key; Wisp signs with RSA or EC keys`);
  }
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (type === "ec" && !["prime256v1", "secp384r1", "secp521r1"].includes(curve ?? "")) {
    throw new EapFileError(
      `EAP_CA_KEY_FILE: ${caKeyFile} uses curve ${curve}; Wisp signs with P-256, P-384 or P-521`,
    );
  }
  if (!allows(cert, EKU_CLIENT_AUTH)) {
    throw new EapFileError(
      `EAP_CA_FILE: the CA in ${caFile} that EAP_CA_KEY_FILE belongs to excludes clientAuth`,
    );
  }
  return { cert: cert.toString(), keyDer: key.export({ type: "pkcs8", format: "der" }), type, curve };
}

/**
 * Of the server certificate's chain, the CA clients should trust: the self-signed top of
 * EAP_CERT_FILE (which may be the server certificate itself), or the certificate in EAP_CA_FILE
 * that issued the top. undefined when neither
 * file holds it (the operator hands out the CA themselves).
 */
export function serverAuthority(files: EapFiles): string | undefined {
  const chain = [files.cert, ...files.chain].map((pem) => new X509Certificate(pem));
  const top = chain[chain.length - 1]!;
  // A self-signed top (the root after intermediates, or a self-signed server certificate alone).
  if (selfSigned(top)) return top.toString();
  return issuerAmong(
    top,
    files.ca.map((pem) => new X509Certificate(pem)),
  )?.toString();
}

function selfSigned(cert: X509Certificate): boolean {
  return cert.checkIssued(cert) && cert.verify(cert.publicKey);
}

function issuerAmong(cert: X509Certificate, candidates: X509Certificate[]): X509Certificate | undefined {
  return candidates.find((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey));
}

/**
 * The certificates TLS sends after the server's own (PEM): `chain` when one is configured, else
 * the issuers found among `ca` up to a self-signed one. That is the chain OpenSSL would build
 * from its trust store on every handshake (ssl_add_cert_chain, "auto chain": X509_verify_cert
 * per handshake, 1.3% of an EAP login's CPU measured here); built once, the wire is the same.
 */
export function sentChain(cert: string, chain: readonly string[], ca: readonly string[]): string[] {
  if (chain.length > 0) return [...chain];
  const authorities = ca.map((pem) => new X509Certificate(pem));
  const sent: X509Certificate[] = [];
  let top = new X509Certificate(cert);
  while (!selfSigned(top) && sent.length < authorities.length) {
    const issuer = issuerAmong(top, authorities);
    if (!issuer || sent.includes(issuer)) break;
    sent.push(issuer);
    top = issuer;
  }
  return sent.map((c) => c.toString());
}

// Making certificates: Wisp's own CA, the RADIUS server's certificate and client certificates for
// EAP-TLS, built with @peculiar/x509 on node:crypto's WebCrypto (never the openssl command).
//
// Keys are ECDSA P-256 (RFC 5480): the EAP lab measured 15-25 % less server CPU per login than RSA
// 2048 and one round trip fewer (the first server flight is smaller), and wpa_supplicant, Windows,
// Android, iOS and macOS all accept P-256 for EAP-TLS, PEAP and TTLS.
import "reflect-metadata"; // @peculiar/x509 resolves its parts through tsyringe, which needs it
import { randomBytes, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { EKU_CLIENT_AUTH, EKU_SERVER_AUTH, fingerprint, pemToDer, toPem } from "./pem.ts";

/** The library itself, for readers of extensions (a dynamic import of it breaks in the bundle). */
export { EKU_CLIENT_AUTH, EKU_SERVER_AUTH, fingerprint, pemToDer, toPem, x509 as peculiar };

x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const { subtle } = webcrypto;

/** ECDSA P-256 with SHA-256 (RFC 5758 section 3.2), for key generation and signatures alike. */
export const P256 = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

export interface KeyPair {
  publicKey: CryptoKey;
  privateKey: CryptoKey;
}

/** A certificate with the private key that goes with it, both PEM. */
export interface CertifiedKey {
  cert: string;
  key: string;
}

export function generateKeyPair(): Promise<KeyPair> {
  return subtle.generateKey(P256, true, ["sign", "verify"]) as Promise<KeyPair>;
}

export async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await subtle.exportKey("pkcs8", key));
  return toPem("PRIVATE KEY", der);
}

/**
 * A random positive serial of 16 octets (RFC 5280 section 4.1.2.2: positive, at most 20 octets;
 * CA/B Forum: at least 64 random bits). The first octet is 01-7f, so the DER INTEGER needs no
 * leading zero and the hex form is always 32 characters, the same as node:crypto prints it.
 */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f || 0x01;
  return bytes.toString("hex");
}

/** How a certificate of `days` starts: a minute back, so a clock slightly behind still accepts it. */
function validity(days: number, now: Date): { notBefore: Date; notAfter: Date } {
  return {
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + days * 86_400_000),
  };
}

/** A signing key the CA can use: Wisp's own P-256 key, or an RSA/EC key from EAP_CA_KEY_FILE. */
export interface Signer {
  cert: x509.X509Certificate;
  key: CryptoKey;
  algorithm: Algorithm | EcdsaParams;
}

/**
 * Imports a CA's PKCS#8 private key for signing. RSA signs with PKCS#1 v1.5 and SHA-256; EC keys
 * with ECDSA and the hash that matches the curve's strength (RFC 5758 section 3.2).
 */
export async function importSigner(certPem: string, keyDer: Buffer, type: "rsa" | "ec", curve?: string) {
  const cert = new x509.X509Certificate(certPem);
  if (type === "rsa") {
    const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    const key = await subtle.importKey("pkcs8", keyDer, algorithm, false, ["sign"]);
    return { cert, key, algorithm };
  }
  const namedCurve = { prime256v1: "P-256", secp384r1: "P-384", secp521r1: "P-521" }[curve ?? ""];
  if (!namedCurve) throw new Error(`the CA key's curve ${curve} is not P-256, P-384 or P-521`);
  const hash = { "P-256": "SHA-256", "P-384": "SHA-384", "P-521": "SHA-512" }[namedCurve];
  const key = await subtle.importKey("pkcs8", keyDer, { name: "ECDSA", namedCurve }, false, ["sign"]);
  return { cert, key, algorithm: { name: "ECDSA", hash } };
}

export async function signerOf(authority: CertifiedKey): Promise<Signer> {
  return importSigner(authority.cert, pemToDer(authority.key, "PRIVATE KEY"), "ec", "prime256v1");
}

/** Wisp's own CA: self-signed, may sign end-entity certificates only (path length 0). */
export async function createAuthority(name: string, days: number, now = new Date()): Promise<CertifiedKey> {
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{ CN: [name] }],
    ...validity(days, now),
    signingAlgorithm: P256,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString("pem"), key: await privateKeyPem(keys.privateKey) };
}

interface LeafRequest {
  commonName: string;
  names: x509.JsonGeneralNames;
  purpose: typeof EKU_SERVER_AUTH | typeof EKU_CLIENT_AUTH;
  days: number;
  serial?: string;
  now?: Date;
}

/** An end-entity certificate signed by `signer`, with a key made for it. */
export async function createLeaf(
  signer: Signer,
  request: LeafRequest,
): Promise<CertifiedKey & { der: Buffer }> {
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: request.serial ?? randomSerial(),
    subject: [{ CN: [request.commonName] }],
    issuer: signer.cert.subjectName,
    ...validity(request.days, request.now ?? new Date()),
    signingAlgorithm: signer.algorithm,
    publicKey: keys.publicKey,
    signingKey: signer.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      // ECDHE-ECDSA suites sign with the key; RSA key exchange would need keyEncipherment too.
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      // eap-lab.md trap 3: OpenSSL refuses a server without serverAuth, a client without clientAuth.
      new x509.ExtendedKeyUsageExtension([request.purpose]),
      new x509.SubjectAlternativeNameExtension(request.names),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(signer.cert, false),
    ],
  });
  return {
    cert: cert.toString("pem"),
    key: await privateKeyPem(keys.privateKey),
    der: Buffer.from(cert.rawData),
  };
}

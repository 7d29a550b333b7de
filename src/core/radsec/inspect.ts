// Reading certificates for RadSec: the names a match rule looks at, the checks an uploaded CA must
// pass, and whether one certificate signed another. Hostile input throws ValidationError with a
// message that says what is wrong, never a parser's stack.
import { createHash, X509Certificate } from "node:crypto";
import { ValidationError } from "../shared/errors.ts";
import type { CertificateNames } from "./rules.ts";
import { MAX_CA_PEM } from "./rules.ts";

/**
 * @peculiar/x509 (reflect-metadata before it), loaded when first needed (core/certs/pem.ts), through
 * x509.ts: the bundle's dynamic import of the package itself gives its CommonJS wrapper.
 */
async function peculiar() {
  return (await import("../certs/x509.ts")).peculiar;
}

/** SHA-256 of a subject as node:crypto prints it: the key uploaded CAs are found by. */
export function subjectHash(subject: string): string {
  return createHash("sha256").update(subject).digest("hex");
}

/** The subject CNs and the subjectAltName DNS and URI values of a certificate. */
export async function namesOf(der: Buffer): Promise<CertificateNames> {
  const x509 = await peculiar();
  const cert = new x509.X509Certificate(new Uint8Array(der));
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const items = san?.names.items ?? [];
  return {
    cn: cert.subjectName.getField("CN"),
    dns: items.filter((n) => n.type === "dns").map((n) => n.value),
    uri: items.filter((n) => n.type === "url").map((n) => n.value),
  };
}

/** Whether `cert` carries a signature made with `issuer`'s key (and names it as issuer). */
export function signedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.issuer === issuer.subject && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/** The key of a certificate as DER SubjectPublicKeyInfo: two CAs with the same key are one CA. */
export function spkiOf(cert: X509Certificate): Buffer {
  return cert.publicKey.export({ type: "spki", format: "der" });
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** The one CERTIFICATE of an uploaded PEM; refuses keys, bundles and anything else. */
function onlyCertificate(pem: unknown): X509Certificate {
  if (typeof pem !== "string" || pem.trim() === "")
    throw ValidationError.field("ca", "must be a PEM certificate");
  if (pem.length > MAX_CA_PEM) throw ValidationError.field("ca", `must be at most ${MAX_CA_PEM} characters`);
  if (/PRIVATE KEY/.test(pem)) {
    throw ValidationError.field("ca", "holds a private key: send the CA's certificate only, never its key");
  }
  const blocks = [...pem.matchAll(BLOCK)];
  const rest = pem.replace(BLOCK, "").trim();
  if (blocks.length !== 1 || blocks[0]![1] !== "CERTIFICATE" || rest !== "") {
    throw ValidationError.field(
      "ca",
      "must be exactly one PEM block -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- and nothing else",
    );
  }
  try {
    return new X509Certificate(blocks[0]![0]);
  } catch {
    throw ValidationError.field("ca", "is not a readable X.509 certificate");
  }
}

/** Refuses keys OpenSSL's default security level refuses anyway, with a clearer message. */
function checkKey(cert: X509Certificate): void {
  const key = cert.publicKey;
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if ((key.asymmetricKeyType === "rsa" || key.asymmetricKeyType === "rsa-pss") && bits < 2048) {
    throw ValidationError.field("ca", `has an RSA key of ${bits} bits; at least 2048 are needed`);
  }
  if (!["rsa", "rsa-pss", "ec", "ed25519", "ed448"].includes(key.asymmetricKeyType ?? "")) {
    throw ValidationError.field("ca", `has a ${key.asymmetricKeyType} key, which TLS cannot use`);
  }
}

/**
 * An uploaded CA: one certificate that may sign others (RFC 5280 section 4.2.1.9 cA, and
 * section 4.2.1.3 keyCertSign when key usage is present), not expired, with a usable key.
 */
export async function checkUploadedCa(pem: unknown, now: Date): Promise<X509Certificate> {
  const cert = onlyCertificate(pem);
  if (!cert.ca) {
    throw ValidationError.field(
      "ca",
      "is not a CA certificate (no basicConstraints cA=TRUE): upload the CA that issued the NAS certificates, not a NAS certificate",
    );
  }
  const x509 = await peculiar();
  const usage = new x509.X509Certificate(new Uint8Array(cert.raw)).getExtension(x509.KeyUsagesExtension);
  if (usage && (usage.usages & x509.KeyUsageFlags.keyCertSign) === 0) {
    throw ValidationError.field("ca", "may not sign certificates (its key usage lacks keyCertSign)");
  }
  if (new Date(cert.validTo) <= now) throw ValidationError.field("ca", `expired on ${cert.validTo}`);
  checkKey(cert);
  return cert;
}

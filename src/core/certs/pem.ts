// Certificate helpers that need only node:crypto: PEM and DER, fingerprints, key purposes. Kept
// apart from x509.ts so that reading a certificate does not load @peculiar/x509 and its
// dependencies (about 0.8 s of CPU at every process start, measured): those load when a
// certificate is made.
import { createHash } from "node:crypto";

/** RFC 5280 section 4.2.1.12 key purposes, and RFC 4556's Microsoft UPN name type for the SAN. */
export const EKU_SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
export const EKU_CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

export function toPem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** The DER inside the first PEM block of `label`. */
export function pemToDer(pem: string, label = "CERTIFICATE"): Buffer {
  const match = new RegExp(`-----BEGIN ${label}-----([^-]+)-----END ${label}-----`).exec(pem);
  if (!match) throw new Error(`no ${label} PEM block`);
  return Buffer.from(match[1]!.replace(/\s+/g, ""), "base64");
}

/** SHA-256 of the DER, as hex pairs joined by colons (as `openssl x509 -fingerprint -sha256`). */
export function fingerprint(der: Buffer): string {
  return createHash("sha256")
    .update(der)
    .digest("hex")
    .toUpperCase()
    .replace(/(..)(?!$)/g, "$1:");
}

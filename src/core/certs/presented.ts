// What an EAP-TLS login's client certificate says, however it was read: from node's
// X509Certificate, or by the OpenSSL addon from the certificate the handshake already parsed
// (src/radius/eap/native/openssl-tunnel.c peerCertificateFacts), which spares the login building
// an X509Certificate again (about 97 µs, most of it OpenSSL 3 decoding a public key no check reads).
import type { X509Certificate } from "node:crypto";

export interface PresentedCertificate {
  der: Buffer;
  /** Hex, as X509Certificate.serialNumber writes it. */
  serialNumber: string;
  validFrom: Date;
  validTo: Date;
  /** The subject's first CN; undefined without one. */
  commonName: string | undefined;
  /**
   * The subject's CNs, then its subjectAltName's DNS names, email addresses and URIs: the identities
   * it may log in as (an IP address or an otherName is none).
   */
  names: string[];
}

/** The subjectAltName entries that name an identity, as node prints their kinds. */
const NAME_KINDS = new Set(["DNS", "email", "URI"]);

/** The same from node's X509Certificate (node prints subjects one attribute per line). */
export function presentedCertificate(certificate: X509Certificate): PresentedCertificate {
  const names: string[] = [];
  for (const line of certificate.subject.split("\n")) {
    if (line.startsWith("CN=")) names.push(line.slice(3));
  }
  const commonName = names[0];
  for (const entry of (certificate.subjectAltName ?? "").split(", ")) {
    const colon = entry.indexOf(":");
    if (NAME_KINDS.has(entry.slice(0, colon))) names.push(entry.slice(colon + 1).replace(/^"|"$/g, ""));
  }
  return {
    der: certificate.raw,
    serialNumber: certificate.serialNumber,
    validFrom: new Date(certificate.validFrom),
    validTo: new Date(certificate.validTo),
    commonName,
    names,
  };
}

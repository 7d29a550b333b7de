// The rules of Wisp's certificates: lifetimes, the server name, the shape of client certificates,
// and why an EAP-TLS client certificate is refused.
import type { JsonGeneralNames } from "@peculiar/x509";

/** Wisp's own CA lives 20 years: clients that trust it should not have to be touched again. */
export const AUTHORITY_DAYS = 20 * 365;
export const AUTHORITY_NAME = "Wisp EAP CA";
/** The generated server certificate: two years, renewed (same CA) when 30 days or fewer remain. */
export const SERVER_DAYS = 730;
export const SERVER_RENEW_DAYS = 30;
/** Client certificates: one year unless --days says otherwise, at most ten. */
export const CLIENT_DAYS = 365;
export const MAX_CLIENT_DAYS = 3650;
/** The PKCS#12 password: long enough that the file is not the weak point. */
export const MIN_PKCS12_PASSWORD = 8;
export const MAX_PKCS12_PASSWORD = 1024;

/** The server name when EAP_SERVER_NAME is unset and PUBLIC_URL has no usable host name. */
export const DEFAULT_SERVER_NAME = "radius.wisp.local";
const DNS_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isServerName(name: string): boolean {
  return DNS_NAME.test(name);
}

/**
 * The name the server certificate carries and clients match (wpa_supplicant domain_match, the
 * "domain" of Android, the trusted server name of Windows): PUBLIC_URL's host when it is a DNS name
 * with a dot (the operator's own domain), else radius.wisp.local. It is never looked up in the DNS.
 */
export function defaultServerName(publicUrl: string): string {
  const host = new URL(publicUrl).hostname;
  return isServerName(host) && !/^[\d.]+$/.test(host) ? host.toLowerCase() : DEFAULT_SERVER_NAME;
}

/**
 * A client certificate names its user in the subject CN (what FreeRADIUS's check_cert_cn and most
 * RADIUS servers compare with the EAP identity) and in the SAN as a Microsoft UPN otherName (what
 * Windows maps to an account); a username that is an email address is also an rfc822Name.
 */
export function clientNames(username: string): JsonGeneralNames {
  const names: JsonGeneralNames = [{ type: "upn", value: username }];
  if (/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(username)) names.push({ type: "email", value: username });
  return names;
}

/**
 * Whether the EAP identity is the certificate's user: equal to the CN, octet for octet. Case
 * matters, as in check_cert_cn and in Wisp's usernames (alice and Alice are two users). A realm is
 * not stripped: a certificate for alice@example.org logs in as alice@example.org.
 */
export function identityMatches(identity: string, commonName: string | undefined): boolean {
  return commonName !== undefined && identity === commonName;
}

/** Why checkClientCertificate refuses; null means the certificate may log in. */
export const REFUSALS = {
  revoked: "certificate revoked",
  expired: "certificate expired",
  foreign: "certificate not issued by Wisp for this account",
  identity: "identity does not match the certificate",
  unreadable: "certificate cannot be read",
  noUser: "user not found",
} as const;

/** Serials as the CLI and the database write them: lowercase hex, no colons, no leading 00. */
export function normalizeSerial(text: string): string | null {
  const hex = text.trim().replace(/:/g, "").toLowerCase();
  if (!/^[0-9a-f]{1,40}$/.test(hex)) return null;
  return hex.replace(/^(00)+(?=.)/, "");
}

/** A certificate's status as the API shows it: revoked first, then expired (ISO times compare as text). */
export function certificateStatus(
  row: { revoked_at: string | null; not_after: string },
  now: string,
): "valid" | "revoked" | "expired" {
  if (row.revoked_at !== null) return "revoked";
  return row.not_after < now ? "expired" : "valid";
}

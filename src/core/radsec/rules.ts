// The rules of RadSec certificates: Wisp's client CA, the certificates it issues for networks, the
// outside CAs operators upload and the rule that matches a NAS certificate to a network, and why a
// NAS certificate is refused.

/** Wisp's RadSec client CA: 20 years, like the EAP CA; a separate key and name. */
export const RADSEC_AUTHORITY_DAYS = 20 * 365;
export const RADSEC_AUTHORITY_NAME = "Wisp RadSec client CA";
/** Network certificates: one year unless asked otherwise, at most ten. */
export const RADSEC_CERT_DAYS = 365;
export const MAX_RADSEC_CERT_DAYS = 3650;
/** An uploaded CA: one certificate, PEM; far more than any CA certificate needs. */
export const MAX_CA_PEM = 64 * 1024;
/** A match rule: how many patterns, and how long each. */
export const MAX_PATTERNS = 100;
export const MAX_PATTERN = 253;
/** How many intermediates between a NAS certificate and an uploaded CA are followed. */
export const MAX_CHAIN_DEPTH = 4;

/** Which name of a NAS certificate a rule looks at: the subject CN, or a subjectAltName DNS or URI. */
export const MATCH_FIELDS = ["cn", "dns", "uri"] as const;
export type MatchField = (typeof MATCH_FIELDS)[number];

export interface MatchRule {
  field: MatchField;
  /** Globs: `*` is any run of characters (dots and slashes too), everything else itself. */
  patterns: string[];
}

/** How a network is reached: by its address over UDP, by certificate over RadSec, or both. */
export type Transport = "udp" | "radsec" | "both";

/**
 * A network without an address is reached over RadSec only; one with an address over UDP, and over
 * RadSec as well once it has a certificate (not revoked) or an uploaded CA.
 */
export function transportOf(nasIp: string, hasRadsec: boolean): Transport {
  if (nasIp === "") return "radsec";
  return hasRadsec ? "both" : "udp";
}

/** Why a pattern is unusable, or null. Printable characters only, no spaces. */
export function patternProblem(pattern: string): string | null {
  if (pattern.length < 1 || pattern.length > MAX_PATTERN) return `must be 1-${MAX_PATTERN} characters`;
  if (!/^[\x21-\x7e]+$/.test(pattern)) return "may hold printable ASCII characters only, no spaces";
  return null;
}

/**
 * Whether `name` matches the glob `pattern`; DNS names ignore case (RFC 4343), CN and URI do not.
 * The two-pointer wildcard match: time O(pattern x name) at worst, never a backtracking regex over
 * a name that comes from a certificate.
 */
export function globMatches(pattern: string, name: string, field: MatchField): boolean {
  const p = field === "dns" ? pattern.toLowerCase() : pattern;
  const n = field === "dns" ? name.toLowerCase() : name;
  let i = 0;
  let j = 0;
  let star = -1;
  let resume = 0;
  while (j < n.length) {
    if (i < p.length && p[i] !== "*" && p[i] === n[j]) {
      i++;
      j++;
    } else if (i < p.length && p[i] === "*") {
      star = i++;
      resume = j;
    } else if (star >= 0) {
      i = star + 1;
      j = ++resume;
    } else {
      return false;
    }
  }
  while (p[i] === "*") i++;
  return i === p.length;
}

/** The names of a NAS certificate a rule can look at. */
export interface CertificateNames {
  cn: string[];
  dns: string[];
  uri: string[];
}

export function ruleMatches(rule: MatchRule, names: CertificateNames): boolean {
  return names[rule.field].some((name) => rule.patterns.some((p) => globMatches(p, name, rule.field)));
}

/** Why identify() refuses a NAS certificate (logged by the listener; never a secret). */
export const RADSEC_REFUSALS = {
  unreadable: "certificate cannot be read",
  caLeaf: "the NAS presented a CA certificate, not its own",
  unknownSerial: "certificate signed by Wisp's RadSec CA but not issued by this deployment",
  tampered: "certificate does not match the one Wisp issued with this serial",
  revoked: "certificate revoked",
  expired: "certificate expired or not yet valid",
  networkGone: "the certificate's network no longer exists",
  untrusted: "certificate chains to no CA trusted for RadSec",
  noMatch: "no network's match rule for the certificate's CA matches it",
  ambiguous: "the certificate matches more than one network's rule (a certificate must match exactly one)",
} as const;

// What a valid network looks like, and how shared secrets are made. Limits follow the `nas` columns.
import { randomInt } from "node:crypto";

export const MAX_NETWORK_NAME = 100;
/** FreeRADIUS's nas.shortname is varchar(32): the name, cut. */
export const MAX_SHORTNAME = 32;
export const MAX_NAS_IDENTIFIER = 64;
export const MAX_DESCRIPTION = 200;
export const MIN_SECRET = 8;
export const MAX_SECRET = 128;

/**
 * Printable ASCII without space, quotes, backtick, backslash and %: FreeRADIUS would unquote,
 * unescape or expand those, and the device would then sign with a different secret.
 */
const SECRET = new RegExp(
  `^[\\x21\\x23\\x24\\x26\\x28-\\x5b\\x5d-\\x5f\\x61-\\x7e]{${MIN_SECRET},${MAX_SECRET}}$`,
);
export const SECRET_RULE =
  `must be ${MIN_SECRET}-${MAX_SECRET} printable ASCII characters without spaces, ` +
  "quotes, backticks, backslashes or %";

export function checkSecret(secret: string): string | null {
  return SECRET.test(secret) ? null : SECRET_RULE;
}

/** No look-alikes (0 O o 1 I l), so a secret read off a screen is typed into a device correctly. */
const SECRET_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789";
/** 24 characters of 56 is about 139 bits, and short enough for every device's secret field. */
export const GENERATED_SECRET_LENGTH = 24;

export function generateSecret(): string {
  let secret = "";
  for (let i = 0; i < GENERATED_SECRET_LENGTH; i++)
    secret += SECRET_ALPHABET[randomInt(SECRET_ALPHABET.length)];
  return secret;
}

/** FreeRADIUS's short name for the client: the name cut to 32 characters (not UTF-16 halves). */
export function shortnameOf(name: string): string {
  return Array.from(name).slice(0, MAX_SHORTNAME).join("").trimEnd();
}

/**
 * The widest range a network may claim, as the shortest prefix length per family
 * (NETWORK_MIN_PREFIX_IPV4 / _IPV6). Networks of different accounts may not overlap, so a network
 * of 0.0.0.0/0 would keep every other account from adding one. A /16 (65,536 addresses) or a /48
 * (a whole IPv6 site, RFC 6177) is more than one site's access points need. 0: any range.
 */
export interface NetworkPrefixLimits {
  ipv4: number;
  ipv6: number;
}
export const DEFAULT_MIN_PREFIX: NetworkPrefixLimits = { ipv4: 16, ipv6: 48 };

/** What a networks list may be sorted by. */
export const NETWORK_SORT_FIELDS = ["id", "name", "created", "updated"] as const;
export type NetworkSortField = (typeof NETWORK_SORT_FIELDS)[number];

/** RFC 5176 section 3: the Dynamic Authorization Server's port unless the NAS says otherwise. */
export const DEFAULT_COA_PORT = 3799;
/**
 * What a CoA-NAK or an unanswered CoA-Request (RFC 5176 section 3) leads to: nothing more (the
 * outcome is recorded), or a Disconnect-Request so the next login applies the change.
 */
export const COA_FALLBACKS = ["none", "disconnect"] as const;
export type CoaFallback = (typeof COA_FALLBACKS)[number];
/** CoA-Requests per second sent to one NAS when a change reaches many sessions. */
export const DEFAULT_COA_RATE = 20;
export const MAX_COA_RATE = 1000;
/**
 * Acct-Interim-Interval, seconds: RFC 2869 section 5.16 says it SHOULD NOT be below 60 (and
 * hostapd and most gateways raise smaller values to 60); one day at most. 0: none sent.
 */
export const MIN_INTERIM_INTERVAL = 60;
export const MAX_INTERIM_INTERVAL = 86_400;
/** A session is stale after this many seconds without accounting; 0: three interim intervals. */
export const MAX_STALE_AFTER = 7 * 86_400;
/**
 * A network's default EAP method as the API, console and CLI name it; nas.eap_method keeps it in
 * upper case (PEAP, TTLS, TLS), as radpostauth.method names methods.
 */
export const EAP_METHOD_CHOICES = ["peap", "ttls", "tls"] as const;
export type EapMethodChoice = (typeof EAP_METHOD_CHOICES)[number];

/** The stored column as the API names it; anything unknown is PEAP, as the RADIUS door reads it. */
export function eapMethodOf(stored: string | null | undefined): EapMethodChoice {
  const lower = (stored ?? "").toLowerCase();
  return (EAP_METHOD_CHOICES as readonly string[]).includes(lower) ? (lower as EapMethodChoice) : "peap";
}

/**
 * The gateway's vendor: which attributes carry a plan's bandwidth (core/plans/bandwidth.ts).
 * generic speaks WISPr; chillispot is CoovaChilli and ChilliSpot.
 */
export const GATEWAY_VENDORS = [
  "generic",
  "mikrotik",
  "chillispot",
  "cisco",
  "aruba",
  "meraki",
  "ubiquiti",
] as const;
export type GatewayVendor = (typeof GATEWAY_VENDORS)[number];

/** The stored column as the API names it; anything unknown is generic. */
export function gatewayVendorOf(stored: string | null | undefined): GatewayVendor {
  const lower = (stored ?? "").toLowerCase();
  return (GATEWAY_VENDORS as readonly string[]).includes(lower) ? (lower as GatewayVendor) : "generic";
}

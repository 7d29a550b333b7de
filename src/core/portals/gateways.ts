// Which gateways a portal may hand a guest's credentials to. The gateway's address comes in the
// link that opens the page (MikroTik's link-login-only, the generic vendor's login URL parameter,
// CoovaChilli's uamip), and anyone can send a guest a link to the venue's real portal: the address
// must be one the operator allowed. By default only addresses a link from outside cannot point at
// a server of the attacker's: the networks a gateway serves its guests on.
import { domainToASCII } from "node:url";
import { type Cidr, formatCidr, type IP, inNetwork, parseIp, parseNetwork, unmapped } from "../shared/ip.ts";

export const MAX_ALLOWED_GATEWAYS = 32;
const MAX_VERDICTS = 256;
/**
 * ipaddr.js range() names of the default: private (RFC 1918), CGNAT 100.64.0.0/10 (RFC 6598),
 * link-local 169.254.0.0/16 (RFC 3927) and fe80::/10 (RFC 4291 section 2.5.6), unique local
 * fc00::/7 (RFC 4193). Loopback is not among them: a gateway is never the guest's own device, and
 * 127.0.0.1 there is whatever runs on that device.
 */
const DEFAULT_RANGES = new Set(["private", "carrierGradeNat", "linkLocal", "uniqueLocal"]);

/** A DNS name as URLs carry it (lower case, ASCII; RFC 1123 section 2.1 labels). */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function isHostName(text: string): boolean {
  const labels = text.split(".");
  // A numeric last label makes a URL's host an IPv4 address (WHATWG URL, "ends in a number").
  return text.length <= 253 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1) ?? "");
}

/** One entry in its stored form: a host name in lower case, or a network's canonical CIDR. */
function canonicalEntry(text: string): string {
  // An internationalised name as URLs carry it, in punycode (café.lan: xn--caf-dma.lan).
  const entry = /[^ -~]/.test(text) ? domainToASCII(text) || text : text.toLowerCase();
  if (isHostName(entry)) return entry;
  if (entry.includes("://")) throw new Error(`"${text}" is a URL; give its host alone (as in hotspot.lan)`);
  // Address-like text gets the address parser's reason (prefix length, zone, mapped IPv4...).
  if (/^[\d.]+(?:\/.*)?$|[:/]/.test(entry)) return formatCidr(parseNetwork(entry));
  throw new Error(`"${text}" is not an address, a CIDR or a host name (letters, digits, hyphens, dots)`);
}

/**
 * Validates an allow-list as an operator gives it; returns its entries in stored form, without
 * repeats, or throws with the first bad entry named. An empty list means the default ranges.
 */
export function parseAllowedGateways(entries: readonly string[]): string[] {
  const clean = [
    ...new Set(
      entries
        .map((e) => e.trim())
        .filter(Boolean)
        .map(canonicalEntry),
    ),
  ];
  if (clean.length > MAX_ALLOWED_GATEWAYS) {
    throw new Error(`lists ${clean.length} entries; at most ${MAX_ALLOWED_GATEWAYS} are allowed`);
  }
  return clean;
}

export class GatewayAllowList {
  private readonly networks: Cidr[] = [];
  private readonly names = new Set<string>();
  /**
   * Answers by host: a gateway's guests all bring the same one, and reading an address costs
   * microseconds on a page that takes tens (bench/portal.ts). Bounded: hosts come from links.
   */
  private readonly verdicts = new Map<string, boolean>();

  /** Stored entries (parseAllowedGateways); one that no longer reads as either matches nothing. */
  constructor(readonly entries: readonly string[]) {
    for (const entry of entries) {
      if (isHostName(entry)) this.names.add(entry);
      else {
        try {
          this.networks.push(parseNetwork(entry));
        } catch {
          // skipped: the list stays as narrow as it was written
        }
      }
    }
  }

  /**
   * Whether the host of a gateway URL (URL.hostname: lower case, IPv6 in brackets, IPv4 in dotted
   * decimal whatever form the link used) is allowed. A name is allowed only when listed: the
   * server cannot know what the guest's browser resolves it to.
   */
  allows(hostname: string): boolean {
    let verdict = this.verdicts.get(hostname);
    if (verdict === undefined) {
      verdict = this.decide(hostname);
      if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.clear();
      this.verdicts.set(hostname, verdict);
    }
    return verdict;
  }

  private decide(hostname: string): boolean {
    const host = hostname.replace(/^\[(.*)\]$/, "$1");
    const ip = parseIp(host);
    if (!ip) return this.names.has(host.replace(/\.$/, ""));
    const address = unmapped(ip);
    if (this.entries.length === 0) return isDefaultGateway(address);
    return this.networks.some((network) => inNetwork(address, network));
  }
}

/** Private, CGNAT, link-local or unique local (see DEFAULT_RANGES). */
function isDefaultGateway(ip: IP): boolean {
  return DEFAULT_RANGES.has(ip.range());
}

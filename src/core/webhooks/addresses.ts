// Which addresses a webhook may connect to. Deliveries go to the public internet only: never to
// Wisp's own host, its network, the cloud metadata service or anything else a URL could aim at
// to reach what only the server can reach (SSRF). WEBHOOK_ALLOW_PRIVATE=1 lifts the rule.
// ipaddr.js's range() names the special-purpose blocks (IANA's registries, RFC 6890); the few it
// does not know are listed here.
import ipaddr from "ipaddr.js";
import { type IP, parseCidr, parseIp } from "../shared/ip.ts";

type Category =
  | "unspecified"
  | "loopback"
  | "private"
  | "CGNAT"
  | "link-local"
  | "metadata"
  | "multicast"
  | "reserved";

function cidr(text: string): [IP, number] {
  const { address, prefix } = parseCidr(text);
  return [address, prefix];
}

/** Checked before range(): addresses inside blocks it would name otherwise, or not at all. */
const OWN: Record<string, [IP, number][]> = {
  metadata: [
    cidr("169.254.169.254/32"),
    cidr("168.63.129.16/32"), // Azure's host endpoint
    cidr("fd00:ec2::254/128"), // AWS's over IPv6
  ],
  private: [cidr("64:ff9b:1::/48")], // local-use NAT64, RFC 8215
};

/** range() names that are refused, and what they are called in the reason. */
const REFUSED: Partial<Record<string, Category>> = {
  unspecified: "unspecified",
  loopback: "loopback",
  private: "private", // RFC 1918
  uniqueLocal: "private", // fc00::/7, RFC 4193
  deprecatedSiteLocal: "private", // fec0::/10, RFC 3879
  carrierGradeNat: "CGNAT", // RFC 6598
  linkLocal: "link-local",
  multicast: "multicast",
  broadcast: "reserved",
  reserved: "reserved",
  benchmarking: "reserved",
  discard: "reserved", // 100::/64, RFC 6666
  segmentRouting: "reserved", // 5f00::/16, RFC 9602
  orchid2: "reserved",
  deprecatedOrchid: "reserved",
};

/** IPv4-compatible IPv6 (deprecated, RFC 4291 section 2.5.5.1); range() calls it unicast. */
const IPV4_COMPATIBLE = cidr("::/96");

/**
 * The IPv4 address carried inside an IPv6 one, which a translator or relay would connect to:
 * IPv4-mapped (RFC 4291 section 2.5.5.2), IPv4-translated (RFC 6145), the NAT64 well-known prefix
 * 64:ff9b::/96 (RFC 6052) and 6to4 2002::/16 (RFC 3056, the address in bits 16-47).
 */
function embeddedIPv4(ip: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const bytes = ip.toByteArray();
  // rfc6052 is also the local-use 64:ff9b:1::/48, which OWN has answered for already.
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") {
    return new ipaddr.IPv4(bytes.slice(12));
  }
  if (range === "6to4") return new ipaddr.IPv4(bytes.slice(2, 6));
  return null;
}

const article = (category: Category) => (category === "unspecified" ? "an" : "a");

/**
 * Why an address may not be connected to ("a loopback address"), or null when it may. Names are
 * not accepted here: resolve first, then check every address.
 */
export function refusedAddress(address: string): string | null {
  const text = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const ip = parseIp(text);
  if (!ip) return `${address} is not an IP address`;
  const own = ipaddr.subnetMatch(ip, OWN, "") as Category | "";
  if (own) return `${text} is ${article(own)} ${own} address`;
  const range = ip.range();
  let category = REFUSED[range];
  if (ip instanceof ipaddr.IPv6) {
    const inner = embeddedIPv4(ip, range);
    if (inner) {
      const why = refusedAddress(inner.toString());
      return why ? `${text} carries ${why}` : null;
    }
    if (range === "unicast" && ip.match(...IPV4_COMPATIBLE)) category = "reserved";
  }
  return category ? `${text} is ${article(category)} ${category} address` : null;
}

// A network's address (FreeRADIUS's nas.nasname): one IPv4/IPv6 address or CIDR, kept in one
// canonical text so that "the same address" is a string comparison (the unique index) and a packet's
// source address can be found with one indexed query over its possible prefixes.
import {
  type Cidr,
  formatIp,
  networkAddress,
  parseIp,
  parseNetwork,
  unmapped,
  widthOf,
} from "../shared/ip.ts";
import type { NetworkPrefixLimits } from "./rules.ts";

/** The canonical text of a network: "address" for a single host, "network/prefix" otherwise. */
function canonical(network: Cidr): string {
  const address = formatIp(networkAddress(network));
  return network.prefix === widthOf(network.address) ? address : `${address}/${network.prefix}`;
}

/**
 * Validates an address or CIDR and returns its canonical text, or throws with a reason.
 * Host bits of a CIDR are cleared (10.0.0.5/24 is 10.0.0.0/24, as FreeRADIUS reads it);
 * a /32 (/128) is a plain address; IPv6 is written as RFC 5952 says.
 */
export function canonicalNasIp(text: string): string {
  return canonical(parseNetwork(text.trim()));
}

/**
 * Why a network (canonical text) is wider than the limits allow, or null when it is not (or is no
 * network at all: rows older than the address rules are listed as they are). The message follows
 * "nas_ip " in the refusal.
 */
export function widthProblem(nasIp: string, limits: NetworkPrefixLimits): string | null {
  let network: Cidr;
  try {
    network = parseNetwork(nasIp);
  } catch {
    return null;
  }
  const { address, prefix } = network;
  const ipv4 = widthOf(address) === 32;
  const min = ipv4 ? limits.ipv4 : limits.ipv6;
  if (prefix >= min) return null;
  return (
    `${nasIp} is wider than this server allows: ${ipv4 ? "IPv4" : "IPv6"} networks may be ` +
    `/${min} at the widest (give the range of the site's access points or controller)`
  );
}

/** The sortable key of an address: "4" and 8 hex digits, or "6" and 32 (see addressRange). */
function keyOf(bytes: number[]): string {
  return (bytes.length === 4 ? "4" : "6") + bytes.map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The first and last address of a network (canonical text, as canonicalNasIp returns). */
export interface AddressRange {
  /** The first address's key: "4" and 8 hex digits for IPv4, "6" and 32 for IPv6. */
  start: string;
  /** The last address's key. */
  end: string;
  /** The canonical texts of every network holding this one, itself included, narrowest first. */
  enclosing: string[];
}

/**
 * A network's addresses as keys that compare as text (the `nas.range_start` / `range_end`
 * columns): "contains" and "overlaps" become range comparisons in any database. The family comes
 * first: IPv4 and IPv6 networks never share an address, as sources are matched as IPv4 whenever
 * they are (IPv4-mapped included, see containingNetworks), so ::/0 does not hold 10.0.0.1.
 */
export function addressRange(nasIp: string): AddressRange {
  const network = parseNetwork(nasIp);
  const first = networkAddress(network).toByteArray();
  const last = first.map((byte, i) => byte | (0xff >> Math.min(8, Math.max(0, network.prefix - i * 8))));
  const address = networkAddress(network);
  const enclosing = Array.from({ length: network.prefix + 1 }, (_, i) =>
    canonical({ address, prefix: network.prefix - i }),
  );
  return { start: keyOf(first), end: keyOf(last), enclosing };
}

/**
 * The canonical texts of every network that contains the address, most specific first (the address
 * itself, then /31, /30 ... /0). Empty when the text is not an address. IPv4-mapped IPv6 addresses
 * (from dual-stack sockets) count as IPv4; an IPv6 zone is ignored.
 */
export function containingNetworks(ip: string): string[] {
  const parsed = parseIp((ip.split("%")[0] ?? "").trim());
  if (!parsed) return [];
  const address = unmapped(parsed);
  const width = widthOf(address);
  return Array.from({ length: width + 1 }, (_, i) => canonical({ address, prefix: width - i }));
}

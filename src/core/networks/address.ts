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

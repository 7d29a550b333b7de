// IP addresses and CIDRs: read strictly, matched and written with ipaddr.js.
//
// node:net decides which text is an address. ipaddr.js's parsers also take inet_aton's forms
// (127.1, 0x7f000001, 010.0.0.1 read as octal 8.0.0.1), and its IPv6 parser reads the dotted tail
// of an IPv6 address with a radix-less parseInt (whitequark/ipaddr.js#213): text a person or a
// device sends that way means something else, or nothing. node:net takes only four-part decimal
// IPv4 without leading zeros and RFC 4291 section 2.2 IPv6 text. It does take an IPv6 zone
// (fe80::1%eth0, RFC 4007 section 11), which names an interface of one host and is refused here.
import { isIPv4, isIPv6 } from "node:net";
import ipaddr from "ipaddr.js";

export type IP = ipaddr.IPv4 | ipaddr.IPv6;
export type Family = 4 | 6;

/** An address and a prefix length; the address may have host bits set (see networkAddress). */
export interface Cidr {
  address: IP;
  prefix: number;
}

export function widthOf(ip: IP): 32 | 128 {
  return ip instanceof ipaddr.IPv6 ? 128 : 32;
}

/**
 * ipaddr.js reads the deprecated IPv4-compatible form ::a.b.c.d as IPv4-mapped ::ffff:a.b.c.d
 * (whitequark/ipaddr.js#142). RFC 4291 section 2.5.5.1 puts the IPv4 address in the low 32 bits
 * after 96 zero bits, so that one form is built here.
 */
const IPV4_COMPATIBLE = /^::(\d+\.\d+\.\d+\.\d+)$/;

/** An address of the family (either when omitted), or null when the text is not one. */
export function parseIp(text: string, family?: Family): IP | null {
  if (family !== 6 && isIPv4(text)) return ipaddr.IPv4.parse(text);
  if (family === 4 || !isIPv6(text) || text.includes("%")) return null;
  const compatible = IPV4_COMPATIBLE.exec(text)?.[1];
  if (compatible) return new ipaddr.IPv6([...Array(12).fill(0), ...ipaddr.IPv4.parse(compatible).octets]);
  return ipaddr.IPv6.parse(text);
}

/**
 * Reads "address" or "address/prefix" (a bare address is a full-length prefix, as in FreeRADIUS);
 * throws with a reason. The prefix is 1-3 decimal digits up to the family's width.
 */
export function parseCidr(text: string, family?: Family): Cidr {
  if (text.includes("%")) throw new Error(`"${text}" must not carry an IPv6 zone (%...)`);
  const [address = "", prefix, extra] = text.split("/");
  if (extra !== undefined) throw new Error(`"${text}" is not an address or CIDR`);
  const ip = parseIp(address, family);
  if (!ip) {
    const kind = family ? `an IPv${family}` : "an IPv4 or IPv6";
    throw new Error(`"${text}" is not ${kind} address or CIDR`);
  }
  const max = widthOf(ip);
  if (prefix === undefined) return { address: ip, prefix: max };
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    throw new Error(`"${text}" has an invalid prefix length (0-${max})`);
  }
  return { address: ip, prefix: Number(prefix) };
}

/** The address with the host bits past the prefix cleared (10.0.0.5/24 -> 10.0.0.0). */
export function networkAddress({ address, prefix }: Cidr): IP {
  const family = address instanceof ipaddr.IPv6 ? ipaddr.IPv6 : ipaddr.IPv4;
  const mask = family.subnetMaskFromPrefixLength(prefix);
  const maskBytes = mask.toByteArray();
  return ipaddr.fromByteArray(address.toByteArray().map((b, i) => b & maskBytes[i]!));
}

/**
 * A network someone configures (a RADIUS client's address, an API key's allow-list entry):
 * a strict CIDR with its host bits cleared. IPv4-mapped IPv6 is refused: sources are matched as
 * IPv4 (see unmapped), and one network has one spelling.
 */
export function parseNetwork(text: string): Cidr {
  const cidr = parseCidr(text);
  if (cidr.address instanceof ipaddr.IPv6 && cidr.address.isIPv4MappedAddress()) {
    throw new Error(`"${text}" is an IPv4-mapped IPv6 address; give the IPv4 address instead`);
  }
  return { address: networkAddress(cidr), prefix: cidr.prefix };
}

/** The IPv4 address inside an IPv4-mapped IPv6 one (::ffff:a.b.c.d, RFC 4291 section 2.5.5.2). */
export function unmapped(ip: IP): IP {
  return ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress() ? ip.toIPv4Address() : ip;
}

/** Canonical text: dotted decimal, or RFC 5952 for IPv6 (lower case, longest zero run as ::). */
export function formatIp(ip: IP): string {
  return ip instanceof ipaddr.IPv6 ? ip.toRFC5952String() : ip.toString();
}

/** "address/prefix" in canonical text. */
export function formatCidr({ address, prefix }: Cidr): string {
  return `${formatIp(address)}/${prefix}`;
}

/** IPv4 as its IPv4-mapped IPv6 address, so that both families compare in one space. */
function asIPv6(ip: IP): ipaddr.IPv6 {
  return ip instanceof ipaddr.IPv6 ? ip : ip.toIPv4MappedAddress();
}

/** Whether the network holds the address; an IPv4 address and its IPv4-mapped form are one. */
export function inNetwork(ip: IP, network: Cidr): boolean {
  const { address, prefix } = network;
  if (ip.kind() === address.kind()) return ip.match(address, prefix);
  return asIPv6(ip).match(asIPv6(address), address.kind() === "ipv4" ? prefix + 96 : prefix);
}

// A network's address (FreeRADIUS's nas.nasname): one IPv4/IPv6 address or CIDR, kept in one
// canonical text so that "the same address" is a string comparison (the unique index) and a packet's
// source address can be found with one indexed query over its possible prefixes.
import { isIPv4 } from "node:net";
import { parseCidr } from "../keys/ip-allow-list.ts";

interface Address {
  family: 4 | 6;
  bits: bigint;
}

const WIDTH = { 4: 32, 6: 128 } as const;

function ipv4Bits(text: string): bigint {
  return text.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** Expands a (valid) IPv6 text, with "::" and an optional dotted IPv4 tail, to its 128 bits. */
function ipv6Bits(text: string): bigint {
  let hex = text;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted) {
    const v4 = ipv4Bits(dotted);
    hex = `${text.slice(0, -dotted.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [left = "", right] = hex.split("::");
  const head = left ? left.split(":") : [];
  const tail = right ? right.split(":") : [];
  const groups =
    right === undefined ? head : [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

function parseAddress(text: string): Address {
  return isIPv4(text) ? { family: 4, bits: ipv4Bits(text) } : { family: 6, bits: ipv6Bits(text) };
}

/** RFC 5952 text: lower-case hex, no leading zeros, the first longest run of 2+ zero groups as "::". */
function formatIPv6(bits: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((bits >> BigInt(112 - 16 * i)) & 0xffffn));
  let start = -1;
  let length = 0;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > length) [start, length] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (start < 0) return hex.join(":");
  return `${hex.slice(0, start).join(":")}::${hex.slice(start + length).join(":")}`;
}

function format({ family, bits }: Address): string {
  if (family === 6) return formatIPv6(bits);
  return [24n, 16n, 8n, 0n].map((shift) => String((bits >> shift) & 0xffn)).join(".");
}

function mask(bits: bigint, family: 4 | 6, prefix: number): bigint {
  const width = BigInt(WIDTH[family]);
  const all = (1n << width) - 1n;
  return bits & (all ^ ((1n << (width - BigInt(prefix))) - 1n));
}

/** The canonical text of a network: "address" for a single host, "network/prefix" otherwise. */
function canonical(address: Address, prefix: number): string {
  const network = { family: address.family, bits: mask(address.bits, address.family, prefix) };
  return prefix === WIDTH[address.family] ? format(network) : `${format(network)}/${prefix}`;
}

/**
 * Validates an address or CIDR and returns its canonical text, or throws with a reason.
 * Host bits of a CIDR are cleared (10.0.0.5/24 is 10.0.0.0/24, as FreeRADIUS reads it);
 * a /32 (/128) is a plain address.
 */
export function canonicalNasIp(text: string): string {
  const trimmed = text.trim();
  if (trimmed.includes("%")) throw new Error(`"${text}" must not carry an IPv6 zone (%...)`);
  const cidr = parseCidr(trimmed);
  const [address = "", prefix = ""] = cidr.split("/");
  const parsed = parseAddress(address);
  if (parsed.family === 6 && parsed.bits >> 32n === 0xffffn) {
    throw new Error(`"${text}" is an IPv4-mapped IPv6 address; give the IPv4 address instead`);
  }
  return canonical(parsed, Number(prefix));
}

/**
 * The canonical texts of every network that contains the address, most specific first (the address
 * itself, then /31, /30 ... /0). Empty when the text is not an address. IPv4-mapped IPv6 addresses
 * (from dual-stack sockets) count as IPv4.
 */
export function containingNetworks(ip: string): string[] {
  const plain = (ip.split("%")[0] ?? "").trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain)?.[1];
  let address: Address;
  try {
    address = parseAddress(parseCidr(mapped ?? plain).split("/")[0] ?? "");
  } catch {
    return [];
  }
  if (plain.includes("/")) return [];
  const width = WIDTH[address.family];
  return Array.from({ length: width + 1 }, (_, i) => canonical(address, width - i));
}

// Encoding values from FreeRADIUS text: 0x hex octets, integers and dates, IPv4/IPv6 addresses and
// prefixes, interface ids and Ethernet addresses.

import type { AttributeDef } from "../../core/aaa/dictionary.ts";
import { integerValue } from "../../core/aaa/values.ts";
import { type Cidr, type Family, networkAddress, parseCidr, parseIp } from "../../core/shared/ip.ts";
import { encodeError } from "./codes.ts";

export const HEX_VALUE = /^0x((?:[0-9a-f]{2})*)$/i;

export function octetsFromText(text: string): Buffer {
  if (/^0x/i.test(text)) {
    const m = HEX_VALUE.exec(text);
    if (!m) encodeError(`bad hex value ${text}`);
    return Buffer.from(m[1]!, "hex");
  }
  return Buffer.from(text, "utf8"); // FreeRADIUS takes other text as the octets themselves
}

/** Writes an address of the family at `at` (RFC 8044 sections 3.8 and 3.9); false when invalid. */
function writeAddress(text: string, family: Family, out: Buffer, at: number): boolean {
  const ip = parseIp(text, family);
  if (ip) out.set(ip.toByteArray(), at);
  return ip !== null;
}

/**
 * Writes an ipv4prefix (RFC 8044 section 3.11) or ipv6prefix (RFC 3162 section 2.3, RFC 8044
 * section 3.10) value: a reserved octet, the prefix length, then the prefix with the bits past the
 * length cleared (FreeRADIUS masks prefixes it parses). A bare address is a full-length prefix.
 * FreeRADIUS 3 sends all 16 octets of an IPv6 prefix. Returns the length, 0 when invalid.
 */
function writePrefix(text: string, family: Family, out: Buffer, at: number): number {
  let cidr: Cidr;
  try {
    cidr = parseCidr(text, family);
  } catch {
    return 0;
  }
  out[at] = 0;
  out[at + 1] = cidr.prefix;
  const bytes = networkAddress(cidr).toByteArray();
  out.set(bytes, at + 2);
  return 2 + bytes.length;
}

const INTEGER_SIZES: Partial<Record<string, number>> = {
  byte: 1,
  short: 2,
  integer: 4,
  date: 4,
  signed: 4,
  integer64: 8,
};

function integerFrom(def: AttributeDef, value: string | number | bigint): bigint {
  if (def.type === "date") {
    const text = String(value);
    if (/^\d{1,10}$/.test(text) && Number(text) <= 0xffffffff) return BigInt(text);
    return encodeError(`${def.name}: a date must be Unix seconds, not ${text}`);
  }
  const n = integerValue(def, String(value));
  if (n === undefined) encodeError(`${def.name}: ${String(value)} is not a valid ${def.type}`);
  return n;
}

/** Writes a fixed-format value at `at`; returns its length. */
export function writeTyped(
  def: AttributeDef,
  value: string | number | bigint,
  out: Buffer,
  at: number,
): number {
  const size = INTEGER_SIZES[def.type];
  if (size !== undefined) {
    // Numbers (the common case for replies built in code) skip the text parser.
    if (typeof value === "number" && size <= 4 && Number.isInteger(value)) {
      const signed = def.type === "signed";
      const min = signed ? -0x80000000 : 0;
      const max = signed ? 0x7fffffff : 2 ** (8 * size) - 1;
      if (value < min || value > max) encodeError(`${def.name}: ${value} is out of range for ${def.type}`);
      if (signed) out.writeInt32BE(value, at);
      else out.writeUIntBE(value, at, size);
      return size;
    }
    const n = integerFrom(def, value);
    if (size === 8) out.writeBigUInt64BE(n, at);
    else if (def.type === "signed") out.writeInt32BE(Number(n), at);
    else out.writeUIntBE(Number(n), at, size);
    return size;
  }
  const text = String(value);
  const length = writeAddressLike(def, text, out, at);
  if (length === 0) encodeError(`${def.name}: ${text} is not a valid ${def.type}`);
  return length;
}

/** Address-like types from text; 0 when the text is not valid for the type. */
function writeAddressLike(def: AttributeDef, text: string, out: Buffer, at: number): number {
  switch (def.type) {
    case "ipaddr":
      return writeAddress(text, 4, out, at) ? 4 : 0;
    case "ipv6addr":
      return writeAddress(text, 6, out, at) ? 16 : 0;
    case "ipv4prefix":
      return writePrefix(text, 4, out, at);
    case "ipv6prefix":
      return writePrefix(text, 6, out, at);
    case "ifid": {
      if (!/^[0-9a-f]{1,4}(:[0-9a-f]{1,4}){3}$/i.test(text)) return 0;
      const words = text.split(":");
      for (let i = 0; i < 4; i++) out.writeUInt16BE(Number.parseInt(words[i]!, 16), at + 2 * i);
      return 8;
    }
    case "ether": {
      if (!/^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/i.test(text)) return 0;
      return Buffer.from(text.replace(/[:-]/g, ""), "hex").copy(out, at);
    }
    default:
      return 0;
  }
}

const FIXED_SIZES: Partial<Record<string, number>> = {
  ...INTEGER_SIZES,
  ipaddr: 4,
  ipv6addr: 16,
  ipv4prefix: 6,
  ifid: 8,
  ether: 6,
};

/** Fixed wire size of a type, or undefined for variable-length ones. */
export function fixedSize(def: AttributeDef): number | undefined {
  return FIXED_SIZES[def.type];
}

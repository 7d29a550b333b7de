// Encoding values from FreeRADIUS text: 0x hex octets, integers and dates, IPv4/IPv6 addresses and
// prefixes, interface ids and Ethernet addresses.

import { isIPv4, isIPv6 } from "node:net";
import type { AttributeDef } from "../../core/aaa/dictionary.ts";
import { integerValue } from "../../core/aaa/values.ts";
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

function parseIPv4(text: string, at: number, out: Buffer): boolean {
  if (!isIPv4(text)) return false;
  const parts = text.split(".");
  for (let i = 0; i < 4; i++) out[at + i] = Number(parts[i]);
  return true;
}

function parseIPv6(text: string, at: number, out: Buffer): boolean {
  if (!isIPv6(text) || text.includes("%")) return false;
  let s = text;
  const lastColon = s.lastIndexOf(":");
  if (s.includes(".", lastColon)) {
    const v4 = s
      .slice(lastColon + 1)
      .split(".")
      .map(Number);
    const w = (a: number, b: number) => ((v4[a]! << 8) | v4[b]!).toString(16);
    s = `${s.slice(0, lastColon + 1)}${w(0, 1)}:${w(2, 3)}`;
  }
  const [head = "", tail] = s.split("::");
  const headWords = head ? head.split(":") : [];
  const tailWords = tail ? tail.split(":") : [];
  const words = [...headWords, ...Array(8 - headWords.length - tailWords.length).fill("0"), ...tailWords];
  for (let i = 0; i < 8; i++) out.writeUInt16BE(Number.parseInt(words[i]!, 16), at + 2 * i);
  return true;
}

/** Clears the bits past `bits` in `len` octets at `at` (FreeRADIUS masks prefixes it parses). */
function maskPrefix(out: Buffer, at: number, len: number, bits: number): void {
  for (let i = 0; i < len; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    out[at + i]! &= (0xff << (8 - keep)) & 0xff;
  }
}

function prefixParts(text: string, max: number): [address: string, bits: number] | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return [text, max];
  const bits = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  return [text.slice(0, slash), Number(bits)];
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
      return parseIPv4(text, at, out) ? 4 : 0;
    case "ipv6addr":
      return parseIPv6(text, at, out) ? 16 : 0;
    case "ipv4prefix": {
      const parts = prefixParts(text, 32);
      if (!parts || !parseIPv4(parts[0], at + 2, out)) return 0;
      out[at] = 0;
      out[at + 1] = parts[1];
      maskPrefix(out, at + 2, 4, parts[1]);
      return 6;
    }
    case "ipv6prefix": {
      const parts = prefixParts(text, 128);
      if (!parts || !parseIPv6(parts[0], at + 2, out)) return 0;
      out[at] = 0;
      out[at + 1] = parts[1];
      maskPrefix(out, at + 2, 16, parts[1]);
      return 18; // FreeRADIUS 3 sends the full 16 address octets
    }
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

// Text forms of decoded values, as FreeRADIUS prints them: escaped strings, IPv4/IPv6 addresses
// and prefixes, VALUE names for numbers, 0x hex for the rest.

import { isUtf8 } from "node:buffer";
import ipaddr from "ipaddr.js";
import type { AttributeDef } from "../../core/aaa/dictionary.ts";
import { formatIp } from "../../core/shared/ip.ts";

const HEX_DIGITS = "0123456789abcdef";

export function hex(b: Buffer): string {
  return `0x${b.toString("hex")}`;
}

/** Length of the UTF-8 character at i as FreeRADIUS's fr_utf8_char sees it; 0 = escape it. */
function utf8CharLength(d: Buffer, i: number, end: number): number {
  const c = d[i]!;
  if (c < 0x20) return 0;
  if (c <= 0x7e) return 1;
  if (c <= 0xc1) return 0;
  if (c <= 0xdf) return continues(d, i, end, 1, 0x80) ? 2 : 0;
  if (c <= 0xef) {
    const second = continues(d, i, end, 1, c === 0xe0 ? 0xa0 : 0x80, c === 0xed ? 0x9f : 0xbf);
    return second && continues(d, i, end, 2, 0x80) ? 3 : 0;
  }
  if (c <= 0xf4) {
    const second = continues(d, i, end, 1, c === 0xf0 ? 0x90 : 0x80, c === 0xf4 ? 0x8f : 0xbf);
    return second && continues(d, i, end, 2, 0x80) && continues(d, i, end, 3, 0x80) ? 4 : 0;
  }
  return 0;
}

/** Whether octet i + k exists and lies in lo..hi (a UTF-8 continuation octet by default). */
function continues(d: Buffer, i: number, end: number, k: number, lo: number, hi = 0xbf): boolean {
  return i + k < end && d[i + k]! >= lo && d[i + k]! <= hi;
}

/** FreeRADIUS's fr_prints() with a double quote, without the surrounding quotes. */
function escapeString(d: Buffer, end: number): string {
  let out = "";
  for (let i = 0; i < end; ) {
    const c = d[i]!;
    let esc: string | undefined;
    if (c === 0x22) esc = '\\"';
    else if (c === 0x5c) esc = "\\\\";
    else if (c === 0x0d) esc = "\\r";
    else if (c === 0x0a) esc = "\\n";
    else if (c === 0x09) esc = "\\t";
    if (esc) {
      out += esc;
      i++;
      continue;
    }
    const n = utf8CharLength(d, i, end);
    if (n === 0) {
      out += `\\${c.toString(8).padStart(3, "0")}`;
      i++;
    } else {
      out += n === 1 ? String.fromCharCode(c) : d.toString("utf8", i, i + n);
      i += n;
    }
  }
  return out;
}

function stringText(d: Buffer): string {
  let end = d.length;
  if (end > 0 && d[end - 1] === 0) end--;
  let ascii = true;
  for (let i = 0; i < end; i++) {
    const c = d[i]!;
    if (c < 0x20 || c === 0x7f) return escapeString(d, end);
    if (c > 0x7f) ascii = false;
  }
  if (ascii) return d.toString("latin1", 0, end);
  const body = end === d.length ? d : d.subarray(0, end);
  return isUtf8(body) ? body.toString("utf8") : escapeString(d, end);
}

function ipv4Text(d: Buffer, at: number): string {
  return `${d[at]}.${d[at + 1]}.${d[at + 2]}.${d[at + 3]}`;
}

/**
 * FreeRADIUS prints IPv6 with glibc's inet_ntop(AF_INET6): RFC 5952 text (ipaddr.js writes it),
 * except that glibc writes IPv4-mapped ::ffff:0:0/96 and IPv4-compatible ::/96 addresses (those
 * outside ::/112, which stay ::x) with a dotted IPv4 tail (RFC 4291 section 2.2, form 3).
 * ipaddr.js has no such form, so that case is written here, as glibc decides it.
 */
function ipv6Text(d: Buffer): string {
  const ip = new ipaddr.IPv6(Array.from(d));
  const p = ip.parts;
  if (p.slice(0, 5).every((w) => w === 0) && (p[5] === 0xffff || (p[5] === 0 && p[6] !== 0))) {
    return `::${p[5] ? "ffff:" : ""}${ipv4Text(d, 12)}`;
  }
  return formatIp(ip);
}

// Number -> VALUE name per attribute. When several names share a number the last defined wins,
// as in FreeRADIUS's values_byvalue table.
const valueNames = new WeakMap<AttributeDef, Map<number, string>>();

function valueName(def: AttributeDef, n: number): string | undefined {
  if (def.values.size === 0) return undefined;
  let names = valueNames.get(def);
  if (!names) {
    names = new Map();
    for (const [name, value] of def.values) names.set(value, name);
    valueNames.set(def, names);
  }
  return names.get(n);
}

/** The text form of a value, or undefined when its size is wrong for the type (-> raw). */
export function valueText(def: AttributeDef, d: Buffer, tagged: boolean): string | undefined {
  switch (def.type) {
    case "string":
      return stringText(d);
    case "integer": {
      if (d.length !== 4) return undefined;
      // A tag lives in the top octet of a tagged integer.
      const n = tagged ? d.readUInt32BE(0) & 0xffffff : d.readUInt32BE(0);
      return valueName(def, n) ?? String(n);
    }
    case "byte":
      return d.length === 1 ? (valueName(def, d[0]!) ?? String(d[0])) : undefined;
    case "short": {
      if (d.length !== 2) return undefined;
      const n = d.readUInt16BE(0);
      return valueName(def, n) ?? String(n);
    }
    case "date":
      return d.length === 4 ? String(d.readUInt32BE(0)) : undefined;
    case "signed":
      return d.length === 4 ? String(d.readInt32BE(0)) : undefined;
    case "integer64":
      return d.length === 8 ? d.readBigUInt64BE(0).toString() : undefined;
    case "ipaddr":
      return d.length === 4 ? ipv4Text(d, 0) : undefined;
    case "ipv4prefix":
      if (d.length !== 6 || (d[1]! & 0x3f) > 32) return undefined;
      return `${ipv4Text(d, 2)}/${d[1]! & 0x3f}`;
    case "ipv6addr":
      return d.length === 16 ? ipv6Text(d) : undefined;
    case "ipv6prefix": {
      if (d.length < 2 || d.length > 18 || d[1]! > 128) return undefined;
      const addr = Buffer.alloc(16);
      d.copy(addr, 0, 2);
      return `${ipv6Text(addr)}/${d[1]}`;
    }
    case "ifid": {
      if (d.length !== 8) return undefined;
      const w = [0, 2, 4, 6].map((i) => d.readUInt16BE(i).toString(16));
      return w.join(":");
    }
    case "ether": {
      if (d.length !== 6) return undefined;
      let out = "";
      for (let i = 0; i < 6; i++) {
        if (i > 0) out += ":";
        out += HEX_DIGITS[d[i]! >> 4]! + HEX_DIGITS[d[i]! & 15]!;
      }
      return out;
    }
    default:
      // octets, abinary, tlv and types without a text form here: hex.
      return hex(d);
  }
}

// Validation of attribute values before they are stored, following how FreeRADIUS 3.2 parses
// them (value_data_from_str), but stricter where FreeRADIUS would silently misread a value.

import { type Family, parseCidr, parseIp } from "../shared/ip.ts";
import { type AttributeDef, findValue } from "./dictionary.ts";
import { checkLoginTime } from "./login-time.ts";

/** Operators allowed on check (control) items, as in radcheck / radgroupcheck. */
export const CHECK_OPERATORS = [
  "==",
  ":=",
  "+=",
  "!=",
  ">",
  ">=",
  "<",
  "<=",
  "=~",
  "!~",
  "=*",
  "!*",
] as const;
/** Operators allowed on reply items, as in radreply / radgroupreply. */
export const REPLY_OPERATORS = ["=", ":=", "+="] as const;

export type CheckOperator = (typeof CHECK_OPERATORS)[number];
export type ReplyOperator = (typeof REPLY_OPERATORS)[number];

/** RADIUS attribute values hold at most 253 octets; FreeRADIUS's text form is held to the same. */
export const MAX_VALUE_BYTES = 253;

/** Characters FreeRADIUS passes to SQL unescaped; any other name would never match at login. */
export const USERNAME_PATTERN = "^[A-Za-z0-9@._:-]{1,64}$";
const USERNAME = new RegExp(USERNAME_PATTERN);

export function checkUsername(username: string): string | null {
  if (USERNAME.test(username)) return null;
  if (username.length === 0 || username.length > 64) return "must be 1 to 64 characters long";
  return "may only contain letters, digits and @ . _ : -";
}

// C0 controls and DEL: they would break the users file, SQL logs and RADIUS strings alike.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

// Half of a UTF-16 surrogate pair: it has no UTF-8 form.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Checks that apply to every stored value, whatever its attribute. Empty values pass here. */
export function checkValueSafe(value: string): string | null {
  if (CONTROL.test(value)) return "must not contain control characters";
  if (LONE_SURROGATE.test(value)) return "must be valid Unicode text";
  if (Buffer.byteLength(value, "utf8") > MAX_VALUE_BYTES) return `must be at most ${MAX_VALUE_BYTES} bytes`;
  // FreeRADIUS would expand %{...} when it reads the value from SQL.
  if (value.includes("%{")) return "must not contain %{ (FreeRADIUS would expand it)";
  // FreeRADIUS strips a pair of quotes around SQL values (and runs backquoted ones as programs),
  // so such a value would not mean what it says.
  const first = value[0];
  if (value.length >= 2 && (first === '"' || first === "'" || first === "`") && value.endsWith(first)) {
    return "must not be wrapped in quotes or backticks";
  }
  return null;
}

/** A check item's regular expression (=~ and !~): it must compile. */
export function checkRegex(pattern: string): string | null {
  try {
    new RegExp(pattern);
    return null;
  } catch (err) {
    return `is not a valid regular expression: ${(err as Error).message}`;
  }
}

const INTEGER_RANGES = {
  byte: [0n, 255n],
  short: [0n, 65535n],
  integer: [0n, 4294967295n],
  integer64: [0n, 18446744073709551615n],
  signed: [-2147483648n, 2147483647n],
} as const;

type IntegerType = keyof typeof INTEGER_RANGES;

function isIntegerType(type: string): type is IntegerType {
  return type in INTEGER_RANGES;
}

/**
 * The number an integer-typed value stands for: decimal digits (a leading minus for `signed`) or,
 * for byte/short/integer, a VALUE name matched case-insensitively. undefined when invalid.
 * FreeRADIUS also takes 0x hex for these; we refuse it so stored values stay in one form.
 */
export function integerValue(def: AttributeDef, value: string): bigint | undefined {
  if (!isIntegerType(def.type)) return undefined;
  const [min, max] = INTEGER_RANGES[def.type];
  if ((def.type === "signed" ? /^-?\d{1,20}$/ : /^\d{1,20}$/).test(value)) {
    const n = BigInt(value);
    return n >= min && n <= max ? n : undefined;
  }
  // FreeRADIUS 3.2 only looks VALUE names up for byte, short and integer.
  if (def.type === "byte" || def.type === "short" || def.type === "integer") {
    const named = findValue(def, value);
    if (named) return BigInt(named.value);
  }
  return undefined;
}

function integerReason(def: AttributeDef, type: IntegerType): string {
  const [min, max] = INTEGER_RANGES[type];
  const base = `must be an integer from ${min} to ${max}`;
  if (type === "integer64" || type === "signed" || def.values.size === 0) return base;
  // One name per number, the last defined (the one FreeRADIUS prints), in numeric order: this
  // lists Login-User rather than dictionary.compat's older alias Shell-User.
  const byNumber = new Map<number, string>();
  for (const [name, n] of def.values) byNumber.set(n, name);
  const names = [...byNumber].sort((x, y) => x[0] - y[0]).map(([, name]) => name);
  const shown = names.slice(0, 6).join(", ");
  return `${base} or one of ${shown}${names.length > 6 ? ", ..." : ""}`;
}

function checkPrefix(value: string, family: Family): string | null {
  try {
    parseCidr(value, family); // as in FreeRADIUS, a bare address is a full-length prefix
    return null;
  } catch {
    return family === 4
      ? "must be an IPv4 prefix such as 192.0.2.0/24"
      : "must be an IPv6 prefix such as 2001:db8::/32";
  }
}

const MAC = /^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/i;
const IFID = /^[0-9a-f]{1,4}(:[0-9a-f]{1,4}){3}$/i;
const HEX = /^0x([0-9a-f]{2})+$/i;

function checkTyped(def: AttributeDef, value: string): string | null {
  const { type } = def;
  if (value === "" && type !== "string") return "must not be empty";
  if (isIntegerType(type)) {
    return integerValue(def, value) === undefined ? integerReason(def, type) : null;
  }
  switch (type) {
    case "string":
      return null; // length and characters are already checked by checkValueSafe
    case "octets":
      // FreeRADIUS reads 0x... as hex and anything else as the raw bytes of the text.
      if (/^0x/i.test(value) && !HEX.test(value))
        return "must be 0x followed by an even number of hex digits";
      return null;
    case "date":
      // Stored Expiration and friends are Unix seconds; FreeRADIUS's other date forms are refused.
      if (/^\d{1,10}$/.test(value) && Number(value) <= 4294967295) return null;
      return "must be a date as Unix seconds (digits only, up to 4294967295)";
    case "ipaddr":
      return parseIp(value, 4) ? null : "must be an IPv4 address such as 192.0.2.1";
    case "ipv6addr":
      return parseIp(value, 6) ? null : "must be an IPv6 address such as 2001:db8::1";
    case "ipv4prefix":
      return checkPrefix(value, 4);
    case "ipv6prefix":
      return checkPrefix(value, 6);
    case "ether":
      return MAC.test(value) ? null : "must be a MAC address such as 00:11:22:aa:bb:cc";
    case "ifid":
      return IFID.test(value) ? null : "must be an interface id such as 0000:0000:0000:0001";
    case "abinary":
      return null; // Ascend filter syntax; FreeRADIUS parses it, we only apply the generic checks
    default:
      return `cannot be set: attributes of type ${type} have no text form`;
  }
}

/**
 * Checks a value for an attribute; null when valid, else a short reason. Runs checkValueSafe
 * first. With an operator: =~ and !~ take a regular expression. =* and !* ignore the value when
 * comparing, but FreeRADIUS still parses it for the attribute's type and rejects the whole user
 * when it cannot (seen with "ANY" on an ipaddr): it must be valid too. A has_tag attribute may carry
 * FreeRADIUS's `:tag:` prefix (0-31, or * for check items).
 */
export function checkAttributeValue(def: AttributeDef, value: string, operator?: string): string | null {
  const unsafe = checkValueSafe(value);
  if (unsafe) return unsafe;
  if (operator === "=~" || operator === "!~") return checkRegex(value);
  // rlm_logintime reads its own syntax; FreeRADIUS skips what it cannot read (login-time.ts).
  if (def.name === "Login-Time" && operator !== "=*" && operator !== "!*") return checkLoginTime(value);
  let rest = value;
  if (def.hasTag) {
    const m = /^:([^:]*):/.exec(value);
    if (m) {
      const tag = m[1] ?? "";
      if (tag !== "*" && !(/^\d{1,2}$/.test(tag) && Number(tag) <= 31)) return "tag must be from 0 to 31";
      rest = value.slice(m[0].length);
    }
  }
  return checkTyped(def, rest);
}

// The "known good" password items of a control list, as FreeRADIUS 3.2's rlm_pap leaves them after
// its authorize step (src/modules/rlm_pap/rlm_pap.c, mod_authorize): every Password-With-Header is
// turned into the item its {scheme} header names (appended at the end of the list), and hashes are
// normalised from hex or base64 to their octets. PAP, CHAP and MS-CHAP then look in this list, as
// rlm_pap's, rlm_chap's and rlm_mschap's authenticate steps look in the control list.
import type { Pair } from "../pairs.ts";
import { cString, frBase64Decode, frHex2bin, sqlOctets } from "./encoding.ts";

/** The password items rlm_pap's authenticate step checks (mod_authenticate), by canonical name. */
export const PASSWORD_ITEMS = [
  "Cleartext-Password",
  "Crypt-Password",
  "MD5-Password",
  "SMD5-Password",
  "SHA-Password",
  "SSHA-Password",
  "SHA2-Password",
  "SSHA2-224-Password",
  "SSHA2-256-Password",
  "SSHA2-384-Password",
  "SSHA2-512-Password",
  "PBKDF2-Password",
  "NT-Password",
  "LM-Password",
  "NS-MTA-MD5-Password",
] as const;
export type PasswordItem = (typeof PASSWORD_ITEMS)[number];

/** Every check item that holds a password, Password-With-Header included (the API replaces them together). */
export const STORED_PASSWORD_ATTRIBUTES: readonly string[] = [
  ...PASSWORD_ITEMS,
  "Password-With-Header",
  "SHA1-Password",
  "SSHA1-Password",
];

const BY_NAME = new Map<string, PasswordItem>([
  ...PASSWORD_ITEMS.map((item) => [item.toLowerCase(), item] as const),
  // Aliases of the same attribute numbers in dictionary.freeradius.internal (1093, 1094).
  ["sha1-password", "SHA-Password"],
  ["ssha1-password", "SSHA-Password"],
]);

/** The canonical item of an attribute name, if it is a password item rlm_pap checks. */
export function passwordItem(attribute: string): PasswordItem | undefined {
  return BY_NAME.get(attribute.toLowerCase());
}

/** Items of type string in the dictionary: their text is their value. The others are octets. */
export const STRING_ITEMS: ReadonlySet<PasswordItem> = new Set<PasswordItem>([
  "Cleartext-Password",
  "Crypt-Password",
  "NS-MTA-MD5-Password",
]);

/**
 * normify's minimum decoded length per item in rlm_pap's authorize step; items absent are left as
 * they are (Cleartext, Crypt, NS-MTA-MD5 and PBKDF2-Password).
 */
export const AUTHORIZE_MIN_LENGTH: Partial<Record<PasswordItem, number>> = {
  "MD5-Password": 16,
  "SMD5-Password": 16,
  "NT-Password": 16,
  "LM-Password": 16,
  "SHA2-Password": 28,
  "SSHA2-224-Password": 28,
  "SSHA2-256-Password": 32,
  "SSHA2-384-Password": 48,
  "SSHA2-512-Password": 64,
  "SHA-Password": 20,
  "SSHA-Password": 20,
};

/** A password item after rlm_pap's authorize step; `octets` undefined when the stored text is unreadable. */
export interface KnownGood {
  item: PasswordItem;
  octets: Buffer | undefined;
  /** The Password-With-Header it came from, for messages. */
  fromHeader?: boolean;
}

/**
 * normify (rlm_pap.c): hex when the length is even, at least twice `minLength` and every pair is
 * hex (fr_hex2bin into 256 octets); else base64 when the text is at least 4/3 of `minLength` long
 * and decodes (into 256 octets) to at least `minLength`; else unchanged (already binary).
 */
export function normify(octets: Buffer, minLength: number): Buffer {
  if (minLength >= 256) return octets;
  if ((octets.length & 1) === 0 && octets.length >= 2 * minLength) {
    const decoded = frHex2bin(octets, 256);
    if (decoded.length === octets.length >> 1) return decoded;
  }
  if (octets.length * 3 >= minLength * 4) {
    const decoded = frBase64Decode(octets, 256);
    if (decoded === undefined) return octets;
    if (decoded.length >= minLength) return decoded;
  }
  return octets;
}

/** rlm_pap's header_names: Password-With-Header's {scheme} prefixes, matched ignoring case. */
const HEADERS = new Map<string, PasswordItem>([
  ["{clear}", "Cleartext-Password"],
  ["{cleartext}", "Cleartext-Password"],
  ["{md5}", "MD5-Password"],
  ["{base64_md5}", "MD5-Password"],
  ["{smd5}", "SMD5-Password"],
  ["{crypt}", "Crypt-Password"],
  ["{sha2}", "SHA2-Password"],
  ["{sha224}", "SHA2-Password"],
  ["{sha256}", "SHA2-Password"],
  ["{sha384}", "SHA2-Password"],
  ["{sha512}", "SHA2-Password"],
  ["{ssha224}", "SSHA2-224-Password"],
  ["{ssha256}", "SSHA2-256-Password"],
  ["{ssha384}", "SSHA2-384-Password"],
  ["{ssha512}", "SSHA2-512-Password"],
  ["{x-pbkdf2}", "PBKDF2-Password"],
  ["{sha}", "SHA-Password"],
  ["{ssha}", "SSHA-Password"],
  ["{md4}", "NT-Password"],
  ["{nt}", "NT-Password"],
  ["{nthash}", "NT-Password"],
  ["{x-nthash}", "NT-Password"],
  ["{ns-mta-md5}", "NS-MTA-MD5-Password"],
  ["{x- orcllmv}", "LM-Password"],
  ["{x- orclntv}", "NT-Password"],
]);

/** The item a {scheme} header names (the header with its braces, any case), if rlm_pap knows it. */
export function headerItem(header: string): PasswordItem | undefined {
  return HEADERS.get(asciiLower(header));
}

/** strcasecmp folds ASCII letters only. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * normify_with_header (rlm_pap.c): the item a Password-With-Header stands for. The header runs to
 * the first "}" of the text (wherever it starts); a known one gives its item with the rest of the
 * value, an unknown one a Cleartext-Password of the whole value. Without "}", a value that is base64
 * of "{...}..." is decoded and read again; any other is a Cleartext-Password. undefined for a header
 * of 256 octets or more (rlm_pap drops the item).
 */
export function withHeader(value: Buffer): KnownGood | undefined {
  let octets = value;
  for (;;) {
    const text = cString(octets);
    const close = text.indexOf(0x7d); // "}"
    if (close >= 0) {
      const headerLength = close + 1;
      if (headerLength >= 256) return undefined;
      const item = headerItem(text.subarray(0, headerLength).toString("latin1"));
      if (!item) return { item: "Cleartext-Password", octets: text, fromHeader: true };
      const rest = octets.subarray(headerLength);
      return { item, octets: STRING_ITEMS.has(item) ? cString(rest) : rest, fromHeader: true };
    }
    const decoded = frBase64Decode(octets, 256);
    if (!decoded || decoded.length === 0 || decoded[0] !== 0x7b || !decoded.includes(0x7d)) {
      return { item: "Cleartext-Password", octets: text, fromHeader: true };
    }
    octets = decoded;
  }
}

interface Entry {
  attribute: string;
  octets: Buffer | undefined;
  fromHeader?: boolean;
}

/** The stored value's octets as FreeRADIUS holds them for its attribute's type. */
function storedOctets(attribute: string, value: string): Buffer | undefined {
  const item = passwordItem(attribute);
  if (item === undefined || STRING_ITEMS.has(item)) return Buffer.from(value, "utf8");
  return sqlOctets(value);
}

/** What rlm_pap's authorize step leaves: the password items, and whether it saw a "known good" one. */
export interface PapAuthorization {
  /** The password items in list order, normalised. */
  known: KnownGood[];
  /**
   * found_pw: a password item its authorize step knows was there (every item but PBKDF2-Password,
   * which 3.2's authorize step omits), or a Password-With-Header. Without it rlm_pap does not set
   * Auth-Type PAP, and a PAP request is rejected unless the user's items set Auth-Type PAP.
   */
  found: boolean;
}

/**
 * rlm_pap's authorize step over a control list. A Password-With-Header is ignored when the list
 * holds a Cleartext-Password (anywhere, or one an earlier header became), else replaced by its item
 * at the end of the list, which is then normalised like the others. A control:User-Password is
 * ignored (rlm_pap warns about it).
 */
export function knownGoodPasswords(control: readonly Pair[]): PapAuthorization {
  const list: Entry[] = [];
  for (const pair of control) {
    const lower = pair.attribute.toLowerCase();
    if (lower !== "password-with-header" && passwordItem(lower) === undefined) continue;
    list.push({ attribute: lower, octets: storedOctets(lower, pair.value) });
  }
  const known: KnownGood[] = [];
  let found = false;
  for (let i = 0; i < list.length; i++) {
    const entry = list[i]!;
    if (entry.attribute === "password-with-header") {
      const hasCleartext = list.some((e) => e.attribute === "cleartext-password");
      if (hasCleartext) continue;
      const converted = entry.octets ? withHeader(entry.octets) : undefined;
      if (converted) list.push({ attribute: converted.item.toLowerCase(), ...converted });
      found = true;
      continue;
    }
    const item = passwordItem(entry.attribute)!;
    if (item !== "PBKDF2-Password") found = true;
    const minLength = AUTHORIZE_MIN_LENGTH[item];
    const octets = entry.octets && minLength !== undefined ? normify(entry.octets, minLength) : entry.octets;
    known.push({ item, octets, ...(entry.fromHeader ? { fromHeader: true } : {}) });
  }
  return { known, found };
}

/** The first item of a kind in the list (rlm_chap and rlm_mschap take the first one). */
export function firstKnown(known: readonly KnownGood[], item: PasswordItem): KnownGood | undefined {
  return known.find((k) => k.item === item);
}

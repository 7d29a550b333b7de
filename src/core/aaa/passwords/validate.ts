// Validating a password item before it is stored (API, console, import): the value must be one the
// login decision can use, read exactly as it will be read at login (knownGoodPasswords, then the
// item's own check). FreeRADIUS stores anything and fails at login; Wisp says why at once.
import { sqlOctets } from "./encoding.ts";
import {
  AUTHORIZE_MIN_LENGTH,
  type KnownGood,
  normify,
  passwordItem,
  STRING_ITEMS,
  withHeader,
} from "./items.ts";
import { storedItemProblem } from "./pap.ts";

/** Whether an attribute is a password item (or Password-With-Header) that validation applies to. */
export function isPasswordAttribute(attribute: string): boolean {
  return attribute.toLowerCase() === "password-with-header" || passwordItem(attribute) !== undefined;
}

/**
 * null when `value` is a usable `attribute` item, else a short reason ("is ..."-style, to follow the
 * field name). Cleartext-Password takes any value; a Password-With-Header must name a {scheme}
 * FreeRADIUS knows (an unknown or missing one would make the whole value a cleartext password).
 */
export function passwordValueProblem(attribute: string, value: string): string | null {
  if (attribute.toLowerCase() === "password-with-header") return headerProblem(value);
  const item = passwordItem(attribute);
  if (!item) return null;
  const octets = STRING_ITEMS.has(item) ? Buffer.from(value, "utf8") : sqlOctets(value);
  if (!octets) return "must be 0x followed by an even number of hex digits";
  return itemProblem({ item, octets });
}

function itemProblem(known: KnownGood): string | null {
  const { item } = known;
  if (item === "Cleartext-Password") return null;
  const minLength = AUTHORIZE_MIN_LENGTH[item];
  const octets = minLength === undefined ? known.octets! : normify(known.octets!, minLength);
  const found = storedItemProblem(item, octets);
  if (!found) return null;
  return found.kind === "unsupported"
    ? `is not usable: ${found.detail} (not supported by Wisp)`
    : `is not a valid ${item}: ${found.detail}`;
}

const HEADER = /^\{[^}]*\}/;

function headerProblem(value: string): string | null {
  const known = withHeader(Buffer.from(value, "utf8"));
  if (!known) return "has a {scheme} header that is too long";
  if (known.item === "Cleartext-Password" && !/^\{clear(text)?\}/i.test(decodedText(value))) {
    const header = HEADER.exec(value)?.[0];
    return header
      ? `has an unknown {scheme} header ${header.slice(0, 40)} (a cleartext password goes in Cleartext-Password)`
      : "has no {scheme} header such as {SSHA} or {crypt} (a cleartext password goes in Cleartext-Password)";
  }
  return itemProblem(known);
}

/** The value, or what it decodes to when it is base64 of a "{scheme}..." value (as rlm_pap reads it). */
function decodedText(value: string): string {
  if (value.includes("}")) return value;
  const decoded = Buffer.from(value, "base64").toString("latin1");
  return decoded.startsWith("{") ? decoded : value;
}

/** A pre-hashed password as the API takes it, and the radcheck item it is stored as. */
export interface StoredPasswordHash {
  attribute: "Password-With-Header";
  value: string;
}

/** Bare forms taken without a {scheme}, and the header they are stored under. */
const BARE_FORMS: [RegExp, string][] = [
  [/^\$(1|5|6|2a|2b|2y)\$/, "{crypt}"],
  [/^\$(pbkdf2-|PBKDF2\$)/, "{x-pbkdf2}"],
];

/**
 * The radcheck item for a pre-hashed password given to the API: "{SCHEME}..." as LDAP's
 * userPassword writes it (any header rlm_pap knows but {clear}), or a bare crypt(3) string ($1$,
 * $5$, $6$, $2a$, $2b$, $2y$) or PBKDF2 string ($pbkdf2-..., $PBKDF2$...), stored as
 * Password-With-Header := "{crypt}..." / "{x-pbkdf2}...". Password-With-Header is the one item every
 * form fits, and FreeRADIUS in front of the same database reads it the same way. A reason string
 * when the hash is not usable.
 */
export function passwordHashItem(hash: string): StoredPasswordHash | string {
  let value = hash;
  if (!value.startsWith("{")) {
    const bare = BARE_FORMS.find(([pattern]) => pattern.test(value));
    if (!bare) {
      return "must be a {SCHEME} hash such as {SSHA}..., {SHA256}..., {crypt}..., or a crypt(3) string ($1$, $5$, $6$, $2a$, $2b$, $2y$) or PBKDF2 string ($pbkdf2-...)";
    }
    value = `${bare[1]}${value}`;
  }
  if (/^\{clear(text)?\}/i.test(value)) return "is a cleartext password: set password instead";
  const bad = passwordValueProblem("Password-With-Header", value);
  return bad ?? { attribute: "Password-With-Header", value };
}

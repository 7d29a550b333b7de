// What a valid captive portal looks like. Limits follow the captive_portals columns.
import { hasControlCharacters } from "../shared/text.ts";

export const MAX_PORTAL_NAME = 100;
export const MAX_SUCCESS_URL = 2000;
export const SUCCESS_URL_RULE = `must be an http:// or https:// URL of at most ${MAX_SUCCESS_URL} characters`;

/** Where guests go after logging in: empty (none) or an absolute http(s) URL without credentials. */
export function checkSuccessUrl(value: string): string | null {
  if (value === "") return null;
  if (value.length > MAX_SUCCESS_URL || /\s/.test(value) || hasControlCharacters(value)) {
    return SUCCESS_URL_RULE;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return SUCCESS_URL_RULE;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return SUCCESS_URL_RULE;
  if (!/^https?:\/\/[^/?#]/i.test(value)) return SUCCESS_URL_RULE;
  if (url.username || url.password) return "must not contain a user name or password";
  return null;
}

/** What a captive portals list may be sorted by. */
export const PORTAL_SORT_FIELDS = ["id", "name", "network_id", "created", "updated"] as const;
export type PortalSortField = (typeof PORTAL_SORT_FIELDS)[number];

/** The gateways a portal hands guests back to (src/portal/handoff.ts implements each protocol). */
export const PORTAL_VENDORS = ["coovachilli", "mikrotik", "generic"] as const;
export type PortalVendor = (typeof PORTAL_VENDORS)[number];
/** Vendors whose hand-off needs the UAM secret shared with the gateway. */
export const VENDORS_WITH_SECRET: readonly PortalVendor[] = ["coovachilli"];

/**
 * How a CoovaChilli portal hands the password to the gateway (coova-chilli doc/hotspotlogin.cgi,
 * src/redir.c): `chap`, a CHAP response the gateway sends as CHAP-Password; `pap`, the password
 * XOR-encoded with the challenge, which the gateway decodes and sends as User-Password.
 */
export const UAM_AUTH_MODES = ["chap", "pap"] as const;
export type UamAuthMode = (typeof UAM_AUTH_MODES)[number];

/**
 * Extra fields of the generic form POST, written like a query string: `name=value` sends a fixed
 * value (pfSense/OPNsense `accept=Continue`, Cisco WLC `buttonClicked=4`), `name=$param` copies the
 * gateway's query parameter `param` (pfSense's `zone`). At most MAX_EXTRA_FIELDS pairs.
 */
export interface ExtraField {
  name: string;
  /** A fixed value, or the gateway parameter to copy. */
  value: string;
  fromGateway: boolean;
}
export const MAX_EXTRA_FIELDS_TEXT = 500;
export const MAX_EXTRA_FIELDS = 8;
export const EXTRA_FIELDS_RULE = `must be empty or up to ${MAX_EXTRA_FIELDS} name=value pairs joined by & (value: text, or $name of a gateway parameter), at most ${MAX_EXTRA_FIELDS_TEXT} characters`;

/** The extra fields, or null when the text does not follow the rule. */
export function parseExtraFields(text: string): ExtraField[] | null {
  if (text === "") return [];
  if (text.length > MAX_EXTRA_FIELDS_TEXT || hasControlCharacters(text)) return null;
  const pairs = text.split("&");
  if (pairs.length > MAX_EXTRA_FIELDS) return null;
  const fields: ExtraField[] = [];
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq < 1) return null;
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (!FIELD_NAME_PATTERN.test(name)) return null;
    if (value.startsWith("$")) {
      if (!FIELD_NAME_PATTERN.test(value.slice(1))) return null;
      fields.push({ name, value: value.slice(1), fromGateway: true });
    } else {
      if (!/^[\x20-\x7e]{0,100}$/.test(value)) return null;
      fields.push({ name, value, fromGateway: false });
    }
  }
  return fields;
}

/** Sign-in methods a portal may offer (src/core/portals/signin.ts and guests.ts implement them; idp: core/idp). */
export const PORTAL_METHODS = ["voucher", "password", "clickthrough", "registration", "idp"] as const;
export type PortalMethod = (typeof PORTAL_METHODS)[number];

/** Languages of the guest pages' message catalogue (src/portal/i18n.ts has one entry per code). */
export const PORTAL_LANGUAGES = ["en", "es", "fr"] as const;
export type PortalLanguage = (typeof PORTAL_LANGUAGES)[number];

export const MAX_TITLE = 100;
export const MAX_WELCOME = 2000;
export const MAX_TERMS = 20_000;
export const MAX_UAM_SECRET = 64;
export const COLOR_PATTERN = /^#[0-9a-fA-F]{6}$/;
/** Form field and query parameter names a generic gateway uses: printable, no spaces or quotes. */
export const FIELD_NAME_PATTERN = /^[A-Za-z0-9_.:[\]-]{1,64}$/;
export const FIELD_NAME_RULE = "must be 1-64 characters from A-Z a-z 0-9 _ . : [ ] -";
export const UAM_SECRET_RULE = `must be 1-${MAX_UAM_SECRET} printable ASCII characters without spaces`;

/** Operator text: no control characters but line breaks (and tabs) where paragraphs are allowed. */
export function checkText(value: string, max: number, multiline: boolean): string | null {
  const rule = `must be at most ${max} characters${multiline ? "" : " on one line"} without control characters`;
  if (value.length > max) return rule;
  const stripped = multiline ? value.replace(/[\r\n\t]/g, "") : value;
  return hasControlCharacters(stripped) ? rule : null;
}

export function checkUamSecret(value: string): string | null {
  return /^[\x21-\x7e]+$/.test(value) && value.length <= MAX_UAM_SECRET ? null : UAM_SECRET_RULE;
}

/** Click-through and registration validity and session limits, in seconds: 1 minute to 1 year. */
export const MIN_GUEST_SECONDS = 60;
export const MAX_GUEST_SECONDS = 31_536_000;
export const GUEST_SECONDS_RULE = `must be a whole number of seconds from ${MIN_GUEST_SECONDS} to ${MAX_GUEST_SECONDS}`;
export const GUEST_SECONDS_FIELDS = [
  "clickthrough_validity",
  "clickthrough_session_timeout",
  "registration_validity",
] as const;

export function checkGuestSeconds(value: number): string | null {
  return Number.isInteger(value) && value >= MIN_GUEST_SECONDS && value <= MAX_GUEST_SECONDS
    ? null
    : GUEST_SECONDS_RULE;
}

/** How long a portal sign-in waits for the gateway's RADIUS request before it is forgotten. */
export const PENDING_LOGIN_SECONDS = 300;

/**
 * A new portal's settings, as migrations 014 and 016 default the columns (a migration is fixed in
 * time; this is what the code uses).
 */
export const PORTAL_DEFAULTS = {
  vendor: "generic",
  methods: ["voucher"],
  language: "auto",
  color_primary: "#1b5e9e",
  color_background: "#f4f6f8",
  generic_login_param: "login_url",
  generic_username_field: "username",
  generic_password_field: "password",
  uam_auth: "chap",
  clickthrough_validity: 86_400,
  clickthrough_session_timeout: 3_600,
  registration_validity: 604_800,
} as const;

// What a valid directory (LDAP / Active Directory source) looks like, the names and limits every
// door shares, and the LDAP text rules: filter values escaped per RFC 4515 section 3, filters and
// server URLs checked before they are stored.
import { hasControlCharacters } from "../shared/text.ts";

export const DIRECTORY_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,19}$/;
export const DIRECTORY_NAME_RULE = "must be 1-20 characters from a-z 0-9 -, starting with a letter or digit";
export const MAX_SERVERS = 8;
export const MAX_URL = 500;
export const MAX_DN = 1000;
export const MAX_FILTER = 1000;
export const MAX_ATTRIBUTE = 100;
export const MAX_CA_PEM = 64 * 1024;
export const MAX_BIND_PASSWORD = 500;
export const MAX_MAPPINGS = 200;
export const MAX_DIRECTORY_GROUP = 500;

export const SCOPES = ["sub", "one"] as const;
/**
 * How a directory says a user is disabled: not at all; Active Directory's userAccountControl with
 * the ACCOUNTDISABLE bit (0x2, [MS-ADTS] 2.2.16); or a configured attribute equal to a value.
 */
export const DISABLED_MODES = ["none", "ad", "attribute"] as const;
export type DisabledMode = (typeof DISABLED_MODES)[number];
export const AD_ACCOUNTDISABLE = 0x2;

/** The numeric settings: [min, max] each, and the default (migration 036). */
export const NUMBER_FIELDS = {
  /** Minutes between scheduled syncs; 0: no scheduled sync. */
  sync_interval: [0, 10_080],
  group_cache_seconds: [0, 86_400],
  connect_timeout_ms: [100, 30_000],
  timeout_ms: [100, 60_000],
  pool_size: [1, 32],
  breaker_failures: [1, 100],
  breaker_cooldown_seconds: [1, 3_600],
} as const;
export type NumberField = keyof typeof NUMBER_FIELDS;

/** Users per page of a sync's search (RFC 2696 paged results): memory stays bounded by one page. */
export const SYNC_PAGE_SIZE = 500;
/** How long this process reuses an account's directory settings before reading them again. */
export const SOURCES_CACHE_MS = 5_000;
/** The recurring job that starts due syncs, and how often it looks. */
export const DIRECTORY_SYNC_JOB = "directories.sync";
export const SYNC_CHECK_MS = 60_000;

/** An attribute description (RFC 4512 section 2.5: a name or OID, options after ;). */
export const ATTRIBUTE_PATTERN = /^[A-Za-z][A-Za-z0-9-]{0,99}(;[A-Za-z0-9-]+)*$|^[0-9]+(\.[0-9]+)+$/;

/**
 * A value put into a search filter as text, escaped per RFC 4515 section 3: the asterisk,
 * parentheses, backslash and NUL become \2a \28 \29 \5c \00, so a username can never add a
 * wildcard or a clause to the filter ("*", ")(uid=*", a NUL cutting the filter short).
 */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

function parenthesesBalance(filter: string): boolean {
  let depth = 0;
  for (const c of filter) {
    if (c === "(") depth++;
    else if (c === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

/**
 * A filter that parses as RFC 4515 text (in parentheses), or the reason it does not. ldapts (its
 * parser) is loaded here and by the first connection only: a server with no directory never holds
 * it (idle memory, issue 32 point 4).
 */
export async function filterProblem(filter: string): Promise<string | null> {
  if (filter.length > MAX_FILTER || hasControlCharacters(filter))
    return `must be an LDAP filter of at most ${MAX_FILTER} characters`;
  if (!filter.startsWith("(") || !filter.endsWith(")")) return "must be an LDAP filter in parentheses";
  // ldapts's parser lets a missing ")" pass ("(&(a=b)"); RFC 4515 section 3 escapes parentheses
  // in values (\28, \29), so every raw one is structure and they must balance.
  if (!parenthesesBalance(filter)) return "is not a valid LDAP filter (RFC 4515): unbalanced parentheses";
  const { FilterParser } = await import("ldapts");
  try {
    FilterParser.parseString(filter);
    return null;
  } catch (error) {
    return `is not a valid LDAP filter (RFC 4515): ${(error as Error).message}`;
  }
}

/** An ldap:// or ldaps:// server address (host and port only), or the reason it is not one. */
export function serverProblem(value: string): string | null {
  const rule = "must be ldap://host[:port] or ldaps://host[:port]";
  if (value.length > MAX_URL || /\s/.test(value) || hasControlCharacters(value)) return rule;
  try {
    const url = new URL(value);
    if (url.protocol !== "ldap:" && url.protocol !== "ldaps:") return rule;
    if (!url.hostname || url.username || url.password) return rule;
    if ((url.pathname !== "" && url.pathname !== "/") || url.search || url.hash) return rule;
  } catch {
    return rule;
  }
  return null;
}

/** A DN as typed: one line, bounded; the directory itself decides whether it names an entry. */
export function dnProblem(value: string, required: boolean): string | null {
  if (required && value.trim() === "") return "is required";
  if (value.length > MAX_DN || hasControlCharacters(value))
    return `must be a DN of at most ${MAX_DN} characters on one line`;
  return null;
}

/** Whether a user entry says the account is disabled. */
export function entryDisabled(
  mode: DisabledMode,
  values: { attribute: string[]; userAccountControl: string[] },
  disabledValue: string,
): boolean {
  if (mode === "ad") {
    const uac = Number(values.userAccountControl[0] ?? "0");
    return Number.isInteger(uac) && (uac & AD_ACCOUNTDISABLE) !== 0;
  }
  if (mode === "attribute") {
    const wanted = disabledValue.toLowerCase();
    return values.attribute.some((v) => v.toLowerCase() === wanted);
  }
  return false;
}

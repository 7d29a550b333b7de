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

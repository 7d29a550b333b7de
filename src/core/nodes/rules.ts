// The access points ("nodes", as IronWiFi calls them) an account has seen: not a table of their
// own but what accounting (radacct) and authentication (radpostauth) recorded from each request's
// Called-Station-Id (RFC 3580 section 3.20: the AP's MAC, then ":SSID"; core/aaa/stations.ts).

/** What a nodes list may be sorted by. */
export const NODE_SORT_FIELDS = [
  "mac",
  "first_seen",
  "last_seen",
  "sessions_now",
  "authentications_24h",
  "failures_24h",
] as const;
export type NodeSortField = (typeof NODE_SORT_FIELDS)[number];

export const MAX_NODE_SEARCH = 17;
export const MAX_SSID = 32;
/** "Authentications in the last 24 h". */
export const RECENT_WINDOW_S = 24 * 3600;

// What a valid group and membership look like. The HTTP schemas reuse these limits so the OpenAPI
// document says the same thing the service enforces for every door.

// Group names go into FreeRADIUS's group queries as usernames do: the same safe characters.
export { USERNAME_PATTERN as GROUP_NAME_PATTERN } from "../aaa/values.ts";

export const GROUP_NAME_RULE = "must be 1-64 characters from A-Z a-z 0-9 @ . _ : -";
export const MAX_DESCRIPTION = 255;
export const MAX_SEARCH = 100;

/** Lower is evaluated first (rlm_sql orders radusergroup by priority). */
export const DEFAULT_PRIORITY = 1;
export const MIN_PRIORITY = 0;
export const MAX_PRIORITY = 1_000_000;

/** What a groups list may be sorted by. */
export const GROUP_SORT_FIELDS = ["id", "name", "created", "updated"] as const;
export type GroupSortField = (typeof GROUP_SORT_FIELDS)[number];
/** What a group's members may be sorted by; by default priority, then username. */
export const MEMBER_SORT_FIELDS = ["userid", "username", "priority"] as const;
export type MemberSortField = (typeof MEMBER_SORT_FIELDS)[number];

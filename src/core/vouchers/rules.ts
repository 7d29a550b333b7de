// What a valid voucher looks like. The HTTP schemas reuse these limits so the OpenAPI document says
// the same thing the service enforces for every door (API, console, CLI).

/** No look-alikes (0 O 1 I L): guests type these codes from paper or a screen. */
export const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/** Random characters after the prefix: 31^8 ≈ 8.5e11 codes per prefix. */
export const RANDOM_LENGTH = 8;
export const MAX_PREFIX = 8;
/** The `vouchers.code` column is varchar(16): prefix (<= 8) + 8 random characters fits. */
export const MAX_CODE = 16;
export const MIN_EXPLICIT_CODE = 4;

export const PREFIX_PATTERN = `^[A-Za-z0-9]{0,${MAX_PREFIX}}$`;
export const CODE_PATTERN = `^[A-Za-z0-9]{${MIN_EXPLICIT_CODE},${MAX_CODE}}$`;
export const PREFIX_RULE = `must be 0-${MAX_PREFIX} characters from A-Z a-z 0-9`;
export const CODE_RULE = `must be ${MIN_EXPLICIT_CODE}-${MAX_CODE} characters from A-Z a-z 0-9`;

/** Seconds. One minute is the shortest useful guest pass; one year the longest we accept. */
export const MIN_VALIDITY = 60;
export const MAX_VALIDITY = 31_536_000;
/** Seconds; at most the validity (a session cannot outlive the voucher anyway). */
export const MIN_SESSION_TIMEOUT = 60;
/** Distinct client devices; 0 = unlimited. */
export const MAX_USAGE_LIMIT = 1000;
export const DEFAULT_USAGE_LIMIT = 1;
export const MAX_BATCH = 10_000;
/** Octets in plus out over every session of a voucher: at most 2^53 - 1 (8 PiB). */
export const MAX_DATA_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * unused: never logged in. active: first login done, `expires` set. expired: `expires` has passed
 * (derived from the clock when read, so no sweeper is needed). exhausted: every device slot is
 * taken; no new device may log in. disabled: refused at login.
 */
export const VOUCHER_STATUSES = ["unused", "active", "expired", "exhausted", "disabled"] as const;
export type VoucherStatus = (typeof VOUCHER_STATUSES)[number];
/** Stored statuses that turn into `expired` once `expires` is past. */
export const LAPSING_STATUSES: readonly VoucherStatus[] = ["active", "exhausted"];

/**
 * What a vouchers list may be sorted by. Not `status`: past `expires` an active voucher reads as
 * expired without its stored status changing, so the stored order would not be the one shown.
 */
export const VOUCHER_SORT_FIELDS = ["id", "code", "created", "first_used", "expires", "batch_id"] as const;
export type VoucherSortField = (typeof VOUCHER_SORT_FIELDS)[number];

// Verified guests (issue 27): what a portal's verification settings may be, and their safe defaults.
// A portal's registration is verified one way at most: an email code or link, an SMS code, or a
// sponsor's approval. Every limit has a default a venue can live with.

export const EMAIL_VERIFICATION = ["off", "code", "link"] as const;
export type EmailVerification = (typeof EMAIL_VERIFICATION)[number];
export const SMS_PROVIDERS = ["twilio", "generic"] as const;
export type SmsProvider = (typeof SMS_PROVIDERS)[number];
export const SMS_METHODS = ["POST", "PUT"] as const;

/** What a verification row is waiting for. */
export type VerificationKind = "email_code" | "email_link" | "sms" | "sponsor";

/** Whole-number settings: [min, max, default]. */
export const GUEST_LIMITS = {
  /** Seconds a code or an email link works. */
  code_ttl: [60, 86_400, 600],
  /** Wrong codes before the code is locked (a new one must be sent). */
  code_attempts: [1, 20, 5],
  /** Seconds between two sends to one guest. */
  resend_cooldown: [10, 3_600, 60],
  /** Messages per day to one email address or phone number, to one device, from one address. */
  sends_per_recipient: [1, 100, 5],
  sends_per_device: [1, 1_000, 10],
  sends_per_address: [1, 100_000, 50],
  /** Minutes of the pre-verification login that lets the guest reach their mailbox. */
  preverify_minutes: [1, 60, 10],
  /** Seconds a sponsor's approve and deny links work. */
  sponsor_window: [300, 7 * 86_400, 3_600],
} as const;
export type GuestLimitField = keyof typeof GUEST_LIMITS;
export const GUEST_LIMIT_FIELDS = Object.keys(GUEST_LIMITS) as GuestLimitField[];

export function checkLimit(field: GuestLimitField, value: number): string | null {
  const [min, max] = GUEST_LIMITS[field];
  return Number.isInteger(value) && value >= min && value <= max
    ? null
    : `must be a whole number from ${min} to ${max}`;
}

/** Default durations a sponsor chooses from: 1 hour, 8 hours, 1 day. */
export const DEFAULT_SPONSOR_DURATIONS = [3_600, 28_800, 86_400];
export const MAX_SPONSOR_DURATIONS = 10;
export const MAX_SPONSOR_ENTRIES = 100;
export const MAX_SMS_COUNTRIES = 50;
export const MAX_SMS_TEMPLATE = 2_000;
export const MAX_SMS_URL = 2_000;

/** A guest's page, a sponsor's request and an email link stay readable this long (seconds). */
export const REQUEST_LIFETIME = 86_400;
/** Sends per account per hour when GUEST_SENDS_PER_ACCOUNT_HOUR is unset. */
export const DEFAULT_ACCOUNT_SENDS_PER_HOUR = 500;
/** Pre-verification logins per device per day. */
export const PREVERIFY_PER_DEVICE_DAY = 1;

/** A DNS name: the domains sponsors' addresses may be of. */
export const DOMAIN =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
/** A plain address: RFC 5322 atext (and dots) before the @, a DNS name with a dot after it; no CR/LF. */
export const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
export const MAX_EMAIL = 254;
/** Calling-code prefixes (ITU-T E.164): + and 1-6 digits. */
export const COUNTRY_PREFIX = /^\+[1-9][0-9]{0,5}$/;
/** An HTTP header name (RFC 9110 section 5.1 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

export function isEmail(value: string): boolean {
  return value.length <= MAX_EMAIL && EMAIL.test(value);
}

/** Comma- or space-separated entries, trimmed and lower-cased. */
export function entries(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
}

/** How Wisp reaches its mail server (SMTP_* settings, src/config.ts). */
export interface SmtpSettings {
  host: string;
  port: number;
  /** starttls: plain connection upgraded with STARTTLS, required (RFC 3207); tls: TLS from the start (RFC 8314); none: no TLS (a local relay). */
  security: "starttls" | "tls" | "none";
  user: string | undefined;
  password: string | undefined;
  /** The From address, optionally with a display name: `Wi-Fi <wifi@example.com>`. */
  from: string;
  /** Bound on connecting, the greeting and each command: a slow or dead server never holds a guest's page longer. */
  timeoutMs: number;
  /** PEM file of a private CA the server's certificate is checked against (besides the system's). */
  caFile: string | undefined;
}
export const SMTP_SECURITY = ["starttls", "tls", "none"] as const;

/** Where a guest user came from (users.source, migration 038). */
export const GUEST_SOURCES = ["portal", "idp"] as const;
/** How a guest registered: the portal's form, a verification kind, or an identity provider. */
export const GUEST_METHODS = ["registration", "email_code", "email_link", "sms", "sponsor", "idp"] as const;
/** What a guests list may be sorted by. */
export const GUEST_SORT_FIELDS = ["id", "username", "email", "fullname", "method", "created"] as const;
export type GuestSortField = (typeof GUEST_SORT_FIELDS)[number];
export const MAX_GUEST_SEARCH = 100;

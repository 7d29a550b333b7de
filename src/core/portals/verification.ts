// A portal's guest verification settings (issue 27): checked, stored, shown to operators and handed
// to the guest pages. The rules themselves are in core/guests/rules.ts.
import {
  COUNTRY_PREFIX,
  checkLimit,
  DOMAIN,
  EMAIL_VERIFICATION,
  type EmailVerification,
  entries,
  GUEST_LIMIT_FIELDS,
  type GuestLimitField,
  HEADER_NAME,
  isEmail,
  MAX_SMS_COUNTRIES,
  MAX_SMS_TEMPLATE,
  MAX_SMS_URL,
  MAX_SPONSOR_DURATIONS,
  MAX_SPONSOR_ENTRIES,
  SMS_METHODS,
  SMS_PROVIDERS,
  type SmsProvider,
} from "../guests/rules.ts";
import { type FieldProblem, ValidationError } from "../shared/errors.ts";
import { hasControlCharacters } from "../shared/text.ts";
import type { PortalChanges, PortalRow } from "./repo.ts";
import { MAX_GUEST_SECONDS, MIN_GUEST_SECONDS } from "./rules.ts";

type Limits = { [K in GuestLimitField]?: number | undefined };

export interface VerificationInput extends Limits {
  email_verification?: string | undefined;
  sms_verification?: boolean | undefined;
  sponsor_required?: boolean | undefined;
  /** A short login before verification, so the guest can read the email. */
  preverify?: boolean | undefined;
  sms_countries?: string[] | undefined;
  sms_provider?: string | undefined;
  sms_url?: string | undefined;
  sms_method?: string | undefined;
  sms_template?: string | undefined;
  sms_username?: string | undefined;
  sms_from?: string | undefined;
  sms_auth_header?: string | undefined;
  /** Write-only; empty removes it. */
  sms_secret?: string | undefined;
  sponsor_domains?: string[] | undefined;
  sponsor_emails?: string[] | undefined;
  sponsor_durations?: number[] | undefined;
}

/** What operators see (the SMS secret only as set or not). */
export interface VerificationSettings extends Required<{ [K in GuestLimitField]: number }> {
  email_verification: EmailVerification;
  sms_verification: boolean;
  sponsor_required: boolean;
  preverify: boolean;
  sms_countries: string[];
  sms_provider: SmsProvider;
  sms_url: string;
  sms_method: string;
  sms_template: string;
  sms_username: string;
  sms_from: string;
  sms_auth_header: string;
  sms_secret_set: boolean;
  sponsor_domains: string[];
  sponsor_emails: string[];
  sponsor_durations: number[];
}

/** What the guest pages and the guests core need (the SMS secret in clear). */
export interface GuestVerification {
  email: EmailVerification;
  sms: boolean;
  sponsor: boolean;
  preverify: boolean;
  limits: { [K in GuestLimitField]: number };
  smsCountries: string[];
  smsGateway: {
    provider: SmsProvider;
    url: string;
    method: string;
    template: string;
    username: string;
    from: string;
    authHeader: string;
    secret: string;
  };
  sponsorDomains: string[];
  sponsorEmails: string[];
  sponsorDurations: number[];
}

const list = (stored: string) => (stored === "" ? [] : stored.split(","));

export function verificationSettings(row: PortalRow): VerificationSettings {
  const limits = Object.fromEntries(GUEST_LIMIT_FIELDS.map((f) => [f, row[f]])) as {
    [K in GuestLimitField]: number;
  };
  return {
    email_verification: row.email_verification as EmailVerification,
    sms_verification: row.sms_verification === 1,
    sponsor_required: row.sponsor_required === 1,
    preverify: row.preverify === 1,
    ...limits,
    sms_countries: list(row.sms_countries),
    sms_provider: row.sms_provider as SmsProvider,
    sms_url: row.sms_url,
    sms_method: row.sms_method,
    sms_template: row.sms_template,
    sms_username: row.sms_username,
    sms_from: row.sms_from,
    sms_auth_header: row.sms_auth_header,
    sms_secret_set: row.sms_secret !== "",
    sponsor_domains: list(row.sponsor_domains),
    sponsor_emails: list(row.sponsor_emails),
    sponsor_durations: list(row.sponsor_durations).map(Number),
  };
}

export function guestVerification(row: PortalRow, secret: string): GuestVerification {
  const s = verificationSettings(row);
  return {
    email: s.email_verification,
    sms: s.sms_verification,
    sponsor: s.sponsor_required,
    preverify: s.preverify,
    limits: Object.fromEntries(GUEST_LIMIT_FIELDS.map((f) => [f, s[f]])) as GuestVerification["limits"],
    smsCountries: s.sms_countries,
    smsGateway: {
      provider: s.sms_provider,
      url: s.sms_url,
      method: s.sms_method,
      template: s.sms_template,
      username: s.sms_username,
      from: s.sms_from,
      authHeader: s.sms_auth_header,
      secret,
    },
    sponsorDomains: s.sponsor_domains,
    sponsorEmails: s.sponsor_emails,
    sponsorDurations: s.sponsor_durations,
  };
}

function checkUrl(value: string): string | null {
  if (value === "") return null;
  const rule = `must be an http:// or https:// URL of at most ${MAX_SMS_URL} characters`;
  if (value.length > MAX_SMS_URL || /\s/.test(value) || hasControlCharacters(value)) return rule;
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return rule;
    if (url.username || url.password) return "must not contain a user name or password";
  } catch {
    return rule;
  }
  return null;
}

function checkLists(input: VerificationInput, clean: VerificationInput, problems: FieldProblem[]): void {
  if (input.sms_countries !== undefined) {
    clean.sms_countries = [...new Set(input.sms_countries.map((c) => c.trim()).filter(Boolean))];
    if (
      clean.sms_countries.length > MAX_SMS_COUNTRIES ||
      clean.sms_countries.some((c) => !COUNTRY_PREFIX.test(c))
    )
      problems.push({
        field: "sms_countries",
        message: `must be up to ${MAX_SMS_COUNTRIES} calling-code prefixes like +34 or +1`,
      });
  }
  if (input.sponsor_domains !== undefined) {
    clean.sponsor_domains = [...new Set(input.sponsor_domains.flatMap(entries))];
    if (
      clean.sponsor_domains.length > MAX_SPONSOR_ENTRIES ||
      clean.sponsor_domains.some((d) => !DOMAIN.test(d))
    )
      problems.push({
        field: "sponsor_domains",
        message: `must be up to ${MAX_SPONSOR_ENTRIES} domain names like example.com`,
      });
  }
  if (input.sponsor_emails !== undefined) {
    clean.sponsor_emails = [...new Set(input.sponsor_emails.flatMap(entries))];
    if (clean.sponsor_emails.length > MAX_SPONSOR_ENTRIES || clean.sponsor_emails.some((e) => !isEmail(e)))
      problems.push({
        field: "sponsor_emails",
        message: `must be up to ${MAX_SPONSOR_ENTRIES} email addresses`,
      });
  }
  if (input.sponsor_durations !== undefined) {
    clean.sponsor_durations = [...new Set(input.sponsor_durations)].sort((a, b) => a - b);
    const bad = clean.sponsor_durations.some(
      (d) => !Number.isInteger(d) || d < MIN_GUEST_SECONDS || d > MAX_GUEST_SECONDS,
    );
    if (bad || clean.sponsor_durations.length < 1 || clean.sponsor_durations.length > MAX_SPONSOR_DURATIONS)
      problems.push({
        field: "sponsor_durations",
        message: `must be 1-${MAX_SPONSOR_DURATIONS} durations in seconds from ${MIN_GUEST_SECONDS} to ${MAX_GUEST_SECONDS}`,
      });
  }
}

function checkSms(input: VerificationInput, clean: VerificationInput, problems: FieldProblem[]): void {
  if (input.sms_provider !== undefined && !(SMS_PROVIDERS as readonly string[]).includes(input.sms_provider))
    problems.push({ field: "sms_provider", message: `must be one of ${SMS_PROVIDERS.join(", ")}` });
  if (input.sms_method !== undefined) {
    clean.sms_method = input.sms_method.toUpperCase();
    if (!(SMS_METHODS as readonly string[]).includes(clean.sms_method))
      problems.push({ field: "sms_method", message: `must be one of ${SMS_METHODS.join(", ")}` });
  }
  const badUrl = input.sms_url === undefined ? null : checkUrl(input.sms_url.trim());
  if (input.sms_url !== undefined) clean.sms_url = input.sms_url.trim();
  if (badUrl) problems.push({ field: "sms_url", message: badUrl });
  if (input.sms_template !== undefined) {
    const text = input.sms_template.replace(/\r\n?/g, "\n");
    if (text.length > MAX_SMS_TEMPLATE || hasControlCharacters(text.replace(/[\n\t]/g, "")))
      problems.push({ field: "sms_template", message: `must be at most ${MAX_SMS_TEMPLATE} characters` });
  }
  for (const field of ["sms_username", "sms_from"] as const) {
    const value = input[field];
    if (value !== undefined && (value.length > 200 || hasControlCharacters(value)))
      problems.push({ field, message: "must be at most 200 characters without control characters" });
  }
  if (input.sms_auth_header !== undefined && !HEADER_NAME.test(input.sms_auth_header))
    problems.push({ field: "sms_auth_header", message: "must be an HTTP header name like Authorization" });
  const secret = input.sms_secret;
  if (secret !== undefined && secret !== "" && !/^[\x20-\x7e]{1,500}$/.test(secret))
    problems.push({ field: "sms_secret", message: "must be 1-500 printable ASCII characters" });
}

/** Checks the verification fields given; pushes a problem per bad field. */
export function checkVerification(
  input: VerificationInput,
  clean: VerificationInput,
  problems: FieldProblem[],
) {
  const mode = input.email_verification;
  if (mode !== undefined && !(EMAIL_VERIFICATION as readonly string[]).includes(mode))
    problems.push({
      field: "email_verification",
      message: `must be one of ${EMAIL_VERIFICATION.join(", ")}`,
    });
  for (const field of GUEST_LIMIT_FIELDS) {
    const value = input[field];
    const bad = value === undefined ? null : checkLimit(field, value);
    if (bad) problems.push({ field, message: bad });
  }
  checkLists(input, clean, problems);
  checkSms(input, clean, problems);
}

/** The stored columns of the verification fields given (the SMS secret is sealed by the service). */
export function verificationColumns(clean: VerificationInput): PortalChanges {
  const changes: PortalChanges = {};
  const flag = (value: boolean | undefined) => (value === undefined ? undefined : value ? 1 : 0);
  if (clean.email_verification !== undefined) changes.email_verification = clean.email_verification;
  if (clean.sms_verification !== undefined) changes.sms_verification = flag(clean.sms_verification);
  if (clean.sponsor_required !== undefined) changes.sponsor_required = flag(clean.sponsor_required);
  if (clean.preverify !== undefined) changes.preverify = flag(clean.preverify);
  for (const field of GUEST_LIMIT_FIELDS) if (clean[field] !== undefined) changes[field] = clean[field];
  if (clean.sms_countries !== undefined) changes.sms_countries = clean.sms_countries.join(",");
  for (const field of [
    "sms_provider",
    "sms_url",
    "sms_method",
    "sms_template",
    "sms_username",
    "sms_from",
  ] as const) {
    if (clean[field] !== undefined) changes[field] = clean[field];
  }
  if (clean.sms_auth_header !== undefined) changes.sms_auth_header = clean.sms_auth_header;
  if (clean.sponsor_domains !== undefined) changes.sponsor_domains = clean.sponsor_domains.join(",");
  if (clean.sponsor_emails !== undefined) changes.sponsor_emails = clean.sponsor_emails.join(",");
  if (clean.sponsor_durations !== undefined) changes.sponsor_durations = clean.sponsor_durations.join(",");
  return changes;
}

/**
 * What the whole portal must satisfy once a change is applied: one way of verifying at most, on a
 * portal offering registration, with what that way needs (an SMS gateway, sponsors).
 */
export function checkCombination(row: PortalRow): void {
  const ways = [row.email_verification !== "off", row.sms_verification === 1, row.sponsor_required === 1];
  if (ways.filter(Boolean).length > 1)
    throw ValidationError.field(
      "email_verification",
      "only one of email verification, SMS verification and sponsor approval may be on",
    );
  const verifying = ways.some(Boolean);
  if (verifying && !row.methods.split(",").includes("registration"))
    throw ValidationError.field("methods", "must include registration when guests are verified");
  if (row.preverify === 1 && row.email_verification === "off")
    throw ValidationError.field("preverify", "needs email verification (it lets guests reach their mailbox)");
  if (row.sms_verification === 1) {
    if (row.sms_url === "" && row.sms_provider === "generic")
      throw ValidationError.field("sms_url", "is required for the generic SMS gateway");
    if (row.sms_provider === "twilio" && (row.sms_username === "" || row.sms_secret === ""))
      throw ValidationError.field("sms_username", "and the auth token are required for Twilio (Account SID)");
    if (row.sms_provider === "twilio" && row.sms_from === "")
      throw ValidationError.field("sms_from", "is required for Twilio (the sender number or service)");
  }
  if (row.sponsor_required === 1 && row.sponsor_domains === "" && row.sponsor_emails === "")
    throw ValidationError.field(
      "sponsor_domains",
      "or sponsor addresses are required when sponsors approve guests",
    );
}

// What a valid identity provider looks like, and the names and limits shared by the service, the
// sign-in flows and every door (API schema, console form, CLI).
import { createHash } from "node:crypto";
import { hasControlCharacters } from "../shared/text.ts";

export const IDP_KINDS = ["oidc", "saml"] as const;
export type IdpKind = (typeof IDP_KINDS)[number];

/** The provider's short name: the prefix of its users' names, fixed once created. */
export const IDP_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,19}$/;
export const IDP_NAME_RULE = "must be 1-20 characters from a-z 0-9 -, starting with a letter or digit";
export const MAX_DISPLAY_NAME = 100;
export const MAX_URL = 2000;
export const MAX_CLIENT_ID = 500;
export const MAX_CLIENT_SECRET = 500;
export const MAX_SCOPES = 500;
export const MAX_CLAIM = 100;
export const MAX_ATTRIBUTE = 200;
export const MAX_DOMAINS = 50;
export const MAX_METADATA = 512 * 1024;
export const MAX_MAPPINGS = 200;
export const MAX_IDP_GROUP = 200;
/** A claim name: a JSON member name without control characters; dots are literal, not paths. */
export const CLAIM_PATTERN = /^[\x21-\x7e]{1,100}$/;
/** A DNS domain as in an email address, lower case. */
export const DOMAIN_PATTERN =
  /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** How long a sign-in may stay at the IdP before its state is forgotten. */
export const FLOW_SECONDS = 600;
/** How long the IdP's HTTP answers (discovery, token, JWKS, metadata) are waited for. */
export const IDP_TIMEOUT_MS = 8_000;
/** Clock skew allowed between Wisp and the IdP (ID token iat/exp, SAML NotBefore/NotOnOrAfter). */
export const CLOCK_SKEW_SECONDS = 120;
/** How long a provider's discovery document and keys are reused before they are read again. */
export const DISCOVERY_CACHE_MS = 10 * 60_000;

/** The reason a sign-in was refused, logged by the door and shown as a friendly page. */
export type IdpProblem =
  | "provider_off"
  | "unknown_state"
  | "browser_mismatch"
  | "idp_error"
  | "idp_unreachable"
  | "token_invalid"
  | "assertion_invalid"
  | "assertion_replayed"
  | "no_subject"
  | "email_not_verified"
  | "domain_not_allowed"
  | "user_refused"
  | "no_admin";

export class IdpRefusal extends Error {
  constructor(
    readonly problem: IdpProblem,
    /** What the log says (the IdP's or library's words: never shown to the guest). */
    readonly detail: string,
  ) {
    super(`${problem}: ${detail}`);
  }
}

/** The identity an IdP vouched for, once every check passed. */
export interface VerifiedIdentity {
  /** The IdP's stable subject (OIDC `sub` or the configured claim; SAML NameID or attribute). */
  subject: string;
  email: string;
  emailVerified: boolean;
  name: string;
  groups: string[];
}

/**
 * The Wisp username of a provider's subject: `<provider>:<subject>` when the subject fits the
 * username rules (1-64 of A-Z a-z 0-9 @ . _ : -), else `<provider>:h-` and 32 hex digits of its
 * SHA-256. Either way it depends on the subject alone, so it stays when the email changes.
 */
export function idpUsername(provider: string, subject: string): string {
  const plain = `${provider}:${subject}`;
  if (plain.length <= 64 && /^[A-Za-z0-9@._:-]+$/.test(subject)) return plain;
  return `${provider}:h-${createHash("sha256").update(subject).digest("hex").slice(0, 32)}`;
}

/** The domain of an email address, lower case, or "" for none. */
export function emailDomain(email: string): string {
  const at = email.lastIndexOf("@");
  return at < 1 ? "" : email.slice(at + 1).toLowerCase();
}

/** A list of domains as typed (commas, spaces or lines), lower case, without duplicates. */
export function domainEntries(values: readonly string[]): string[] {
  return [
    ...new Set(
      values
        .flatMap((v) => v.split(/[\s,]+/))
        .map((d) => d.trim().toLowerCase().replace(/^@/, ""))
        .filter(Boolean),
    ),
  ];
}

/** An http(s) URL check; `allowHttp` lets tests and labs use a plain-http IdP. */
export function urlProblem(value: string, allowHttp: boolean): string | null {
  const rule = allowHttp
    ? `must be an http:// or https:// URL of at most ${MAX_URL} characters`
    : `must be an https:// URL of at most ${MAX_URL} characters`;
  if (value.length > MAX_URL || /\s/.test(value) || hasControlCharacters(value)) return rule;
  try {
    const url = new URL(value);
    if (url.protocol !== "https:" && !(allowHttp && url.protocol === "http:")) return rule;
    if (url.username || url.password) return "must not contain a user name or password";
    if (url.hash) return "must not contain a fragment";
  } catch {
    return rule;
  }
  return null;
}

/** Presets the console and the docs offer: the fields an operator would otherwise look up. */
export const IDP_PRESETS = {
  google: {
    kind: "oidc",
    display_name: "Google",
    issuer: "https://accounts.google.com",
    scopes: "openid email profile",
    user_claim: "sub",
  },
  entra: {
    kind: "oidc",
    display_name: "Microsoft",
    issuer: "https://login.microsoftonline.com/<tenant-id>/v2.0",
    scopes: "openid email profile",
    user_claim: "oid",
    group_claim: "groups",
  },
  okta: {
    kind: "oidc",
    display_name: "Okta",
    issuer: "https://<your-org>.okta.com",
    scopes: "openid email profile groups",
    user_claim: "sub",
    group_claim: "groups",
  },
  saml: {
    kind: "saml",
    display_name: "Single sign-on",
    user_attribute: "",
    group_attribute: "",
  },
} as const;

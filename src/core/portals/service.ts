// Captive portals: the login pages guests of one network see before they get on the Wi-Fi. A portal
// hangs off a network of the same account; its login URL is derived from the public address of Wisp.

import { createHash } from "node:crypto";
import {
  MAX_REMEMBER_DAYS,
  RANDOM_MAC_CHOICES,
  type RandomMacChoice,
  REMEMBER_CHOICES,
  type RememberChoice,
} from "../devices/rules.ts";
import { type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import { GatewayAllowList, parseAllowedGateways } from "./gateways.ts";
import { checkLogo } from "./logo.ts";
import {
  type GuestPortalRow,
  isMissingReference,
  type PortalChanges,
  type PortalFilter,
  type PortalListRow,
  type PortalRow,
  type PortalsRepo,
} from "./repo.ts";
import {
  COLOR_PATTERN,
  checkGuestSeconds,
  checkSuccessUrl,
  checkText,
  checkUamSecret,
  EXTRA_FIELDS_RULE,
  type ExtraField,
  FIELD_NAME_PATTERN,
  FIELD_NAME_RULE,
  GUEST_SECONDS_FIELDS,
  MAX_PORTAL_NAME,
  MAX_TERMS,
  MAX_TITLE,
  MAX_WELCOME,
  PENDING_LOGIN_SECONDS,
  PORTAL_LANGUAGES,
  PORTAL_METHODS,
  PORTAL_SORT_FIELDS,
  PORTAL_VENDORS,
  type PortalMethod,
  type PortalVendor,
  parseExtraFields,
  UAM_AUTH_MODES,
  type UamAuthMode,
  VENDORS_WITH_SECRET,
} from "./rules.ts";
import {
  checkCombination,
  checkVerification,
  type GuestVerification,
  guestVerification,
  type VerificationInput,
  type VerificationSettings,
  verificationColumns,
  verificationSettings,
} from "./verification.ts";

export interface CaptivePortal extends VerificationSettings {
  id: number;
  name: string;
  network_id: number;
  /** Where the network's gateway sends guests: `${PUBLIC_URL}/portal/${id}`. */
  login_url: string;
  /** Where guests go after logging in; empty for none. */
  success_url: string;
  /** Off: the guest page answers 404. */
  enabled: boolean;
  vendor: PortalVendor;
  /** Whether a UAM secret is set; the secret itself is write-only. */
  uam_secret_set: boolean;
  /** CoovaChilli: the password handed over as a CHAP response ("chap") or PAP-encoded ("pap"). */
  uam_auth: UamAuthMode;
  title: string;
  welcome_text: string;
  terms: string;
  methods: PortalMethod[];
  /** "auto" (the guest's Accept-Language) or a fixed language code. */
  language: string;
  color_primary: string;
  color_background: string;
  /** The generic vendor: the query parameter carrying the gateway's login URL, and the form's field names. */
  generic_login_param: string;
  generic_username_field: string;
  generic_password_field: string;
  /** Empty: no field with the page to land on after login. */
  generic_redirect_field: string;
  /** Extra fields of the login form: `name=value&name=$gatewayParam`; empty for none. */
  generic_extra_fields: string;
  /**
   * Host names and CIDRs of the gateways guests may be handed to (the address in the link that
   * opens the page); empty: private, CGNAT, link-local and unique local addresses only.
   */
  allowed_gateways: string[];
  /** Seconds a click-through credential stays valid, and one click-through session's limit. */
  clickthrough_validity: number;
  clickthrough_session_timeout: number;
  /** Seconds a registered guest stays valid (the user's Expiration). */
  registration_validity: number;
  /** The group registered guests join; null: none (registration cannot be enabled). */
  guest_group_id: number | null;
  /** Remember a guest's device after a sign-in, for MAC authentication: never, ask, always. */
  remember_devices: RememberChoice;
  /** For how many days a device is remembered. */
  remember_days: number;
  /** Randomised (locally administered) MAC addresses: refuse to remember them, or allow it when the guest asks. */
  random_macs: RandomMacChoice;
  /** The account's identity providers the idp method offers, one button each (issue 26). */
  identity_providers: number[];
  created: string;
  updated: string;
}

/** What the guest pages need of a portal: its branding and hand-off, nothing else of its account. */
export interface GuestPortal {
  id: number;
  /** `${PUBLIC_URL}/portal/${id}`: the address gateways are configured with. */
  loginUrl: string;
  accountId: number;
  networkId: number;
  title: string;
  welcomeText: string;
  terms: string;
  methods: PortalMethod[];
  language: string;
  colorPrimary: string;
  colorBackground: string;
  successUrl: string;
  vendor: PortalVendor;
  /** In clear, for the hand-off's encoding; empty when none is set. */
  uamSecret: string;
  uamAuth: UamAuthMode;
  /** The gateways the link may name (core/portals/gateways.ts). */
  allowedGateways: GatewayAllowList;
  generic: {
    loginParam: string;
    usernameField: string;
    passwordField: string;
    redirectField: string;
    extraFields: ExtraField[];
  };
  clickthrough: { validity: number; sessionTimeout: number };
  registration: { validity: number; groupId: number | null };
  remember: { choice: RememberChoice; days: number; randomMacs: RandomMacChoice };
  /** How registered guests are verified (issue 27), with the SMS gateway's secret in clear. */
  verification: GuestVerification;
  /** Changes with the logo (the guest page's cache-busting version); undefined: no logo. */
  logoVersion?: string | undefined;
  /** Ids of the identity providers the idp method offers (core/idp checks each is on). */
  identityProviders: number[];
}

/** A portal's logo as the console shows it (no bytes). */
export interface PortalLogoInfo {
  content_type: string;
  width: number;
  height: number;
  bytes?: number;
  /** Changes with the image: the guest page's ETag and cache-busting version. */
  version: string;
  updated: string;
}

/** The bytes the guest page serves. */
export interface GuestLogo {
  contentType: string;
  data: Buffer;
  version: string;
}

export interface PortalListing extends CaptivePortal {
  account_id: number;
  account: string;
}

export interface PortalInput extends VerificationInput {
  name?: string | undefined;
  network_id?: number | undefined;
  success_url?: string | undefined;
  enabled?: boolean | undefined;
  vendor?: string | undefined;
  /** Write-only; empty removes it. */
  uam_secret?: string | undefined;
  uam_auth?: string | undefined;
  title?: string | undefined;
  welcome_text?: string | undefined;
  terms?: string | undefined;
  methods?: string[] | undefined;
  language?: string | undefined;
  color_primary?: string | undefined;
  color_background?: string | undefined;
  generic_login_param?: string | undefined;
  generic_username_field?: string | undefined;
  generic_password_field?: string | undefined;
  generic_redirect_field?: string | undefined;
  generic_extra_fields?: string | undefined;
  /** Entries as typed; [] restores the default (private ranges). */
  allowed_gateways?: string[] | undefined;
  clickthrough_validity?: number | undefined;
  clickthrough_session_timeout?: number | undefined;
  registration_validity?: number | undefined;
  /** null removes it. */
  guest_group_id?: number | null | undefined;
  remember_devices?: string | undefined;
  remember_days?: number | undefined;
  random_macs?: string | undefined;
  /** Ids of identity providers of the account; [] for none. */
  identity_providers?: number[] | undefined;
}

const MAX_ID = 2_147_483_647;
const TEXT_FIELDS = [
  ["title", MAX_TITLE, false],
  ["welcome_text", MAX_WELCOME, true],
  ["terms", MAX_TERMS, true],
] as const;
const NAME_FIELDS = ["generic_login_param", "generic_username_field", "generic_password_field"] as const;

function oneOf(values: readonly string[]): string {
  return `must be one of ${values.join(", ")}`;
}

/** Checks the page and hand-off fields; pushes a problem per bad field. */
function checkPage(input: PortalInput, clean: PortalInput, problems: FieldProblem[]): void {
  if (input.vendor !== undefined && !(PORTAL_VENDORS as readonly string[]).includes(input.vendor)) {
    problems.push({ field: "vendor", message: oneOf(PORTAL_VENDORS) });
  }
  if (input.uam_secret !== undefined && input.uam_secret !== "") {
    const bad = checkUamSecret(input.uam_secret);
    if (bad) problems.push({ field: "uam_secret", message: bad });
  }
  if (input.uam_auth !== undefined && !(UAM_AUTH_MODES as readonly string[]).includes(input.uam_auth)) {
    problems.push({ field: "uam_auth", message: oneOf(UAM_AUTH_MODES) });
  }
  if (input.generic_extra_fields !== undefined && parseExtraFields(input.generic_extra_fields) === null) {
    problems.push({ field: "generic_extra_fields", message: EXTRA_FIELDS_RULE });
  }
  if (input.allowed_gateways !== undefined) {
    try {
      clean.allowed_gateways = parseAllowedGateways(input.allowed_gateways);
    } catch (error) {
      problems.push({ field: "allowed_gateways", message: (error as Error).message });
    }
  }
  for (const [field, max, multiline] of TEXT_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    clean[field] = multiline ? value.replace(/\r\n?/g, "\n").trim() : value.trim();
    const bad = checkText(clean[field] ?? "", max, multiline);
    if (bad) problems.push({ field, message: bad });
  }
  if (input.methods !== undefined) {
    const methods = input.methods.map((m) => m.trim().toLowerCase()).filter((m) => m !== "");
    const unknown = methods.find((m) => !(PORTAL_METHODS as readonly string[]).includes(m));
    if (methods.length === 0 || unknown !== undefined) {
      problems.push({
        field: "methods",
        message: `must name at least one of ${PORTAL_METHODS.join(", ")}${unknown ? ` (not "${unknown}")` : ""}`,
      });
    }
    clean.methods = PORTAL_METHODS.filter((m) => methods.includes(m));
  }
  if (input.language !== undefined) {
    clean.language = input.language.trim().toLowerCase();
    const allowed = ["auto", ...PORTAL_LANGUAGES];
    if (!allowed.includes(clean.language)) problems.push({ field: "language", message: oneOf(allowed) });
  }
  for (const field of ["color_primary", "color_background"] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (!COLOR_PATTERN.test(value)) {
      problems.push({ field, message: "must be a hex colour like #1b5e9e" });
    } else clean[field] = value.toLowerCase();
  }
  for (const field of NAME_FIELDS) {
    const value = input[field];
    if (value !== undefined && !FIELD_NAME_PATTERN.test(value))
      problems.push({ field, message: FIELD_NAME_RULE });
  }
  for (const field of GUEST_SECONDS_FIELDS) {
    const value = input[field];
    const bad = value === undefined ? null : checkGuestSeconds(value);
    if (bad) problems.push({ field, message: bad });
  }
  const group = input.guest_group_id;
  if (group !== undefined && group !== null && (!Number.isInteger(group) || group < 1 || group > MAX_ID)) {
    problems.push({
      field: "guest_group_id",
      message: "must be a group id (a positive whole number) or null",
    });
  }
  checkRemember(input, problems);
  checkVerification(input, clean, problems);
  const providers = input.identity_providers;
  if (providers !== undefined) {
    clean.identity_providers = [...new Set(providers)];
    if (
      clean.identity_providers.length > 20 ||
      clean.identity_providers.some((p) => !Number.isInteger(p) || p < 1 || p > MAX_ID)
    )
      problems.push({ field: "identity_providers", message: "must be up to 20 identity provider ids" });
  }
  const redirect = input.generic_redirect_field;
  if (redirect !== undefined && redirect !== "" && !FIELD_NAME_PATTERN.test(redirect)) {
    problems.push({ field: "generic_redirect_field", message: `${FIELD_NAME_RULE}, or empty` });
  }
}

/** "Remember this device" (src/core/devices/rules.ts). */
function checkRemember(input: PortalInput, problems: FieldProblem[]): void {
  if (
    input.remember_devices !== undefined &&
    !(REMEMBER_CHOICES as readonly string[]).includes(input.remember_devices)
  ) {
    problems.push({ field: "remember_devices", message: oneOf(REMEMBER_CHOICES) });
  }
  const days = input.remember_days;
  if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > MAX_REMEMBER_DAYS)) {
    problems.push({
      field: "remember_days",
      message: `must be a whole number of days from 1 to ${MAX_REMEMBER_DAYS}`,
    });
  }
  if (
    input.random_macs !== undefined &&
    !(RANDOM_MAC_CHOICES as readonly string[]).includes(input.random_macs)
  ) {
    problems.push({ field: "random_macs", message: oneOf(RANDOM_MAC_CHOICES) });
  }
}

function check(input: PortalInput): PortalInput {
  const problems: FieldProblem[] = [];
  const clean = { ...input };
  if (input.name !== undefined) {
    clean.name = input.name.trim();
    if (clean.name.length < 1 || clean.name.length > MAX_PORTAL_NAME || hasControlCharacters(clean.name)) {
      problems.push({
        field: "name",
        message: `must be 1-${MAX_PORTAL_NAME} characters without control characters`,
      });
    }
  }
  const id = input.network_id;
  if (id !== undefined && (!Number.isInteger(id) || id < 1 || id > MAX_ID)) {
    problems.push({ field: "network_id", message: "must be a network id (a positive whole number)" });
  }
  const badUrl = input.success_url === undefined ? null : checkSuccessUrl(input.success_url);
  if (badUrl) problems.push({ field: "success_url", message: badUrl });
  checkPage(input, clean, problems);
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
  return clean;
}

/** The same answer whether the network is missing or another account's: ids do not leak. */
function noSuchNetwork(networkId: number): ValidationError {
  return ValidationError.field("network_id", `${networkId} is not a network of this account`);
}

function noSuchGroup(groupId: number): ValidationError {
  return ValidationError.field("guest_group_id", `${groupId} is not a group of this account`);
}

/** Registration puts guests in a group: it may only be on while the portal has one. */
async function checkGuestGroup(
  repo: PortalsRepo,
  accountId: number,
  methods: string,
  groupId: number | null,
  changed: boolean,
): Promise<void> {
  if (groupId !== null && changed && !(await repo.hasGroup(accountId, groupId))) throw noSuchGroup(groupId);
  if (groupId === null && methods.split(",").includes("registration")) {
    throw ValidationError.field("guest_group_id", "is required when methods include registration");
  }
}

/** The idp method offers the portal's providers: it needs one at least, each of the account. */
async function checkProviders(
  repo: PortalsRepo,
  accountId: number,
  methods: string,
  ids: number[],
  changed: boolean,
): Promise<void> {
  if (changed && !(await repo.hasProviders(accountId, ids)))
    throw ValidationError.field("identity_providers", "must name identity providers of this account");
  if (ids.length === 0 && methods.split(",").includes("idp"))
    throw ValidationError.field(
      "identity_providers",
      "must name at least one provider when methods include idp",
    );
}

function notFound(id: number): NotFoundError {
  return new NotFoundError(`captive portal ${id} not found`);
}

/** A vendor that needs a UAM secret has one once the change is applied. */
function secretProblem(vendor: string, hasSecret: boolean): ValidationError | null {
  if (!VENDORS_WITH_SECRET.includes(vendor as PortalVendor) || hasSecret) return null;
  return ValidationError.field("uam_secret", `is required when vendor is ${vendor}`);
}

/** Authenticated with the ciphertext, so a sealed secret copied to another portal does not open. */
function sealContext(accountId: number, id: number): string {
  return `captive portal uam secret ${accountId} ${id}`;
}

function smsSealContext(accountId: number, id: number): string {
  return `captive portal sms secret ${accountId} ${id}`;
}

/** The stored allow-list's entries (comma-separated, checked when written). */
function entriesOf(stored: string): string[] {
  return stored === "" ? [] : stored.split(",");
}

function methodsOf(stored: string): PortalMethod[] {
  return PORTAL_METHODS.filter((m) => stored.split(",").includes(m));
}

/** The stored columns of the page and hand-off fields given. */
function pageColumns(clean: PortalInput): PortalChanges {
  const changes: PortalChanges = {};
  if (clean.enabled !== undefined) changes.enabled = clean.enabled ? 1 : 0;
  if (clean.vendor !== undefined) changes.vendor = clean.vendor;
  if (clean.uam_auth !== undefined) changes.uam_auth = clean.uam_auth;
  if (clean.generic_extra_fields !== undefined) changes.generic_extra_fields = clean.generic_extra_fields;
  if (clean.allowed_gateways !== undefined) changes.allowed_gateways = clean.allowed_gateways.join(",");
  if (clean.title !== undefined) changes.title = clean.title;
  if (clean.welcome_text !== undefined) changes.welcome_text = clean.welcome_text;
  if (clean.terms !== undefined) changes.terms = clean.terms;
  if (clean.methods !== undefined) changes.methods = clean.methods.join(",");
  if (clean.language !== undefined) changes.language = clean.language;
  if (clean.color_primary !== undefined) changes.color_primary = clean.color_primary;
  if (clean.color_background !== undefined) changes.color_background = clean.color_background;
  if (clean.generic_login_param !== undefined) changes.generic_login_param = clean.generic_login_param;
  if (clean.generic_username_field !== undefined)
    changes.generic_username_field = clean.generic_username_field;
  if (clean.generic_password_field !== undefined)
    changes.generic_password_field = clean.generic_password_field;
  if (clean.generic_redirect_field !== undefined)
    changes.generic_redirect_field = clean.generic_redirect_field;
  for (const field of GUEST_SECONDS_FIELDS) {
    const value = clean[field];
    if (value !== undefined) changes[field] = value;
  }
  if (clean.guest_group_id !== undefined) changes.guest_group_id = clean.guest_group_id;
  if (clean.remember_devices !== undefined) changes.remember_devices = clean.remember_devices;
  if (clean.remember_days !== undefined) changes.remember_days = clean.remember_days;
  if (clean.random_macs !== undefined) changes.random_macs = clean.random_macs;
  if (clean.identity_providers !== undefined) changes.identity_providers = clean.identity_providers.join(",");
  return { ...changes, ...verificationColumns(clean) };
}

/**
 * How long a guest page trusts the portal it read (every page view and sign-in reads it): a change
 * made through another Wisp process shows within this time; this process's own changes at once.
 */
export const GUEST_CACHE_MS = 3_000;
const GUEST_CACHE_SIZE = 10_000;

export class PortalsService {
  /** Enabled portals as guest pages show them, by id (see GUEST_CACHE_MS). */
  private readonly guests = new Map<number, { portal: GuestPortal; until: number }>();

  /**
   * publicUrl: Wisp's address as guests reach it (PUBLIC_URL), the base of every login_url.
   * box: seals UAM secrets at rest with the webhook secrets' key.
   */
  constructor(
    private readonly repo: PortalsRepo,
    private readonly publicUrl: string,
    private readonly box: SecretBox,
  ) {}

  private present(row: PortalRow): CaptivePortal {
    return {
      id: row.id,
      name: row.name,
      network_id: row.network_id,
      login_url: `${this.publicUrl}/portal/${row.id}`,
      success_url: row.success_url,
      enabled: row.enabled === 1,
      vendor: row.vendor as PortalVendor,
      uam_secret_set: row.uam_secret !== "",
      uam_auth: row.uam_auth as UamAuthMode,
      title: row.title,
      welcome_text: row.welcome_text,
      terms: row.terms,
      methods: methodsOf(row.methods),
      language: row.language,
      color_primary: row.color_primary,
      color_background: row.color_background,
      generic_login_param: row.generic_login_param,
      generic_username_field: row.generic_username_field,
      generic_password_field: row.generic_password_field,
      generic_redirect_field: row.generic_redirect_field,
      generic_extra_fields: row.generic_extra_fields,
      allowed_gateways: entriesOf(row.allowed_gateways),
      clickthrough_validity: row.clickthrough_validity,
      clickthrough_session_timeout: row.clickthrough_session_timeout,
      registration_validity: row.registration_validity,
      guest_group_id: row.guest_group_id,
      remember_devices: row.remember_devices as RememberChoice,
      remember_days: row.remember_days,
      random_macs: row.random_macs as RandomMacChoice,
      identity_providers: entriesOf(row.identity_providers).map(Number),
      ...verificationSettings(row),
      created: row.created,
      updated: row.updated,
    };
  }

  /**
   * The portal a guest page shows, whichever account owns it; undefined when it does not exist or
   * is switched off (the page answers the same 404 either way).
   */
  async forGuests(id: number, now = Date.now()): Promise<GuestPortal | undefined> {
    if (!Number.isInteger(id) || id < 1 || id > MAX_ID) return undefined;
    const cached = this.guestFromCache(id, now);
    if (cached) return cached;
    const row = await this.repo.findForGuests(id);
    if (row?.enabled !== 1) {
      this.guests.delete(id);
      return undefined;
    }
    const portal = this.guestPortal(row);
    if (this.guests.size >= GUEST_CACHE_SIZE) this.guests.clear();
    this.guests.set(id, { portal, until: now + GUEST_CACHE_MS });
    return portal;
  }

  /** The guest view read within GUEST_CACHE_MS, without a promise; undefined when it must be read. */
  guestFromCache(id: number, now = Date.now()): GuestPortal | undefined {
    const cached = this.guests.get(id);
    return cached && cached.until > now ? cached.portal : undefined;
  }

  /** Forgets a portal's guest view after this process changed it (others see it within GUEST_CACHE_MS). */
  private changed(id: number): void {
    this.guests.delete(id);
  }

  private guestPortal(row: GuestPortalRow): GuestPortal {
    return {
      id: row.id,
      loginUrl: `${this.publicUrl}/portal/${row.id}`,
      accountId: row.account_id,
      networkId: row.network_id,
      title: row.title || row.name,
      welcomeText: row.welcome_text,
      terms: row.terms,
      methods: methodsOf(row.methods),
      language: row.language,
      colorPrimary: row.color_primary,
      colorBackground: row.color_background,
      successUrl: row.success_url,
      vendor: row.vendor as PortalVendor,
      uamSecret: row.uam_secret ? this.box.open(row.uam_secret, sealContext(row.account_id, row.id)) : "",
      uamAuth: row.uam_auth as UamAuthMode,
      allowedGateways: new GatewayAllowList(entriesOf(row.allowed_gateways)),
      generic: {
        loginParam: row.generic_login_param,
        usernameField: row.generic_username_field,
        passwordField: row.generic_password_field,
        redirectField: row.generic_redirect_field,
        // Checked when written; a row changed behind Wisp's back sends no extra fields.
        extraFields: parseExtraFields(row.generic_extra_fields) ?? [],
      },
      clickthrough: { validity: row.clickthrough_validity, sessionTimeout: row.clickthrough_session_timeout },
      registration: { validity: row.registration_validity, groupId: row.guest_group_id },
      remember: {
        choice: row.remember_devices as RememberChoice,
        days: row.remember_days,
        randomMacs: row.random_macs as RandomMacChoice,
      },
      verification: guestVerification(
        row,
        row.sms_secret ? this.box.open(row.sms_secret, smsSealContext(row.account_id, row.id)) : "",
      ),
      logoVersion: row.logo_sha256?.slice(0, 16),
      identityProviders: entriesOf(row.identity_providers).map(Number),
    };
  }

  /** The name of the portal's guest group, if it still has one of its account. */
  async guestGroupName(portal: GuestPortal): Promise<string | undefined> {
    const id = portal.registration.groupId;
    return id === null ? undefined : this.repo.groupName(portal.accountId, id);
  }

  /**
   * Remembers a sign-in handed to the gateway for PENDING_LOGIN_SECONDS, so that the RADIUS
   * Access-Accept that follows (same account, username and device) is recorded with the portal and
   * method (src/core/aaa/recording.ts). In the database: any instance may answer the RADIUS request.
   */
  async expectLogin(
    portal: GuestPortal,
    method: PortalMethod,
    username: string,
    clientMac: string | null,
    now = Math.floor(Date.now() / 1000),
    /** The identity provider of an idp sign-in: its user.authenticated event names it. */
    providerId: number | null = null,
  ): Promise<void> {
    await this.repo.addPendingLogin(
      {
        account_id: portal.accountId,
        portal_id: portal.id,
        method,
        username,
        client_mac: clientMac,
        expires: now + PENDING_LOGIN_SECONDS,
        ...(providerId === null ? {} : { provider_id: providerId }),
      },
      now,
    );
  }

  private listing(row: PortalListRow): PortalListing {
    return { ...this.present(row), account_id: row.account_id, account: row.account_name };
  }

  /** `sort`: a field of PORTAL_SORT_FIELDS, "-" first for descending; by id by default. */
  async list(
    accountId: number,
    filter: PortalFilter,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<CaptivePortal>> {
    const order = parseSort(sort, PORTAL_SORT_FIELDS);
    const { rows, total } = await this.repo.list(accountId, filter, page, order);
    return { data: rows.map((row) => this.present(row)), page: page.page, total, limit: page.limit };
  }

  async get(accountId: number, id: number): Promise<CaptivePortal> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw notFound(id);
    return this.present(row);
  }

  /** Operators' listing (CLI): all accounts or one, optionally one network's portals. */
  async listAll(accountId?: number, networkId?: number): Promise<PortalListing[]> {
    return (await this.repo.listWithAccounts({ accountId, networkId })).map((row) => this.listing(row));
  }

  /**
   * Portal `id` in whichever account owns it, for operators' doors (CLI) that address portals by
   * id alone. When the operator also named an account, the portal must belong to it.
   */
  async locate(id: number, accountId?: number): Promise<PortalListing> {
    const row = (await this.repo.listWithAccounts({ id }))[0];
    if (!row) throw notFound(id);
    if (accountId !== undefined && row.account_id !== accountId) {
      throw new NotFoundError(`captive portal ${id} belongs to another account`);
    }
    return this.listing(row);
  }

  /** Validates a new portal without writing, so a door can refuse before it writes anything else. */
  validateNew(input: PortalInput): PortalInput {
    if (input.name === undefined) throw ValidationError.field("name", "is required");
    if (input.network_id === undefined) throw ValidationError.field("network_id", "is required");
    const clean = check(input);
    const missing = secretProblem(clean.vendor ?? "generic", Boolean(clean.uam_secret));
    if (missing) throw missing;
    return clean;
  }

  async create(accountId: number, input: PortalInput): Promise<CaptivePortal> {
    const clean = this.validateNew(input);
    const networkId = clean.network_id ?? 0;
    const now = isoNow();
    try {
      return await this.repo.transaction(async (repo) => {
        if (!(await repo.hasNetwork(accountId, networkId))) throw noSuchNetwork(networkId);
        const group = clean.guest_group_id ?? null;
        await checkGuestGroup(repo, accountId, clean.methods?.join(",") ?? "voucher", group, true);
        const methods = clean.methods?.join(",") ?? "voucher";
        await checkProviders(repo, accountId, methods, clean.identity_providers ?? [], true);
        let row = await repo.insert({
          account_id: accountId,
          network_id: networkId,
          name: clean.name ?? "",
          success_url: clean.success_url ?? "",
          created: now,
          updated: now,
          ...pageColumns(clean),
        });
        if (clean.uam_secret) {
          const uam_secret = this.box.seal(clean.uam_secret, sealContext(accountId, row.id));
          row = (await repo.update(accountId, row.id, { uam_secret })) ?? row;
        }
        if (clean.sms_secret) {
          const sms_secret = this.box.seal(clean.sms_secret, smsSealContext(accountId, row.id));
          row = (await repo.update(accountId, row.id, { sms_secret })) ?? row;
        }
        checkCombination(row);
        await repo.audit({ accountId, resource: "portal", id: row.id, action: "create", after: row });
        return this.present(row);
      });
    } catch (error) {
      if (isMissingReference(error)) throw noSuchNetwork(networkId);
      throw error;
    }
  }

  /** Partial update: only the fields given change. A portal may move to another network of its account. */
  async update(accountId: number, id: number, input: PortalInput): Promise<CaptivePortal> {
    const clean = check(input);
    const networkId = clean.network_id;
    try {
      return await this.repo.transaction(async (repo) => {
        const before = await repo.findById(accountId, id);
        if (!before) throw notFound(id);
        const hasSecret = clean.uam_secret === undefined ? before.uam_secret !== "" : clean.uam_secret !== "";
        const missing = secretProblem(clean.vendor ?? before.vendor, hasSecret);
        if (missing) throw missing;
        await checkGuestGroup(
          repo,
          accountId,
          clean.methods?.join(",") ?? before.methods,
          clean.guest_group_id === undefined ? before.guest_group_id : clean.guest_group_id,
          clean.guest_group_id !== undefined,
        );
        await checkProviders(
          repo,
          accountId,
          clean.methods?.join(",") ?? before.methods,
          clean.identity_providers ?? entriesOf(before.identity_providers).map(Number),
          clean.identity_providers !== undefined,
        );
        const changes: PortalChanges = { ...pageColumns(clean), updated: isoNow() };
        if (clean.uam_secret !== undefined) {
          changes.uam_secret =
            clean.uam_secret && this.box.seal(clean.uam_secret, sealContext(accountId, id));
        }
        if (clean.sms_secret !== undefined) {
          changes.sms_secret =
            clean.sms_secret && this.box.seal(clean.sms_secret, smsSealContext(accountId, id));
        }
        if (clean.name !== undefined) changes.name = clean.name;
        if (clean.success_url !== undefined) changes.success_url = clean.success_url;
        if (networkId !== undefined) {
          if (!(await repo.hasNetwork(accountId, networkId))) throw noSuchNetwork(networkId);
          changes.network_id = networkId;
        }
        const row = await repo.update(accountId, id, changes);
        if (!row) throw notFound(id);
        checkCombination(row);
        await repo.audit({ accountId, resource: "portal", id, action: "update", before, after: row });
        return this.present(row);
      });
    } catch (error) {
      if (isMissingReference(error) && networkId !== undefined) throw noSuchNetwork(networkId);
      throw error;
    } finally {
      this.changed(id);
    }
  }

  async delete(accountId: number, id: number): Promise<CaptivePortal> {
    const deleted = await this.repo.transaction(async (repo) => {
      const row = await repo.findById(accountId, id);
      if (!row || !(await repo.delete(accountId, id))) throw notFound(id);
      await repo.audit({ accountId, resource: "portal", id, action: "delete", before: row });
      return this.present(row);
    });
    this.changed(id);
    return deleted;
  }

  /** The portal's logo, or null for none; NotFound when the portal is not this account's. */
  async logo(accountId: number, id: number): Promise<PortalLogoInfo | null> {
    await this.get(accountId, id);
    const meta = await this.repo.findLogoMeta(id);
    if (!meta) return null;
    return {
      content_type: meta.content_type,
      width: meta.width,
      height: meta.height,
      version: meta.sha256.slice(0, 16),
      updated: meta.updated,
    };
  }

  /**
   * Stores a PNG, JPEG or WebP as the portal's logo, replacing any; the type comes from the bytes
   * (logo.ts), whatever name or type the upload claimed. A field error "logo" otherwise.
   */
  async setLogo(accountId: number, id: number, data: Buffer): Promise<PortalLogoInfo> {
    const image = checkLogo(data);
    if (typeof image === "string") throw ValidationError.field("logo", image);
    const sha256 = createHash("sha256").update(data).digest("hex");
    const updated = isoNow();
    await this.repo.transaction(async (repo) => {
      if (!(await repo.findById(accountId, id))) throw notFound(id);
      await repo.putLogo({
        portal_id: id,
        account_id: accountId,
        content_type: image.type,
        data,
        sha256,
        width: image.width,
        height: image.height,
        updated,
      });
      const after = { content_type: image.type, width: image.width, height: image.height, sha256 };
      await repo.audit({ accountId, resource: "portal_logo", id, action: "update", after });
    });
    this.changed(id);
    return {
      content_type: image.type,
      width: image.width,
      height: image.height,
      bytes: data.length,
      version: sha256.slice(0, 16),
      updated,
    };
  }

  /** Removes the logo; true when there was one. */
  async removeLogo(accountId: number, id: number): Promise<boolean> {
    await this.get(accountId, id);
    const removed = await this.repo.transaction(async (repo) => {
      const gone = await repo.deleteLogo(accountId, id);
      if (gone) await repo.audit({ accountId, resource: "portal_logo", id, action: "delete" });
      return gone;
    });
    this.changed(id);
    return removed;
  }

  /** The logo of a portal guests can see (enabled); undefined otherwise. */
  async guestLogo(id: number): Promise<GuestLogo | undefined> {
    if (!(await this.forGuests(id))) return undefined;
    const row = await this.repo.findLogo(id);
    if (!row) return undefined;
    return { contentType: row.content_type, data: Buffer.from(row.data), version: row.sha256.slice(0, 16) };
  }

  /** The logo's bytes for the console (this account's portal, enabled or not); undefined for none. */
  async logoFile(accountId: number, id: number): Promise<GuestLogo | undefined> {
    await this.get(accountId, id);
    const row = await this.repo.findLogo(id);
    if (!row) return undefined;
    return { contentType: row.content_type, data: Buffer.from(row.data), version: row.sha256.slice(0, 16) };
  }
}

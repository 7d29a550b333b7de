// Captive portals: list, create, edit, delete (after a confirmation page). A portal belongs to a
// network of the same account; its login URL is derived from PUBLIC_URL by the service.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  DEFAULT_SPONSOR_DURATIONS,
  EMAIL_VERIFICATION,
  GUEST_LIMIT_FIELDS,
  GUEST_LIMITS,
  type GuestLimitField,
  SMS_METHODS,
  SMS_PROVIDERS,
} from "../../core/guests/rules.ts";
import { GatewayAllowList } from "../../core/portals/gateways.ts";
import { MAX_LOGO_BYTES } from "../../core/portals/logo.ts";
import {
  COLOR_PATTERN,
  MAX_TERMS,
  MAX_TITLE,
  MAX_WELCOME,
  PORTAL_DEFAULTS,
  PORTAL_LANGUAGES,
  PORTAL_METHODS,
  PORTAL_VENDORS,
  VENDORS_WITH_SECRET,
} from "../../core/portals/rules.ts";
import type { CaptivePortal, GuestPortal, PortalInput } from "../../core/portals/service.ts";
import type { GuestVerification, VerificationInput } from "../../core/portals/verification.ts";
import { chooseLanguage } from "../../portal/i18n.ts";
import { ASSETS } from "../../portal/plugin.ts";
import { signInPage } from "../../portal/views.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf, positiveId } from "../forms.ts";
import { MultipartForm, registerMultipartParser } from "../multipart.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam, PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

export interface PortalFormValues {
  name: string;
  network_id: string;
  success_url: string;
  enabled: boolean;
  vendor: string;
  uam_auth: string;
  title: string;
  welcome_text: string;
  terms: string;
  methods: string[];
  language: string;
  color_primary: string;
  color_background: string;
  generic_login_param: string;
  generic_username_field: string;
  generic_password_field: string;
  generic_redirect_field: string;
  generic_extra_fields: string;
  /** As typed: entries separated by commas, spaces or new lines. */
  allowed_gateways: string;
  clickthrough_validity: string;
  clickthrough_session_timeout: string;
  registration_validity: string;
  guest_group_id: string;
  /** idp method: the ids of the providers offered, as the checkboxes send them. */
  identity_providers: string[];
  remember_devices: string;
  remember_days: string;
  random_macs: string;
  /** Verified guests (issue 27): numbers and lists as typed. */
  email_verification: string;
  sms_verification: boolean;
  sponsor_required: boolean;
  preverify: boolean;
  limits: Record<GuestLimitField, string>;
  sms_countries: string;
  sms_provider: string;
  sms_url: string;
  sms_method: string;
  sms_template: string;
  sms_username: string;
  sms_from: string;
  sms_auth_header: string;
  sponsor_domains: string;
  sponsor_emails: string;
  sponsor_durations: string;
}

const limitDefaults = () =>
  Object.fromEntries(GUEST_LIMIT_FIELDS.map((f) => [f, String(GUEST_LIMITS[f][2])])) as Record<
    GuestLimitField,
    string
  >;

/** The verification fields of a new portal (migration 027's defaults). */
function verificationDefaults() {
  return {
    email_verification: "off",
    sms_verification: false,
    sponsor_required: false,
    preverify: false,
    limits: limitDefaults(),
    sms_countries: "",
    sms_provider: "twilio",
    sms_url: "",
    sms_method: "POST",
    sms_template: "",
    sms_username: "",
    sms_from: "",
    sms_auth_header: "Authorization",
    sponsor_domains: "",
    sponsor_emails: "",
    sponsor_durations: DEFAULT_SPONSOR_DURATIONS.join(", "),
  };
}

/** Networks offered in a portal's network list. */
const NETWORK_CHOICES = 1000;

/** What the form shows for a new portal: the model's defaults (migration 014). */
function defaults(networkId: string): PortalFormValues {
  return {
    name: "",
    network_id: networkId,
    success_url: "",
    enabled: true,
    vendor: PORTAL_DEFAULTS.vendor,
    uam_auth: PORTAL_DEFAULTS.uam_auth,
    title: "",
    welcome_text: "",
    terms: "",
    methods: [...PORTAL_DEFAULTS.methods],
    language: PORTAL_DEFAULTS.language,
    color_primary: PORTAL_DEFAULTS.color_primary,
    color_background: PORTAL_DEFAULTS.color_background,
    generic_login_param: PORTAL_DEFAULTS.generic_login_param,
    generic_username_field: PORTAL_DEFAULTS.generic_username_field,
    generic_password_field: PORTAL_DEFAULTS.generic_password_field,
    generic_redirect_field: "",
    generic_extra_fields: "",
    allowed_gateways: "",
    clickthrough_validity: String(PORTAL_DEFAULTS.clickthrough_validity),
    clickthrough_session_timeout: String(PORTAL_DEFAULTS.clickthrough_session_timeout),
    registration_validity: String(PORTAL_DEFAULTS.registration_validity),
    guest_group_id: "",
    identity_providers: [],
    remember_devices: "never",
    remember_days: "30",
    random_macs: "refuse",
    ...verificationDefaults(),
  };
}

function valuesOf(portal: CaptivePortal): PortalFormValues {
  return {
    name: portal.name,
    network_id: String(portal.network_id),
    success_url: portal.success_url,
    enabled: portal.enabled,
    vendor: portal.vendor,
    uam_auth: portal.uam_auth,
    title: portal.title,
    welcome_text: portal.welcome_text,
    terms: portal.terms,
    methods: [...portal.methods],
    language: portal.language,
    color_primary: portal.color_primary,
    color_background: portal.color_background,
    generic_login_param: portal.generic_login_param,
    generic_username_field: portal.generic_username_field,
    generic_password_field: portal.generic_password_field,
    generic_redirect_field: portal.generic_redirect_field,
    generic_extra_fields: portal.generic_extra_fields,
    allowed_gateways: portal.allowed_gateways.join("\n"),
    clickthrough_validity: String(portal.clickthrough_validity),
    clickthrough_session_timeout: String(portal.clickthrough_session_timeout),
    registration_validity: String(portal.registration_validity),
    guest_group_id: portal.guest_group_id === null ? "" : String(portal.guest_group_id),
    identity_providers: portal.identity_providers.map(String),
    remember_devices: portal.remember_devices,
    remember_days: String(portal.remember_days),
    random_macs: portal.random_macs,
    email_verification: portal.email_verification,
    sms_verification: portal.sms_verification,
    sponsor_required: portal.sponsor_required,
    preverify: portal.preverify,
    limits: Object.fromEntries(GUEST_LIMIT_FIELDS.map((f) => [f, String(portal[f])])) as Record<
      GuestLimitField,
      string
    >,
    sms_countries: portal.sms_countries.join(", "),
    sms_provider: portal.sms_provider,
    sms_url: portal.sms_url,
    sms_method: portal.sms_method,
    sms_template: portal.sms_template,
    sms_username: portal.sms_username,
    sms_from: portal.sms_from,
    sms_auth_header: portal.sms_auth_header,
    sponsor_domains: portal.sponsor_domains.join("\n"),
    sponsor_emails: portal.sponsor_emails.join("\n"),
    sponsor_durations: portal.sponsor_durations.join(", "),
  };
}

function readForm(form: Form): PortalFormValues {
  return {
    name: form.text("name"),
    network_id: form.text("network_id"),
    success_url: form.text("success_url"),
    enabled: form.checked("enabled"),
    vendor: form.text("vendor"),
    uam_auth: form.text("uam_auth"),
    title: form.text("title"),
    welcome_text: form.raw("welcome_text"),
    terms: form.raw("terms"),
    methods: form.all("methods"),
    language: form.text("language"),
    color_primary: form.text("color_primary"),
    color_background: form.text("color_background"),
    generic_login_param: form.text("generic_login_param"),
    generic_username_field: form.text("generic_username_field"),
    generic_password_field: form.text("generic_password_field"),
    generic_redirect_field: form.text("generic_redirect_field"),
    generic_extra_fields: form.text("generic_extra_fields"),
    allowed_gateways: form.raw("allowed_gateways"),
    clickthrough_validity: form.text("clickthrough_validity"),
    clickthrough_session_timeout: form.text("clickthrough_session_timeout"),
    registration_validity: form.text("registration_validity"),
    guest_group_id: form.text("guest_group_id"),
    identity_providers: form.all("identity_providers"),
    remember_devices: form.text("remember_devices"),
    remember_days: form.text("remember_days"),
    random_macs: form.text("random_macs"),
    email_verification: form.text("email_verification"),
    sms_verification: form.checked("sms_verification"),
    sponsor_required: form.checked("sponsor_required"),
    preverify: form.checked("preverify"),
    limits: Object.fromEntries(GUEST_LIMIT_FIELDS.map((f) => [f, form.text(f)])) as Record<
      GuestLimitField,
      string
    >,
    sms_countries: form.raw("sms_countries"),
    sms_provider: form.text("sms_provider"),
    sms_url: form.text("sms_url"),
    sms_method: form.text("sms_method"),
    sms_template: form.raw("sms_template"),
    sms_username: form.text("sms_username"),
    sms_from: form.text("sms_from"),
    sms_auth_header: form.text("sms_auth_header"),
    sponsor_domains: form.raw("sponsor_domains"),
    sponsor_emails: form.raw("sponsor_emails"),
    sponsor_durations: form.raw("sponsor_durations"),
  };
}

const listOf = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/**
 * The verification fields as the service takes them. A form without the fields (an older page)
 * sends no email_verification: then none of them is changed.
 */
function verificationInput(values: PortalFormValues, form: Form): VerificationInput {
  if (values.email_verification === "") return {};
  const secret = form.raw("sms_secret");
  return {
    email_verification: values.email_verification,
    sms_verification: values.sms_verification,
    sponsor_required: values.sponsor_required,
    preverify: values.preverify,
    ...Object.fromEntries(GUEST_LIMIT_FIELDS.map((f) => [f, seconds(values.limits[f])])),
    sms_countries: listOf(values.sms_countries),
    sms_provider: values.sms_provider,
    sms_url: values.sms_url,
    sms_method: values.sms_method,
    sms_template: values.sms_template,
    sms_username: values.sms_username,
    sms_from: values.sms_from,
    sms_auth_header: values.sms_auth_header,
    ...(form.checked("sms_secret_remove") ? { sms_secret: "" } : secret !== "" ? { sms_secret: secret } : {}),
    sponsor_domains: listOf(values.sponsor_domains),
    sponsor_emails: listOf(values.sponsor_emails),
    sponsor_durations: listOf(values.sponsor_durations).map(seconds),
  };
}

/** A whole number of seconds as typed; anything else reaches the service as NaN, which it refuses. */
const seconds = (text: string) => (/^\d{1,9}$/.test(text) ? Number(text) : Number.NaN);

/**
 * The service's input. The UAM secret is write-only: a blank field keeps the stored one, "remove"
 * clears it; it is never put back into the page.
 */
function inputOf(values: PortalFormValues, form: Form): PortalInput {
  const secret = form.raw("uam_secret");
  return {
    name: values.name,
    network_id: values.network_id === "" ? undefined : (positiveId(values.network_id) ?? Number.NaN),
    success_url: values.success_url,
    enabled: values.enabled,
    vendor: values.vendor,
    // A form without the field (older page, no CoovaChilli section) keeps the stored mode.
    ...(values.uam_auth === "" ? {} : { uam_auth: values.uam_auth }),
    ...(form.checked("uam_secret_remove") ? { uam_secret: "" } : secret !== "" ? { uam_secret: secret } : {}),
    title: values.title,
    welcome_text: values.welcome_text,
    terms: values.terms,
    methods: values.methods,
    language: values.language,
    color_primary: values.color_primary,
    color_background: values.color_background,
    generic_login_param: values.generic_login_param,
    generic_username_field: values.generic_username_field,
    generic_password_field: values.generic_password_field,
    generic_redirect_field: values.generic_redirect_field,
    generic_extra_fields: values.generic_extra_fields,
    allowed_gateways: values.allowed_gateways.split(/[\s,]+/).filter(Boolean),
    clickthrough_validity: seconds(values.clickthrough_validity),
    clickthrough_session_timeout: seconds(values.clickthrough_session_timeout),
    registration_validity: seconds(values.registration_validity),
    guest_group_id: values.guest_group_id === "" ? null : (positiveId(values.guest_group_id) ?? Number.NaN),
    identity_providers: values.identity_providers.map((id) => positiveId(id) ?? Number.NaN),
    // A form without these fields (an older page) keeps the stored choices.
    ...(values.remember_devices === "" ? {} : { remember_devices: values.remember_devices }),
    ...(values.remember_days === "" ? {} : { remember_days: seconds(values.remember_days) }),
    ...(values.random_macs === "" ? {} : { random_macs: values.random_macs }),
    ...verificationInput(values, form),
  };
}

/**
 * The guest page as these values would show it, saved or not: the portal door's own view, so every
 * value is escaped as on the real page. Nothing is saved; a value the service would refuse shows
 * as the default until it is fixed (the form says what is wrong when it is saved).
 */
function previewPage(request: FastifyRequest, values: PortalFormValues, logo?: string): string {
  const fallback = defaults("");
  const color = (value: string, otherwise: string) =>
    COLOR_PATTERN.test(value) ? value.toLowerCase() : otherwise;
  const text = (value: string, max: number) => value.replace(/\r\n?/g, "\n").trim().slice(0, max);
  const methods = PORTAL_METHODS.filter((m) => values.methods.includes(m));
  const portal: GuestPortal = {
    id: 0,
    loginUrl: "",
    accountId: 0,
    networkId: 0,
    title: text(values.title, MAX_TITLE) || text(values.name, MAX_TITLE) || "Guest Wi-Fi",
    welcomeText: text(values.welcome_text, MAX_WELCOME),
    terms: text(values.terms, MAX_TERMS),
    methods: methods.length > 0 ? methods : ["voucher"],
    language: values.language,
    colorPrimary: color(values.color_primary, fallback.color_primary),
    colorBackground: color(values.color_background, fallback.color_background),
    successUrl: "",
    vendor: "generic",
    uamSecret: "",
    uamAuth: "chap",
    allowedGateways: new GatewayAllowList([]),
    generic: { loginParam: "", usernameField: "", passwordField: "", redirectField: "", extraFields: [] },
    // The preview renders the forms only; these apply at sign-in.
    clickthrough: { validity: 0, sessionTimeout: 0 },
    registration: { validity: 0, groupId: null },
    remember: {
      choice: (["never", "ask", "always"] as const).find((c) => c === values.remember_devices) ?? "never",
      days: seconds(values.remember_days) || 30,
      randomMacs: values.random_macs === "allow" ? "allow" : "refuse",
    },
    verification: {
      email:
        values.email_verification === "code" || values.email_verification === "link"
          ? values.email_verification
          : "off",
      sms: values.sms_verification,
      sponsor: values.sponsor_required,
      preverify: false,
      limits: Object.fromEntries(
        GUEST_LIMIT_FIELDS.map((f) => [f, GUEST_LIMITS[f][2]]),
      ) as GuestVerification["limits"],
      smsCountries: [],
      smsGateway: {
        provider: "generic",
        url: "",
        method: "POST",
        template: "",
        username: "",
        from: "",
        authHeader: "",
        secret: "",
      },
      sponsorDomains: [],
      sponsorEmails: [],
      sponsorDurations: [],
    },
    identityProviders: [],
  };
  return signInPage({
    portal,
    lang: chooseLanguage(undefined, values.language, request.headers["accept-language"]),
    assets: ASSETS,
    action: "#",
    csrf: "",
    gateway: "",
    switchTo: () => "#",
    logo,
  });
}

export async function portalRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "portals" };

  async function formPage(
    request: FastifyRequest,
    reply: FastifyReply,
    portal: CaptivePortal | null,
    values: PortalFormValues,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const { accountId } = sessionOf(request);
    const [networks, groups, providers] = await Promise.all([
      core.networks.list(accountId, {}, { page: 1, limit: NETWORK_CHOICES }),
      core.groups.list(accountId, undefined, { page: 1, limit: NETWORK_CHOICES }),
      core.idp.list(accountId),
    ]);
    const title = portal ? `Edit ${portal.name}` : "New captive portal";
    const logo = portal ? await core.portals.logo(accountId, portal.id) : null;
    return show(
      request,
      reply,
      "portal-form",
      { title, ...section, status },
      {
        portal,
        values,
        errors,
        networks: networks.data,
        groups: groups.data,
        providers,
        vendors: PORTAL_VENDORS,
        vendorsWithSecret: VENDORS_WITH_SECRET,
        methods: PORTAL_METHODS,
        languages: ["auto", ...PORTAL_LANGUAGES],
        emailModes: EMAIL_VERIFICATION,
        smsProviders: SMS_PROVIDERS,
        smsMethods: SMS_METHODS,
        limitFields: GUEST_LIMIT_FIELDS.map((f) => ({
          name: f,
          min: GUEST_LIMITS[f][0],
          max: GUEST_LIMITS[f][1],
        })),
        logo,
        maxLogoKb: MAX_LOGO_BYTES / 1024,
      },
    );
  }

  app.get("/portals", need("captiveportals:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const search = queryText(request, "search");
    const [page, networks] = await Promise.all([
      core.portals.list(
        accountId,
        { search: search || undefined },
        { page: pageNumber(queryText(request, "page")), limit: PAGE_SIZE },
      ),
      core.networks.list(accountId, {}, { page: 1, limit: NETWORK_CHOICES }),
    ]);
    const networkNames = Object.fromEntries(networks.data.map((n) => [n.id, n.name]));
    const pager = pagerOf(page, "/console/portals", { search });
    return show(
      request,
      reply,
      "portals",
      { title: "Captive portals", ...section },
      { portals: page.data, networkNames, pager, search, hasNetworks: networks.total > 0 },
    );
  });

  app.get("/portals/new", need("captiveportals:write"), (request, reply) =>
    formPage(request, reply, null, defaults(queryText(request, "network"))),
  );

  app.post("/portals", need("captiveportals:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const form = formOf(request);
    const values = readForm(form);
    const result = await attempt(() => core.portals.create(accountId, inputOf(values, form)));
    if ("errors" in result) return formPage(request, reply, null, values, result.errors, 400);
    return reply.redirect("/console/portals?notice=portal-created", 303);
  });

  app.get("/portals/:id/edit", need("captiveportals:read"), async (request, reply) => {
    const portal = await core.portals.get(sessionOf(request).accountId, idParam(request));
    return formPage(request, reply, portal, valuesOf(portal));
  });

  app.post("/portals/:id", need("captiveportals:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const portal = await core.portals.get(accountId, idParam(request));
    const form = formOf(request);
    const values = readForm(form);
    const result = await attempt(() => core.portals.update(accountId, portal.id, inputOf(values, form)));
    if ("errors" in result) return formPage(request, reply, portal, values, result.errors, 400);
    return reply.redirect("/console/portals?notice=portal-updated", 303);
  });

  // The logo: its own form (multipart/form-data, parsed in this context only; the console's CSRF
  // check reads the multipart form's _csrf like any other form's).
  await app.register(async (uploads) => {
    registerMultipartParser(uploads);
    uploads.post("/portals/:id/logo", need("captiveportals:write"), async (request, reply) => {
      const { accountId } = sessionOf(request);
      const portal = await core.portals.get(accountId, idParam(request));
      const file = request.body instanceof MultipartForm ? request.body.files.get("logo") : undefined;
      const result = file
        ? await attempt(() => core.portals.setLogo(accountId, portal.id, file.data))
        : { errors: { logo: "must be a file (none was chosen)" } };
      if ("errors" in result) return formPage(request, reply, portal, valuesOf(portal), result.errors, 400);
      return reply.redirect(`/console/portals/${portal.id}/edit?notice=logo-uploaded`, 303);
    });
  });

  app.post("/portals/:id/logo/delete", need("captiveportals:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    await core.portals.removeLogo(accountId, id);
    return reply.redirect(`/console/portals/${id}/edit?notice=logo-removed`, 303);
  });

  // The logo as the console shows it (any portal of the account, enabled or not).
  app.get("/portals/:id/logo", need("captiveportals:read"), async (request, reply) => {
    const logo = await core.portals.logoFile(sessionOf(request).accountId, idParam(request));
    if (!logo) return reply.callNotFound();
    return reply
      .header("Cache-Control", "private, no-cache")
      .header("ETag", `"${logo.version}"`)
      .type(logo.contentType)
      .send(logo.data);
  });

  // The live preview, shown in a sandboxed iframe of the form page: the stored portal (GET), or the
  // form's unsaved values (POST, CSRF-checked like every console form; nothing is written).
  const framed = { config: { consoleFramed: true, consolePermission: "captiveportals:read" as const } };
  const sendPreview = (reply: FastifyReply, body: string) =>
    reply.type("text/html; charset=utf-8").header("Cache-Control", "no-store").send(body);
  const logoUrl = async (accountId: number, id: number) => {
    const logo = await core.portals.logo(accountId, id);
    return logo ? `/console/portals/${id}/logo?v=${logo.version}` : undefined;
  };

  app.get("/portals/:id/preview", framed, async (request, reply) => {
    const { accountId } = sessionOf(request);
    const portal = await core.portals.get(accountId, idParam(request));
    return sendPreview(reply, previewPage(request, valuesOf(portal), await logoUrl(accountId, portal.id)));
  });

  app.post("/portals/:id/preview", framed, async (request, reply) => {
    const { accountId } = sessionOf(request);
    const portal = await core.portals.get(accountId, idParam(request));
    const values = readForm(formOf(request));
    return sendPreview(reply, previewPage(request, values, await logoUrl(accountId, portal.id)));
  });

  app.post("/portals/preview", framed, async (request, reply) =>
    sendPreview(reply, previewPage(request, readForm(formOf(request)))),
  );

  app.get("/portals/:id/delete", need("captiveportals:write"), async (request, reply) => {
    const portal = await core.portals.get(sessionOf(request).accountId, idParam(request));
    return show(request, reply, "portal-delete", { title: `Delete ${portal.name}`, ...section }, { portal });
  });

  app.post("/portals/:id/delete", need("captiveportals:write"), async (request, reply) => {
    await core.portals.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/portals?notice=portal-deleted", 303);
  });
}

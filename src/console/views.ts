// Server-rendered pages: Eta templates from ./views, every interpolation HTML-escaped, wrapped in
// the layout with what every page shows (who is logged in, navigation, the CSRF token, notices).
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Eta, type TemplateFunction } from "eta";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FieldProblem } from "../core/shared/errors.ts";
import { readShippedFile, shippedFileError } from "../core/shared/shipped-files.ts";
import { helpers } from "./format.ts";

const VIEWS = fileURLToPath(new URL("./views", import.meta.url));
const PUBLIC = fileURLToPath(new URL("./public", import.meta.url));

/** Texts a redirect may ask a page to show (?notice=...): fixed words, never text from the URL. */
const NOTICES: Record<string, string> = {
  "logged-out": "You have logged out.",
  "setup-done": "The console is set up. Log in with the email and password you just chose.",
  "key-revoked": "The API key was revoked. Requests with it are refused from now on.",
  "key-shown":
    "A new API key is shown only once, right after it is made. If it was lost, generate a new key " +
    "and revoke the one you cannot use.",
  "network-secret-shown":
    "The shared secret is shown only once, right after it is made. If it was lost, rotate it to " +
    "get a new one.",
  "network-updated": "The network was saved.",
  "network-deleted": "The network was deleted, with its captive portals.",
  "radsec-revoked": "The RadSec certificate was revoked: the listener refuses it from the next handshake.",
  "radsec-ca-saved": "The RadSec CA and its match rule were saved.",
  "radsec-ca-removed": "The RadSec CA was removed: its certificates are refused from the next handshake.",
  "portal-created": "The captive portal was created.",
  "portal-updated": "The captive portal was saved.",
  "logo-uploaded": "The logo was uploaded.",
  "logo-removed": "The logo was removed.",
  "portal-deleted": "The captive portal was deleted.",
  "user-created": "The user was created.",
  "device-created": "The device was added.",
  "policy-created": "The policy was added.",
  "policy-updated": "The policy was saved.",
  "policy-deleted": "The policy was deleted.",
  "plan-created": "The plan was created.",
  "plan-updated": "The plan was saved; open sessions on it get the new figures.",
  "plan-deleted": "The plan was deleted.",
  "directory-created": "The directory was added.",
  "directory-updated": "The directory was saved.",
  "directory-deleted": "The directory was deleted; its shadow users are no longer synced.",
  "group-updated": "The group's plan was saved.",
  "batch-plan-saved": "The batch's plan was saved; it applies from each voucher's next login.",
  "device-updated": "The device was saved.",
  "device-enabled": "The device is enabled.",
  "device-disabled":
    "The device is revoked: its MAC authentication is refused and its open sessions are disconnected.",
  "device-deleted": "The device was forgotten; its open sessions are disconnected.",
  "devices-imported": "The devices were imported.",
  "user-updated": "The user was saved.",
  "user-enabled": "The user is enabled.",
  "user-disabled": "The user is disabled: their next login is rejected.",
  "user-deleted": "The user was deleted.",
  "attribute-added": "The attribute was added.",
  "attribute-removed": "The attribute was removed.",
  "group-joined": "The user was added to the group.",
  "group-left": "The user was removed from the group.",
  "group-created": "The group was created.",
  "group-deleted": "The group was deleted.",
  "batch-created": "The voucher batch was created.",
  "session-disconnected": "The access point acknowledged the disconnect (Disconnect-ACK).",
  "session-refused": "The access point refused the disconnect (Disconnect-NAK); see the session's row.",
  "session-no-answer": "The access point did not answer the disconnect; see the session's row.",
  "webhook-enabled": "The webhook endpoint is enabled.",
  "webhook-disabled": "The webhook endpoint is disabled: no events are sent to it.",
  "webhook-deleted": "The webhook endpoint was deleted, with its delivery log.",
  "webhook-secret-shown":
    "The signing secret is shown only once, right after it is made. If it was lost, rotate it to " +
    "get a new one.",
  "webhook-test-queued":
    "A test event (webhook.test) was queued; it is sent at once. Reload to see the result.",
  "webhook-resent": "The delivery was queued again; it is sent at once. Reload to see the result.",
  "guest-approved": "The guest was approved: their page moves on by itself.",
  "guest-denied": "The guest was denied.",
  "idp-created": "The identity provider was created. Register Wisp at the provider with the details below.",
  "idp-updated": "The identity provider was saved.",
  "idp-deleted": "The identity provider was deleted.",
  "password-login-off":
    "Password login is off for this account: console users log in through single sign-on only.",
  "password-login-on": "Password login is on again for this account.",
  "sso-logged-out": "You have logged out of the console (not of your identity provider).",
  "invite-sent": "The invitation was mailed. The link in it works once, for 72 hours.",
  "invite-withdrawn": "The invitation was withdrawn: its link no longer works.",
  "invite-accepted": "You joined the team. Log in with your email and the password you just chose.",
  "role-changed": "The role was changed: it applies from the member's next request.",
  "member-removed": "The member was removed and their sessions ended.",
  "session-ended": "The session was ended: its next request is logged out.",
  "totp-on": "The authenticator app is set up: its code is asked for at every login from now on.",
  "totp-off": "The authenticator app was removed.",
  "passkey-added": "The passkey was added.",
  "passkey-renamed": "The passkey was renamed.",
  "passkey-removed": "The passkey was removed: it no longer signs in.",
  "codes-shown":
    "Recovery codes are shown only once, right after they are made. If they were lost, make new ones " +
    "(the old ones then stop working).",
  "second-factor-required":
    "A second factor is now required of every console user of this account. Those without one set one up at their next login.",
  "second-factor-optional": "A second factor is no longer required of this account's console users.",
};

export interface Asset {
  type: string;
  body: Buffer;
  /** Short content hash, appended to the URL so a changed file is fetched anew. */
  version: string;
}

function loadAsset(name: string, type: string, file = `${PUBLIC}/${name}`): Asset {
  const body = readShippedFile(file, "the console's static file");
  return { type, body, version: createHash("sha256").update(body).digest("hex").slice(0, 10) };
}

/**
 * @simplewebauthn/browser's own browser build (UMD: one file, global SimpleWebAuthnBrowser), served
 * as it is shipped: the package's ES module entry imports further files, which a page could load
 * only through a bundler or an import map.
 */
const WEBAUTHN_BROWSER = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@simplewebauthn/browser")),
  "../dist/bundle/index.umd.min.js",
);

export const assets: Record<string, Asset> = {
  "console.css": loadAsset("console.css", "text/css; charset=utf-8"),
  "console.js": loadAsset("console.js", "text/javascript; charset=utf-8"),
  "passkeys.js": loadAsset("passkeys.js", "text/javascript; charset=utf-8"),
  "webauthn.js": loadAsset("webauthn.js", "text/javascript; charset=utf-8", WEBAUTHN_BROWSER),
};

const assetUrl = (name: string) => `/console/static/${name}?v=${assets[name]!.version}`;

/** The scripts of a page with a passkey button: the WebAuthn library, then the console's glue. */
export function webauthnScripts(): string[] {
  return [assetUrl("webauthn.js"), assetUrl("passkeys.js")];
}

const eta = new Eta({ views: VIEWS, cache: true, autoEscape: true, autoTrim: [false, "nl"] });

/** Every template in ./views: pages, and the parts they include. A page names one of these. */
export const VIEW_NAMES = [
  "access-point",
  "access-points",
  "audit",
  "batch-print",
  "batch",
  "chart",
  "console-sessions",
  "device-delete",
  "device-fields",
  "device-import",
  "device-new",
  "device",
  "devices",
  "eap-settings",
  "enrol",
  "error",
  "field",
  "group-delete",
  "groups",
  "guests",
  "home",
  "idp-delete",
  "idp-form",
  "idps",
  "invite",
  "key-created",
  "key-revoke",
  "keys",
  "layout",
  "login",
  "network-delete",
  "network-form",
  "network-rotate",
  "policies",
  "policy",
  "policy-fields",
  "plans",
  "plan",
  "plan-fields",
  "plan-select",
  "directories",
  "directory-form",
  "network-secret",
  "network",
  "networks",
  "pager",
  "passkey-signin",
  "portal-delete",
  "portal-form",
  "portals",
  "radius-settings",
  "radsec-settings",
  "report-task",
  "reports",
  "recovery-codes",
  "second-factor",
  "security",
  "sessions-live",
  "sessions",
  "setup",
  "sso-choose",
  "sso-going",
  "team-remove",
  "team",
  "totp-page",
  "totp-setup",
  "user-delete",
  "user-new",
  "user",
  "users",
  "voucher-table",
  "vouchers",
  "webhook-delete",
  "webhook-rotate",
  "webhook-secret",
  "webhook",
  "webhooks",
] as const;
export type ViewName = (typeof VIEW_NAMES)[number];

let viewsLoaded = false;

/**
 * A template's function, compiled when its page is first rendered. The compiled functions of all
 * the templates (their generated code and its compilation: ~1 MB) would otherwise be held from the
 * start by a server whose console may never be opened; the template's text (~180 KB for all) is.
 */
function compiledOnFirstUse(file: string, text: string): TemplateFunction {
  let compiled: TemplateFunction | undefined;
  const render: TemplateFunction = function (data, options) {
    compiled ??= eta.compile(text, { filepath: file });
    return compiled.call(this, data, options);
  };
  return render;
}

/**
 * Reads every template into eta's cache, under the path eta resolves the name (or an include of
 * it) to, so no page reads a file. Run as the server starts (once per process): a template
 * missing or broken stops the start (ShippedFileError) instead of failing its page. Each is
 * compiled here to find out, and again when its page is first shown (see compiledOnFirstUse).
 */
export function loadViews(): void {
  if (viewsLoaded) return;
  for (const name of VIEW_NAMES) {
    const file = path.join(VIEWS, `${name}.eta`);
    const text = readShippedFile(file, "the console template").toString("utf8");
    try {
      eta.compile(text, { filepath: file });
    } catch (error) {
      throw shippedFileError("the console template", file, error);
    }
    eta.templatesSync.define(file, compiledOnFirstUse(file, text));
  }
  viewsLoaded = true;
}

/** A part of a page alone (no layout), for scripts that refresh it in place. */
export function showPart(reply: FastifyReply, view: ViewName, data: Record<string, unknown>): FastifyReply {
  const html = eta.render(`./${view}`, { ...data, h: helpers });
  return reply.type("text/html; charset=utf-8").header("Cache-Control", "no-store").send(html);
}

/** Field name -> message, for showing each problem next to its field. */
export type FieldErrors = Record<string, string>;

export function fieldErrors(details: FieldProblem[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const { field, message } of details) errors[field] ??= message;
  return errors;
}

export interface PageOptions {
  title: string;
  /** Which navigation entry is current. */
  section?: string;
  status?: number;
  /** The CSRF token forms carry when nobody is logged in (setup, login). */
  csrf?: string;
}

/** Renders a page into the reply: HTML, never cached (pages may carry a secret shown once). */
export function show(
  request: FastifyRequest,
  reply: FastifyReply,
  view: ViewName,
  options: PageOptions,
  data: Record<string, unknown> = {},
): FastifyReply {
  const session = request.consoleSession;
  const query = request.query as Record<string, unknown> | undefined;
  const noticeKey = typeof query?.notice === "string" ? query.notice : "";
  const html = eta.render(`./${view}`, {
    ...data,
    page: {
      title: options.title,
      section: options.section ?? "",
      session,
      csrf: session?.csrfToken ?? options.csrf ?? "",
      notice: NOTICES[noticeKey] ?? "",
      css: `/console/static/console.css?v=${assets["console.css"]!.version}`,
      js: `/console/static/console.js?v=${assets["console.js"]!.version}`,
    },
    h: helpers,
  });
  return reply
    .code(options.status ?? 200)
    .type("text/html; charset=utf-8")
    .header("Cache-Control", "no-store")
    .send(html);
}

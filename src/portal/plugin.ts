// The captive-portal door: the guest pages at /portal/<id> (the portals' login_url). A gateway
// redirects a new guest here with its own parameters; the page checks the code or the username and
// password with the RADIUS rules (core: checkSignIn) and hands the guest back to the gateway in its
// vendor's protocol (gateway.ts). Security headers, a double-submit CSRF token and attempt limits
// per client address and device MAC are applied here, for every portal route.

import { createHash, timingSafeEqual } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { withActor } from "../core/audit/context.ts";
import { canonicalMac, isRandomised } from "../core/devices/mac.ts";
import { kindOf } from "../core/guests/service.ts";
import type { Core } from "../core/index.ts";
import { PORTAL_METHODS, type PortalLanguage, type PortalMethod } from "../core/portals/rules.ts";
import type { GuestPortal } from "../core/portals/service.ts";
import {
  checkSignIn,
  clickThrough,
  type GuestProblem,
  MAX_GUEST_EMAIL,
  MAX_GUEST_NAME,
  registerGuest,
  type SignInProblem,
} from "../core/portals/signin.ts";
import { randomToken } from "../core/shared/random-pool.ts";
import { readShippedFile } from "../core/shared/shipped-files.ts";
import { addressGroup, type CounterStore } from "../http/rate-limit.ts";
import {
  coovaChecksumValid,
  type Gateway,
  type GatewayParams,
  gatewayOrigin,
  handoff,
  parseGateway,
  refusedGatewayHost,
  safeHttpUrl,
} from "./gateway.ts";
import { guestRoutes, startProblemText } from "./guests.ts";
import { escapeHtml, Html, html } from "./html.ts";
import { CATALOGUE, chooseLanguage, type Messages } from "./i18n.ts";
import { idpRoutes } from "./idp.ts";
import { myDevicesRoutes } from "./my-devices.ts";
import { type Assets, colorsCss, handoffPage, messagePage, signInPage } from "./views.ts";

export interface PortalOptions {
  core: Core;
  counters: CounterStore;
  /** Sign-in attempts per window from one client address (guests behind one gateway share it). */
  attemptsPerAddress?: number;
  /** Sign-in attempts per window from one device (the gateway's MAC parameter). */
  attemptsPerDevice?: number;
  windowMs?: number;
}

const CSRF_COOKIE = "wisp_portal_csrf";
/**
 * The slots of a cached sign-in page, for what changes per guest (the CSRF token, the gateway's
 * query, that query followed by "&" in the language links). Each is markup with a "<", which html.ts
 * turns into "&lt;" in every string it inserts: no portal title, welcome text, terms or gateway
 * parameter can spell a slot, so only the ones the page template itself put there are filled.
 */
const SLOTS = {
  csrf: new Html("<wisp-slot csrf>"),
  gateway: new Html("<wisp-slot gateway>"),
  gatewayAnd: new Html("<wisp-slot gateway&>"),
} as const;
type Slot = keyof typeof SLOTS;
const SLOT_OF = new Map<string, Slot>(
  Object.entries(SLOTS).map(([slot, mark]) => [mark.value, slot as Slot]),
);
/** Splits a rendered page around its slots, keeping them (no character of a slot is special here). */
const SLOT_SPLIT = new RegExp(`(${[...SLOT_OF.keys()].join("|")})`);
/**
 * Rendered plain sign-in pages by portal (as read) and language, as UTF-8 pieces around the slots:
 * a page is then one Buffer.concat, sent without re-encoding a 2.5 KB string for every guest.
 */
const blankPages = new WeakMap<GuestPortal, Map<PortalLanguage, PageTemplate>>();
type PageTemplate = (Buffer | Slot)[];
const AMP = Buffer.from("&amp;");
const EMPTY = Buffer.alloc(0);
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const FORM_LIMIT = 16 * 1024;

const STATIC = fileURLToPath(new URL("./static", import.meta.url));
function asset(name: string, type: string) {
  const body = readShippedFile(`${STATIC}/${name}`, "the portal's static file");
  return { type, body, version: createHash("sha256").update(body).digest("hex").slice(0, 10) };
}
const FILES: Record<string, { type: string; body: Buffer; version: string }> = {
  "portal.css": asset("portal.css", "text/css; charset=utf-8"),
  "handoff.js": asset("handoff.js", "text/javascript; charset=utf-8"),
};
/** The guest pages' stylesheet and script addresses (versioned); the console's preview uses them too. */
export const ASSETS: Assets = {
  css: `/portal/static/portal.css?v=${FILES["portal.css"]!.version}`,
  js: `/portal/static/handoff.js?v=${FILES["handoff.js"]!.version}`,
};

/** The console's policy, with form-action widened to the one gateway this page hands off to. */
const policy = (formAction: string) =>
  `default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action ${formAction}; object-src 'none'`;
const SELF_POLICY = policy("'self'");
function securityHeaders(reply: FastifyReply, formTarget?: string): void {
  reply.header("Content-Security-Policy", formTarget ? policy(`'self' ${formTarget}`) : SELF_POLICY);
  reply.header("X-Content-Type-Options", "nosniff");
  reply.header("Referrer-Policy", "no-referrer");
  reply.header("X-Frame-Options", "DENY");
  reply.header("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
}

/** fastify's parsed query as the gateway parser reads it: the first value of a repeated name. */
function queryParams(query: unknown): GatewayParams {
  const values = (query ?? {}) as Record<string, string | string[] | undefined>;
  return {
    get: (name) => {
      const value = values[name];
      return typeof value === "string" ? value : Array.isArray(value) ? (value[0] ?? null) : null;
    },
  };
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The browser's double-submit token, or a new one set as a cookie now. */
export function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookie(request, CSRF_COOKIE);
  if (existing && TOKEN.test(existing)) return existing;
  // 32 octets from the shared pool: one getrandom call per 128 first visits.
  const token = randomToken(32);
  const secure = request.protocol === "https" ? "; Secure" : "";
  reply.header("Set-Cookie", `${CSRF_COOKIE}=${token}; Path=/portal; HttpOnly; SameSite=Lax${secure}`);
  return token;
}

export function sameToken(given: string, expected: string | undefined): boolean {
  if (!expected || !TOKEN.test(expected)) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function positiveId(text: string): number | undefined {
  return /^\d{1,9}$/.test(text) && Number(text) >= 1 ? Number(text) : undefined;
}

const PROBLEM_TEXT: Record<SignInProblem | GuestProblem, keyof Messages> = {
  terms_required: "termsRequired",
  bad_name: "badName",
  bad_email: "badEmail",
  bad_phone: "badPhone",
  guest_refused: "guestRefused",
  invalid_code: "invalidCode",
  code_expired: "codeExpired",
  code_used_up: "codeUsedUp",
  wrong_credentials: "wrongCredentials",
  already_online: "alreadyOnline",
  method_off: "staleForm",
};

export function send(reply: FastifyReply, status: number, body: string | Buffer, formTarget?: string) {
  securityHeaders(reply, formTarget);
  return reply.code(status).type("text/html; charset=utf-8").header("Cache-Control", "no-store").send(body);
}

/** Whether the page must speak of a randomised address: only when the portal remembers devices. */
function randomised(portal: GuestPortal, mac: string | null): boolean {
  return portal.remember.choice !== "never" && mac !== null && isRandomised(mac);
}

/**
 * After a sign-in the gateway is about to accept: remembers the device for the portal's days when
 * the portal always does, or asks and the guest ticked the box. A randomised address is never
 * remembered silently: only when the operator allows it and the guest ticked the box.
 */
async function rememberDevice(
  core: Core,
  portal: GuestPortal,
  signIn: { mac: string | null; method: PortalMethod; username: string; asked: boolean },
): Promise<void> {
  const { choice, days, randomMacs } = portal.remember;
  const mac = signIn.mac === null ? null : canonicalMac(signIn.mac);
  if (choice === "never" || mac === null) return;
  const wanted = isRandomised(mac)
    ? randomMacs === "allow" && signIn.asked
    : choice === "always" || signIn.asked;
  if (!wanted) return;
  // Codes (voucher, click-through) are vouchers; the others are users.
  const owner =
    signIn.method === "voucher" || signIn.method === "clickthrough"
      ? { voucherCode: signIn.username.toUpperCase() }
      : { username: signIn.username };
  await core.devices.remember(portal.accountId, { mac, portalId: portal.id, owner, days });
}

export async function portalPlugin(app: FastifyInstance, options: PortalOptions): Promise<void> {
  const { core, counters } = options;
  const perAddress = options.attemptsPerAddress ?? 30;
  const perDevice = options.attemptsPerDevice ?? 10;
  const windowMs = options.windowMs ?? 60_000;

  // A guest's changes (registration, their own devices) are audited as the portal's, from the
  // guest's address (core/audit/context.ts).
  app.addHook("onRoute", (route) => {
    route.schema = { ...route.schema, hide: true };
    route.handler = withActor(route.handler, (request: FastifyRequest) => ({
      type: "portal",
      id: "",
      name: "portal",
      role: "",
      address: request.ip,
    }));
  });
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: FORM_LIMIT },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );

  const languageOf = (request: FastifyRequest, portal?: GuestPortal, asked?: unknown) =>
    chooseLanguage(
      asked ?? (request.query as Record<string, unknown>)?.lang,
      portal?.language ?? "auto",
      request.headers["accept-language"],
    );

  function notFound(request: FastifyRequest, reply: FastifyReply) {
    const lang = languageOf(request);
    const t = CATALOGUE[lang];
    return send(reply, 404, messagePage(lang, ASSETS, t.notFoundTitle, t.notFoundText));
  }

  app.setNotFoundHandler(notFound);
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 500) request.log.error({ err: error }, "portal error");
    const lang = languageOf(request);
    const t = CATALOGUE[lang];
    return send(
      reply,
      status >= 400 && status < 500 ? status : 500,
      messagePage(lang, ASSETS, t.staleForm, t.staleForm),
    );
  });

  app.get<{ Params: { name: string } }>("/static/:name", async (request, reply) => {
    const file = Object.hasOwn(FILES, request.params.name) ? FILES[request.params.name] : undefined;
    if (request.params.name === "colors.css") {
      const query = request.query as Record<string, unknown>;
      const hex = (v: unknown) => (typeof v === "string" && /^[0-9a-f]{6}$/.test(v) ? `#${v}` : null);
      const primary = hex(query.p);
      const background = hex(query.b);
      if (!primary || !background) return notFound(request, reply);
      securityHeaders(reply);
      return reply
        .type("text/css; charset=utf-8")
        .header("Cache-Control", "public, max-age=86400")
        .send(colorsCss(primary, background));
    }
    if (!file) return notFound(request, reply);
    securityHeaders(reply);
    return reply
      .type(file.type)
      .header("Cache-Control", "public, max-age=31536000, immutable")
      .send(file.body);
  });

  /**
   * The page's address with another language and the same gateway parameters: `lang` goes last,
   * after a CoovaChilli checksum, which covers only what precedes it.
   */
  const switcher = (id: number, gatewayQuery: string) => (lang: PortalLanguage) =>
    `/portal/${id}?${gatewayQuery ? `${gatewayQuery}&` : ""}lang=${lang}`;

  async function showSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
    portal: GuestPortal,
    gatewayQuery: string,
    lang: PortalLanguage,
    extra: {
      status?: number;
      error?: string;
      username?: string;
      guest?: { name: string; email: string; phone: string; sponsor?: string };
      /** The guest's device uses a randomised MAC (the page says what that means for remembering). */
      randomMac?: boolean;
    } = {},
  ) {
    const csrf = csrfToken(request, reply);
    const providers = portal.methods.includes("idp") ? await core.idpSignIn.buttons(portal) : [];
    const render = (
      token: string | Html,
      gateway: string | Html,
      switchTo: (lang: PortalLanguage) => string | Html,
    ) =>
      signInPage({
        portal,
        logo: portal.logoVersion ? `/portal/${portal.id}/logo?v=${portal.logoVersion}` : undefined,
        lang,
        assets: ASSETS,
        action: `/portal/${portal.id}`,
        csrf: token,
        gateway,
        error: extra.error,
        ...(extra.username ? { username: extra.username } : {}),
        ...(extra.guest ? { guest: extra.guest } : {}),
        randomMac: extra.randomMac,
        switchTo,
        providers,
      });
    if (extra.error || extra.username || extra.guest || extra.randomMac) {
      return send(reply, extra.status ?? 200, render(csrf, gatewayQuery, switcher(portal.id, gatewayQuery)));
    }
    // The plain page is rendered once per portal (as read, see GUEST_CACHE_MS) and language, with
    // slots for what changes per guest: the CSRF token and the gateway's query (escaped here).
    const blank = blankPages.get(portal) ?? new Map<PortalLanguage, PageTemplate>();
    blankPages.set(portal, blank);
    let template = blank.get(lang);
    if (template === undefined) {
      const page = render(
        SLOTS.csrf,
        SLOTS.gateway,
        (code) => html`/portal/${portal.id}?${SLOTS.gatewayAnd}lang=${code}`,
      );
      template = page.split(SLOT_SPLIT).map((piece) => SLOT_OF.get(piece) ?? Buffer.from(piece));
      blank.set(lang, template);
    }
    const gateway = Buffer.from(escapeHtml(gatewayQuery));
    const fill: Record<Slot, Buffer> = {
      csrf: Buffer.from(csrf),
      gateway,
      gatewayAnd: gatewayQuery ? Buffer.concat([gateway, AMP]) : EMPTY,
    };
    const pieces = template.map((piece) => (typeof piece === "string" ? fill[piece] : piece));
    return send(reply, 200, Buffer.concat(pieces));
  }

  /**
   * The gateway's query string as it came (a CoovaChilli checksum is over its exact bytes), without
   * the `lang` the language switch adds: after the checksum, or anywhere when there is none.
   */
  function gatewayQueryOf(request: FastifyRequest): string {
    const at = request.url.indexOf("?");
    const raw = at < 0 ? "" : request.url.slice(at + 1);
    if (!raw.includes("lang=")) return raw;
    const parts = raw.split("&");
    const checksum = parts.findIndex((part) => part.startsWith("md="));
    return parts.filter((part, index) => !(part.startsWith("lang=") && index > checksum)).join("&");
  }

  /** The gateway's parameters of a page or sign-in request, or null when they do not check out. */
  function gatewayOf(request: FastifyRequest, portal: GuestPortal, query: string, parsed?: GatewayParams) {
    const gateway = parseGateway(portal, parsed ?? new URLSearchParams(query));
    if (gateway?.vendor !== "coovachilli") return gateway;
    // The address this request came to first (the gateway signs the uamserver URL the guest was
    // sent to), then the portal's login_url when that differs (a proxy that rewrites the host).
    const here = `${request.protocol}://${request.host}/portal/${portal.id}`;
    const pages = here === portal.loginUrl ? [here] : [here, portal.loginUrl];
    return coovaChecksumValid(query, portal.uamSecret, pages) ? gateway : null;
  }

  /** Where a signed-in guest lands: the portal's success URL, else the page first asked for. */
  const landingOf = (portal: GuestPortal, original: string | null) =>
    safeHttpUrl(portal.successUrl) ?? original;

  app.get<{ Params: { id: string } }>("/:id", async (request, reply) => {
    const id = positiveId(request.params.id);
    // The cached portal without a promise: this page is what every new guest asks for first.
    const portal =
      id === undefined ? undefined : (core.portals.guestFromCache(id) ?? (await core.portals.forGuests(id)));
    if (!portal) return notFound(request, reply);
    const lang = languageOf(request, portal);
    const t = CATALOGUE[lang];
    const query = gatewayQueryOf(request);
    // fastify has parsed the same query string already (request.query); `lang` is not a gateway's.
    const gateway = gatewayOf(request, portal, query, queryParams(request.query));
    if (!gateway) {
      const host = refusedGatewayHost(portal, queryParams(request.query));
      if (host) request.log.info({ portal: portal.id, host }, "gateway not in the portal's allowed gateways");
      return send(reply, 400, messagePage(lang, ASSETS, portal.title, t.noGateway, { portal }));
    }
    if (gateway.vendor === "coovachilli") {
      // The gateway's answer to a logon comes back here (coova-chilli src/redir.c): res=success
      // or already (online now), failed (show the form again with the new challenge).
      if (gateway.res === "success" || gateway.res === "already") {
        const landing = landingOf(portal, gateway.userurl);
        if (landing && gateway.res === "success") return reply.redirect(landing, 303);
        return send(
          reply,
          200,
          messagePage(lang, ASSETS, t.onlineTitle, t.onlineText, { portal, link: landing }),
        );
      }
      if (gateway.res === "failed") {
        const randomMac = randomised(portal, gateway.clientMac);
        return showSignIn(request, reply, portal, query, lang, { error: t.gatewayRefused, randomMac });
      }
    }
    const randomMac = randomised(portal, gateway.clientMac);
    if (gateway.vendor === "mikrotik" && gateway.failed) {
      return showSignIn(request, reply, portal, query, lang, { error: t.gatewayRefused, randomMac });
    }
    return showSignIn(request, reply, portal, query, lang, { randomMac });
  });

  // The logo: only an enabled portal's, with the type found in its bytes (core/portals/logo.ts),
  // never sniffed, never run as a document, revalidated by its digest.
  app.get<{ Params: { id: string } }>("/:id/logo", async (request, reply) => {
    const id = positiveId(request.params.id);
    const logo = id === undefined ? undefined : await core.portals.guestLogo(id);
    if (!logo) return notFound(request, reply);
    const etag = `"${logo.version}"`;
    reply
      .header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; sandbox")
      .header("X-Content-Type-Options", "nosniff")
      .header("Cross-Origin-Resource-Policy", "same-origin")
      .header("Cache-Control", "public, max-age=300, must-revalidate")
      .header("ETag", etag);
    const match = request.headers["if-none-match"];
    if (match?.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)) {
      return reply.code(304).send();
    }
    return reply.type(logo.contentType).send(logo.data);
  });

  app.post<{ Params: { id: string } }>("/:id", async (request, reply) => {
    const id = positiveId(request.params.id);
    const portal = id === undefined ? undefined : await core.portals.forGuests(id);
    if (!portal) return notFound(request, reply);
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const lang = languageOf(request, portal, form.get("lang"));
    const t = CATALOGUE[lang];
    const query = form.get("gw") ?? "";
    const gateway = gatewayOf(request, portal, query);
    if (!gateway) return send(reply, 400, messagePage(lang, ASSETS, portal.title, t.noGateway, { portal }));
    if (!sameToken(form.get("_csrf") ?? "", readCookie(request, CSRF_COOKIE))) {
      return showSignIn(request, reply, portal, query, lang, { status: 403, error: t.staleForm });
    }

    if (await attemptsExceeded(request, reply, portal, lang, gateway.clientMac)) return reply;

    const asked = form.get("method") ?? "";
    const method: PortalMethod = (PORTAL_METHODS as readonly string[]).includes(asked)
      ? (asked as PortalMethod)
      : "voucher";
    const guest = {
      name: (form.get("name") ?? "").slice(0, MAX_GUEST_NAME),
      email: (form.get("email") ?? "").slice(0, MAX_GUEST_EMAIL),
      phone: (form.get("phone") ?? "").slice(0, 24),
    };
    const termsAccepted = form.get("terms") === "yes";
    if (method === "registration" && kindOf(portal)) {
      const sponsor = (form.get("sponsor") ?? "").slice(0, MAX_GUEST_EMAIL);
      const started = await core.guests.start(portal, {
        ...guest,
        sponsorEmail: sponsor,
        termsAccepted,
        clientMac: gateway.clientMac,
        address: addressGroup(request.ip),
        gateway: query,
        lang,
      });
      if (started.ok) return reply.redirect(`/portal/${portal.id}/guest/${started.token}?lang=${lang}`, 303);
      if (started.problem === "limited") reply.header("Retry-After", String(started.retryAfter));
      return showSignIn(request, reply, portal, query, lang, {
        status: started.problem === "limited" ? 429 : 400,
        error: startProblemText(lang, started, portal),
        guest: { ...guest, sponsor },
      });
    }
    const result =
      method === "clickthrough"
        ? await clickThrough(core, portal, { termsAccepted })
        : method === "registration"
          ? await registerGuest(core, portal, { ...guest, termsAccepted, clientMac: gateway.clientMac })
          : await checkSignIn(core.aaa, portal, {
              method,
              code: form.get("code") ?? "",
              username: form.get("username") ?? "",
              password: form.get("password") ?? "",
              clientMac: gateway.clientMac,
            });
    if (!result.ok) {
      return showSignIn(request, reply, portal, query, lang, {
        status: result.problem === "method_off" || method === "voucher" || method === "password" ? 401 : 400,
        error: t[PROBLEM_TEXT[result.problem]],
        username: method === "password" ? (form.get("username") ?? "").slice(0, 64) : "",
        ...(method === "registration" ? { guest } : {}),
        randomMac: randomised(portal, gateway.clientMac),
      });
    }
    await rememberDevice(core, portal, {
      mac: gateway.clientMac,
      method,
      username: result.username,
      asked: form.get("remember") === "yes",
    });
    return handOff(reply, portal, gateway, lang, method, result);
  });

  /**
   * Attempts per client address and per device; past either, the friendlier page with Retry-After
   * is sent and true returned (not the reply: a reply is a thenable, which an await would unwrap).
   * IPv6 by /64, as the API's and the console's limits count (one subscriber's allocation).
   */
  async function attemptsExceeded(
    request: FastifyRequest,
    reply: FastifyReply,
    portal: GuestPortal,
    lang: PortalLanguage,
    clientMac: string | null,
  ): Promise<boolean> {
    const hits = [counters.hit(`portal:ip:${addressGroup(request.ip)}`, windowMs)];
    if (clientMac) hits.push(counters.hit(`portal:mac:${clientMac}`, windowMs));
    const [byAddress, byDevice] = await Promise.all(hits);
    if ((byAddress && byAddress.count > perAddress) || (byDevice && byDevice.count > perDevice)) {
      const resetAt = Math.max(byAddress?.resetAt ?? 0, byDevice?.resetAt ?? 0);
      reply.header("Retry-After", String(Math.max(1, Math.ceil((resetAt - counters.now()) / 1000))));
      const t = CATALOGUE[lang];
      send(reply, 429, messagePage(lang, ASSETS, portal.title, t.tooMany, { portal }));
      return true;
    }
    return false;
  }

  /** Hands the credential to the gateway in its vendor's protocol; `landing` overrides where the guest lands. */
  async function handOff(
    reply: FastifyReply,
    portal: GuestPortal,
    gateway: Gateway,
    lang: PortalLanguage,
    method: PortalMethod,
    result: { username: string; password: string; providerId?: number },
    landingOverride?: string,
  ) {
    // The gateway's RADIUS request that follows is recorded with this portal and method.
    await core.portals.expectLogin(
      portal,
      method,
      result.username,
      gateway.clientMac,
      undefined,
      result.providerId ?? null,
    );
    const original =
      gateway.vendor === "coovachilli"
        ? gateway.userurl
        : gateway.vendor === "mikrotik"
          ? gateway.linkOrig
          : gateway.original;
    const landing = landingOverride ?? landingOf(portal, original);
    const next = handoff(portal, gateway, result.username, result.password, landing);
    // The hand-off form may post to the gateway only; its redirect on Accept goes to the gateway
    // itself or to the landing page, so both origins are allowed (browsers check the whole chain).
    const targets = [gatewayOrigin(gateway), ...(landing ? [new URL(landing).origin] : [])];
    return send(reply, 200, handoffPage(portal, lang, ASSETS, next), [...new Set(targets)].join(" "));
  }

  const helpers = {
    core,
    send,
    csrfToken,
    sameToken: (request: FastifyRequest, given: string) => sameToken(given, readCookie(request, CSRF_COOKIE)),
    gatewayOf: (request: FastifyRequest, portal: GuestPortal, query: string) =>
      gatewayOf(request, portal, query),
    languageOf,
    notFound,
    attemptsExceeded,
    handOff,
  };
  await guestRoutes(app, helpers);
  await idpRoutes(app, helpers);
  await myDevicesRoutes(app, { core, counters, attemptsPerAddress: perAddress, windowMs });
}

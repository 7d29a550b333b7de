// "My devices" beside a captive portal (/portal/<id>/devices): the portal gives the account, the
// look and the languages. A Wisp user signs in with username and password (attempts limited per
// client address, like the portal's sign-in) and gets a sealed, expiring cookie for this portal's
// pages only; every form carries the portal's double-submit CSRF token. The rules (limit, owner,
// disconnect on removal) are the core's (src/core/devices/self-service.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DeviceOwner } from "../core/devices/self-service.ts";
import { MY_DEVICES_SESSION_S } from "../core/devices/self-service.ts";
import type { Core } from "../core/index.ts";
import type { GuestPortal } from "../core/portals/service.ts";
import { AppError, ConflictError, ValidationError } from "../core/shared/errors.ts";
import { addressGroup, type CounterStore } from "../http/rate-limit.ts";
import { CATALOGUE, chooseLanguage, type Messages } from "./i18n.ts";
import { ASSETS, csrfToken, positiveId, readCookie, sameToken, send } from "./plugin.ts";
import { messagePage, myDevicesPage } from "./views.ts";

const SESSION_COOKIE = "wisp_my_devices";

interface Options {
  core: Core;
  counters: CounterStore;
  attemptsPerAddress: number;
  windowMs: number;
}

export async function myDevicesRoutes(app: FastifyInstance, options: Options): Promise<void> {
  const { core, counters } = options;

  const formOf = (request: FastifyRequest) =>
    request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
  const languageOf = (request: FastifyRequest, portal: GuestPortal) =>
    chooseLanguage(
      formOf(request).get("lang") ?? (request.query as Record<string, unknown>)?.lang,
      portal.language,
      request.headers["accept-language"],
    );
  const base = (portal: GuestPortal) => `/portal/${portal.id}/devices`;

  async function portalOf(request: FastifyRequest): Promise<GuestPortal | undefined> {
    const id = positiveId((request.params as { id: string }).id);
    return id === undefined ? undefined : core.portals.forGuests(id);
  }

  function setSession(
    reply: FastifyReply,
    request: FastifyRequest,
    portal: GuestPortal,
    token: string | null,
  ) {
    const secure = request.protocol === "https" ? "; Secure" : "";
    const value = token ?? "";
    const age = token ? MY_DEVICES_SESSION_S : 0;
    reply.header(
      "Set-Cookie",
      `${SESSION_COOKIE}=${value}; Path=${base(portal)}; Max-Age=${age}; HttpOnly; SameSite=Strict${secure}`,
    );
  }

  async function ownerOf(request: FastifyRequest, portal: GuestPortal): Promise<DeviceOwner | null> {
    const token = readCookie(request, SESSION_COOKIE);
    return token ? core.myDevices.owner(portal.accountId, token) : null;
  }

  async function page(
    request: FastifyRequest,
    reply: FastifyReply,
    portal: GuestPortal,
    owner: DeviceOwner | null,
    extra: {
      status?: number;
      error?: string;
      typed?: { username?: string; mac?: string; name?: string };
    } = {},
  ) {
    const lang = languageOf(request, portal);
    const listed = owner
      ? {
          username: owner.username,
          limit: await core.myDevices.limit(owner),
          devices: (await core.myDevices.list(owner)).map((d) => ({
            id: d.id,
            mac: d.mac,
            name: d.name,
            lastSeen: d.last_seen,
          })),
        }
      : undefined;
    const body = myDevicesPage({
      portal,
      lang,
      assets: ASSETS,
      action: base(portal),
      csrf: csrfToken(request, reply),
      switchTo: (code) => `${base(portal)}?lang=${code}`,
      error: extra.error,
      owner: listed,
      typed: extra.typed,
    });
    return send(reply, extra.status ?? 200, body);
  }

  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const lang = chooseLanguage(undefined, "auto", request.headers["accept-language"]);
    return send(
      reply,
      404,
      messagePage(lang, ASSETS, CATALOGUE[lang].notFoundTitle, CATALOGUE[lang].notFoundText),
    );
  };

  app.get<{ Params: { id: string } }>("/:id/devices", async (request, reply) => {
    const portal = await portalOf(request);
    if (!portal) return notFound(request, reply);
    return page(request, reply, portal, await ownerOf(request, portal));
  });

  app.post<{ Params: { id: string } }>("/:id/devices/login", async (request, reply) => {
    const portal = await portalOf(request);
    if (!portal) return notFound(request, reply);
    const form = formOf(request);
    const t = CATALOGUE[languageOf(request, portal)];
    const username = (form.get("username") ?? "").trim().slice(0, 64);
    if (!sameToken(form.get("_csrf") ?? "", readCookie(request, "wisp_portal_csrf"))) {
      return page(request, reply, portal, null, { status: 403, error: t.staleForm, typed: { username } });
    }
    const hit = await counters.hit(`portal:devices:ip:${addressGroup(request.ip)}`, options.windowMs);
    if (hit && hit.count > options.attemptsPerAddress) {
      reply.header("Retry-After", String(Math.max(1, Math.ceil((hit.resetAt - counters.now()) / 1000))));
      return page(request, reply, portal, null, { status: 429, error: t.tooMany, typed: { username } });
    }
    const token = await core.myDevices.signIn(portal.accountId, username, form.get("password") ?? "");
    if (!token)
      return page(request, reply, portal, null, {
        status: 401,
        error: t.wrongCredentials,
        typed: { username },
      });
    setSession(reply, request, portal, token);
    return reply.redirect(base(portal), 303);
  });

  /** A signed-in form: the CSRF token, then the session; the action; errors shown on the page. */
  function action(
    path: string,
    run: (owner: DeviceOwner, form: URLSearchParams, t: Messages) => Promise<unknown>,
    typedOf: (form: URLSearchParams) => { mac?: string; name?: string } = () => ({}),
  ) {
    app.post<{ Params: { id: string } }>(`/:id/devices/${path}`, async (request, reply) => {
      const portal = await portalOf(request);
      if (!portal) return notFound(request, reply);
      const form = formOf(request);
      const t = CATALOGUE[languageOf(request, portal)];
      const owner = await ownerOf(request, portal);
      if (!sameToken(form.get("_csrf") ?? "", readCookie(request, "wisp_portal_csrf"))) {
        return page(request, reply, portal, owner, { status: 403, error: t.staleForm });
      }
      if (!owner) return page(request, reply, portal, null, { status: 401, error: t.signInAgain });
      try {
        await run(owner, form, t);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        const message = problemText(error, t);
        return page(request, reply, portal, owner, {
          status: error.status,
          error: message,
          typed: typedOf(form),
        });
      }
      return reply.redirect(base(portal), 303);
    });
  }

  action(
    "add",
    (owner, form) => core.myDevices.add(owner, { mac: form.get("mac") ?? "", name: form.get("name") ?? "" }),
    (form) => ({ mac: (form.get("mac") ?? "").slice(0, 40), name: (form.get("name") ?? "").slice(0, 100) }),
  );
  action("rename", (owner, form) =>
    core.myDevices.rename(owner, positiveId(form.get("device") ?? "") ?? 0, form.get("name") ?? ""),
  );
  action("remove", (owner, form) => core.myDevices.remove(owner, positiveId(form.get("device") ?? "") ?? 0));

  app.post<{ Params: { id: string } }>("/:id/devices/logout", async (request, reply) => {
    const portal = await portalOf(request);
    if (!portal) return notFound(request, reply);
    setSession(reply, request, portal, null);
    return reply.redirect(base(portal), 303);
  });
}

/** The guest's words for a refusal: the MAC, a taken address, the limit, the name. */
function problemText(error: AppError, t: Messages): string {
  if (error instanceof ValidationError) {
    const field = error.details[0]?.field;
    return field === "mac" ? t.badMac : field === "name" ? t.badDeviceName : t.staleForm;
  }
  if (error instanceof ConflictError)
    return error.message.startsWith("device limit") ? t.deviceLimit : t.macTaken;
  return t.staleForm;
}

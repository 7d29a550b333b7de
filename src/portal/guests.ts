// The verified-guest routes of the portal door (issue 27), beside the sign-in page (plugin.ts):
//   /portal/<id>/guest/<token>            the guest's request: code, send again, short login, wait
//   /portal/<id>/confirm/<link token>     an emailed link (confirmed with a POST)
//   /portal/<id>/sponsor/<token>          a sponsor's approve/deny page
// Every POST checks the double-submit CSRF token and counts against the portal's attempt limits;
// the decisions themselves are the guests core's (core/guests/service.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { StartResult } from "../core/guests/service.ts";
import type { Core } from "../core/index.ts";
import type { PortalLanguage, PortalMethod } from "../core/portals/rules.ts";
import type { GuestPortal } from "../core/portals/service.ts";
import type { Gateway } from "./gateway.ts";
import { confirmPage, notePage, requestPage, sponsorPage } from "./guest-views.ts";
import { CATALOGUE, type Messages } from "./i18n.ts";
import { duration, fill, GUEST_WORDS, wait } from "./i18n-guests.ts";
import { ASSETS } from "./plugin.ts";
import { messagePage } from "./views.ts";

export interface GuestRouteHelpers {
  core: Core;
  send(reply: FastifyReply, status: number, body: string | Buffer, formTarget?: string): FastifyReply;
  csrfToken(request: FastifyRequest, reply: FastifyReply): string;
  sameToken(request: FastifyRequest, given: string): boolean;
  gatewayOf(request: FastifyRequest, portal: GuestPortal, query: string): Gateway | null;
  languageOf(request: FastifyRequest, portal?: GuestPortal, asked?: unknown): PortalLanguage;
  notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply;
  attemptsExceeded(
    request: FastifyRequest,
    reply: FastifyReply,
    portal: GuestPortal,
    lang: PortalLanguage,
    clientMac: string | null,
  ): Promise<boolean>;
  handOff(
    reply: FastifyReply,
    portal: GuestPortal,
    gateway: Gateway,
    lang: PortalLanguage,
    method: PortalMethod,
    result: { username: string; password: string; providerId?: number },
    landing?: string,
  ): Promise<FastifyReply>;
}

const GUEST_PROBLEMS: Record<string, keyof Messages> = {
  terms_required: "termsRequired",
  bad_name: "badName",
  bad_email: "badEmail",
  bad_phone: "badPhone",
  guest_refused: "guestRefused",
  method_off: "staleForm",
};

/** What the sign-in page says when a verified registration cannot start. */
export function startProblemText(
  lang: PortalLanguage,
  result: StartResult & { ok: false },
  portal: GuestPortal,
): string {
  const g = GUEST_WORDS[lang];
  if (result.problem === "limited") return fill(g.limited, { time: wait(g, result.retryAfter) });
  if (result.problem === "phone_country") return g.phoneCountry;
  if (result.problem === "sponsor_missing") return g.sponsorMissing;
  if (result.problem === "sponsor_not_allowed") return g.sponsorNotAllowed;
  if (result.problem === "bad_phone" && portal.verification.sms) return g.badPhone;
  return CATALOGUE[lang][GUEST_PROBLEMS[result.problem] ?? "staleForm"];
}

type Params = { Params: { id: string; token: string } };
const positiveId = (text: string) => (/^\d{1,9}$/.test(text) && Number(text) >= 1 ? Number(text) : undefined);
const formOf = (request: FastifyRequest) =>
  request.body instanceof URLSearchParams ? request.body : new URLSearchParams();

export async function guestRoutes(app: FastifyInstance, h: GuestRouteHelpers): Promise<void> {
  const { core } = h;
  const portalOf = async (request: FastifyRequest<Params>) => {
    const id = positiveId(request.params.id);
    return id === undefined ? undefined : core.portals.forGuests(id);
  };
  const pathOf = (portal: GuestPortal, token: string) => `/portal/${portal.id}/guest/${token}`;

  /** The request page, with an error and status when an action failed. */
  async function showRequest(
    request: FastifyRequest<Params>,
    reply: FastifyReply,
    portal: GuestPortal,
    lang: PortalLanguage,
    extra: { status?: number; error?: string } = {},
  ) {
    const row = await core.guests.request(portal, request.params.token);
    if (!row) {
      const g = GUEST_WORDS[lang];
      return h.send(reply, 404, notePage(portal, lang, ASSETS, g.expiredTitle, g.expiredText));
    }
    const open = row.status === "pending" || row.status === "locked";
    const preverify =
      open && portal.verification.preverify && row.kind.startsWith("email") && row.preverify_code === null;
    const html = requestPage({
      portal,
      lang,
      assets: ASSETS,
      csrf: h.csrfToken(request, reply),
      path: pathOf(portal, request.params.token),
      row,
      error: extra.error,
      resendIn: open && row.kind !== "sponsor" ? await core.guests.resendWait(portal, row) : 0,
      preverifyMinutes: preverify ? portal.verification.limits.preverify_minutes : null,
    });
    return h.send(reply, extra.status ?? 200, html);
  }

  /** The common checks of a POST: portal, language, CSRF, attempt limits; a reply when one fails. */
  async function admit(
    request: FastifyRequest<Params>,
    reply: FastifyReply,
    clientMac: string | null = null,
  ) {
    const portal = await portalOf(request);
    if (!portal) return { reply: h.notFound(request, reply) };
    const form = formOf(request);
    const lang = h.languageOf(request, portal, form.get("lang"));
    if (!h.sameToken(request, form.get("_csrf") ?? "")) {
      const t = CATALOGUE[lang];
      return { reply: h.send(reply, 403, messagePage(lang, ASSETS, portal.title, t.staleForm, { portal })) };
    }
    if (await h.attemptsExceeded(request, reply, portal, lang, clientMac)) return { reply };
    return { portal, form, lang };
  }

  app.get<Params>("/:id/guest/:token", async (request, reply) => {
    const portal = await portalOf(request);
    if (!portal) return h.notFound(request, reply);
    return showRequest(request, reply, portal, h.languageOf(request, portal));
  });

  app.post<Params>("/:id/guest/:token/code", async (request, reply) => {
    const admitted = await admit(request, reply);
    if (!admitted.portal) return admitted.reply;
    const { portal, form, lang } = admitted;
    const g = GUEST_WORDS[lang];
    const result = await core.guests.checkCode(
      portal,
      request.params.token,
      (form.get("code") ?? "").slice(0, 20),
    );
    if (result.ok) return reply.redirect(`${pathOf(portal, request.params.token)}?lang=${lang}`, 303);
    if (result.problem === "not_found") return showRequest(request, reply, portal, lang, { status: 404 });
    const error =
      result.problem === "wrong_code"
        ? fill(g.wrongCode, { left: result.attemptsLeft })
        : result.problem === "locked"
          ? g.codeLocked
          : g.codeExpired;
    return showRequest(request, reply, portal, lang, {
      status: result.problem === "locked" ? 429 : 400,
      error,
    });
  });

  app.post<Params>("/:id/guest/:token/resend", async (request, reply) => {
    const admitted = await admit(request, reply);
    if (!admitted.portal) return admitted.reply;
    const { portal, lang } = admitted;
    const result = await core.guests.resend(portal, request.params.token);
    if (result.ok) return reply.redirect(`${pathOf(portal, request.params.token)}?lang=${lang}`, 303);
    if (result.problem === "not_found") return showRequest(request, reply, portal, lang, { status: 404 });
    const g = GUEST_WORDS[lang];
    reply.header("Retry-After", String(result.retryAfter));
    return showRequest(request, reply, portal, lang, {
      status: 429,
      error: fill(g.limited, { time: wait(g, result.retryAfter) }),
    });
  });

  // The short login before verification: handed to the gateway like any sign-in, landing back on
  // this request's page so the guest can type the code they have just read.
  app.post<Params>("/:id/guest/:token/preverify", async (request, reply) => {
    const admitted = await admit(request, reply);
    if (!admitted.portal) return admitted.reply;
    const { portal, lang } = admitted;
    const row = await core.guests.request(portal, request.params.token);
    const gateway = row ? h.gatewayOf(request, portal, row.gateway) : null;
    if (!row || !gateway)
      return showRequest(request, reply, portal, lang, { status: 400, error: CATALOGUE[lang].noGateway });
    const result = await core.guests.preverify(portal, request.params.token, gateway.clientMac);
    const g = GUEST_WORDS[lang];
    if (!result.ok && result.problem === "limited") {
      reply.header("Retry-After", String(result.retryAfter));
      return showRequest(request, reply, portal, lang, {
        status: 429,
        error: fill(g.limited, { time: wait(g, result.retryAfter) }),
      });
    }
    if (!result.ok)
      return showRequest(request, reply, portal, lang, { status: 403, error: CATALOGUE[lang].staleForm });
    const back = `${request.protocol}://${request.host}${pathOf(portal, request.params.token)}`;
    return h.handOff(reply, portal, gateway, lang, "registration", result, back);
  });

  app.post<Params>("/:id/guest/:token/connect", async (request, reply) => {
    const admitted = await admit(request, reply);
    if (!admitted.portal) return admitted.reply;
    const { portal, lang } = admitted;
    const row = await core.guests.request(portal, request.params.token);
    const gateway = row ? h.gatewayOf(request, portal, row.gateway) : null;
    if (!row || !gateway)
      return showRequest(request, reply, portal, lang, { status: 400, error: CATALOGUE[lang].noGateway });
    const result = await core.guests.connect(portal, request.params.token, gateway.clientMac);
    if (result.ok) return h.handOff(reply, portal, gateway, lang, "registration", result);
    const t = CATALOGUE[lang];
    const error =
      result.problem === "guest_refused"
        ? t.guestRefused
        : result.problem === "expired"
          ? GUEST_WORDS[lang].expiredText
          : t.staleForm;
    return showRequest(request, reply, portal, lang, { status: 403, error });
  });

  const linkUsed = (reply: FastifyReply, portal: GuestPortal, lang: PortalLanguage, status = 410) => {
    const g = GUEST_WORDS[lang];
    return h.send(reply, status, notePage(portal, lang, ASSETS, g.confirmTitle, g.linkUsed));
  };

  app.get<Params>("/:id/confirm/:token", async (request, reply) => {
    const portal = await portalOf(request);
    if (!portal) return h.notFound(request, reply);
    const row = await core.guests.byLinkToken(portal, request.params.token);
    const lang = h.languageOf(request, portal, row?.lang);
    if (row?.kind !== "email_link" || row.status !== "pending") return linkUsed(reply, portal, lang);
    const path = `/portal/${portal.id}/confirm/${request.params.token}`;
    return h.send(
      reply,
      200,
      confirmPage(portal, lang, ASSETS, h.csrfToken(request, reply), path, row.email),
    );
  });

  app.post<Params>("/:id/confirm/:token", async (request, reply) => {
    const admitted = await admit(request, reply);
    if (!admitted.portal) return admitted.reply;
    const { portal, lang } = admitted;
    const result = await core.guests.confirmLink(portal, request.params.token);
    if (!result.ok) return linkUsed(reply, portal, lang);
    const g = GUEST_WORDS[lang];
    return h.send(reply, 200, notePage(portal, lang, ASSETS, g.verifiedTitle, g.confirmedText));
  });

  const sponsorPath = (portal: GuestPortal, token: string) => `/portal/${portal.id}/sponsor/${token}`;

  app.get<Params>("/:id/sponsor/:token", async (request, reply) => {
    const portal = await portalOf(request);
    if (!portal) return h.notFound(request, reply);
    const lang = h.languageOf(request, portal);
    const found = await core.guests.sponsorRequest(portal, request.params.token);
    if (!found.ok) return linkUsed(reply, portal, lang);
    const suggested = (request.query as Record<string, unknown>)?.decision === "deny" ? "deny" : "approve";
    const path = sponsorPath(portal, request.params.token);
    const csrf = h.csrfToken(request, reply);
    return h.send(
      reply,
      200,
      sponsorPage({ portal, lang, assets: ASSETS, csrf, path, row: found.row, suggested }),
    );
  });

  app.post<Params>("/:id/sponsor/:token", async (request, reply) => {
    const admitted = await admit(request, reply);
    if (!admitted.portal) return admitted.reply;
    const { portal, form, lang } = admitted;
    const found = await core.guests.sponsorRequest(portal, request.params.token);
    if (!found.ok) return linkUsed(reply, portal, lang);
    const approve = form.get("decision") === "approve";
    const seconds = Number(form.get("duration") ?? "");
    const result = await core.guests.decide(portal, found.row, {
      approve,
      duration: seconds,
      by: found.row.sponsor_email,
    });
    const g = GUEST_WORDS[lang];
    if (!result.ok && result.problem === "bad_duration") {
      const path = sponsorPath(portal, request.params.token);
      const csrf = h.csrfToken(request, reply);
      const page = sponsorPage({
        portal,
        lang,
        assets: ASSETS,
        csrf,
        path,
        row: found.row,
        suggested: "approve",
        error: g.badDuration,
      });
      return h.send(reply, 400, page);
    }
    if (!result.ok) return linkUsed(reply, portal, lang);
    const text = approve
      ? fill(g.approvedText, { name: result.row.name, duration: duration(g, seconds) })
      : fill(g.deniedDone, { name: result.row.name });
    return h.send(reply, 200, notePage(portal, lang, ASSETS, g.sponsorTitle, text));
  });
}

// Sign-in through an identity provider on the guest pages (issue 26), beside the sign-in page:
//   POST /portal/<id>/idp/<provider>          a provider's button: starts the sign-in, sets the
//                                             browser's cookie, a page that follows to the IdP
//   GET  /portal/idp/<provider>/callback      OIDC: the IdP's redirect with the code
//   POST /portal/idp/<provider>/acs           SAML: the IdP's Response (HTTP-POST binding)
//   GET  /portal/idp/<provider>/metadata      SAML: Wisp's SP metadata for that provider
//   GET  /portal/<id>/idp/finish/<token>      back on our own page with the cookie: the credential,
//                                             handed to the gateway as every method does
// The callback and ACS also finish console sign-ins (core/idp/signin.ts): they send the browser to
// the console's own finish page. Every refusal is logged with its reason and shown as a page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { IdpRefusal } from "../core/idp/rules.ts";
import type { PortalLanguage } from "../core/portals/rules.ts";
import type { GuestPortal } from "../core/portals/service.ts";
import type { GuestRouteHelpers } from "./guests.ts";
import { CATALOGUE } from "./i18n.ts";
import { IDP_WORDS, idpProblemWords } from "./i18n-idp.ts";
import { ASSETS } from "./plugin.ts";
import { goingPage, messagePage } from "./views.ts";

/** The cookie binding a sign-in to the browser that started it (core/idp/signin.ts). */
export const IDP_COOKIE = "wisp_idp";
/** A SAML Response with its certificate and signature: larger than the sign-in forms. */
const ACS_BODY_LIMIT = 256 * 1024;

const positiveId = (text: string) => (/^\d{1,9}$/.test(text) && Number(text) >= 1 ? Number(text) : undefined);
const formOf = (request: FastifyRequest) =>
  request.body instanceof URLSearchParams ? request.body : new URLSearchParams();

export async function idpRoutes(app: FastifyInstance, h: GuestRouteHelpers): Promise<void> {
  const { core } = h;

  /** The refusal's page and log line: the reason for the operator, a plain sentence for the guest. */
  function refused(
    request: FastifyRequest,
    reply: FastifyReply,
    error: unknown,
    context: { provider?: number; name?: string; portal?: GuestPortal; lang?: PortalLanguage },
  ) {
    if (!(error instanceof IdpRefusal)) throw error;
    request.log.warn(
      { provider: context.provider, portal: context.portal?.id, reason: error.problem, detail: error.detail },
      `identity provider sign-in refused: ${error.problem}`,
    );
    const lang = context.lang ?? h.languageOf(request, context.portal);
    const w = IDP_WORDS[lang];
    const text = idpProblemWords(w, error.problem).replace("{name}", context.name ?? "");
    const status = error.problem === "idp_unreachable" ? 502 : error.problem === "unknown_state" ? 410 : 403;
    return h.send(reply, status, messagePage(lang, ASSETS, w.refusedTitle, text, { portal: context.portal }));
  }

  app.post<{ Params: { id: string; provider: string } }>("/:id/idp/:provider", async (request, reply) => {
    const id = positiveId(request.params.id);
    const portal = id === undefined ? undefined : await core.portals.forGuests(id);
    if (!portal) return h.notFound(request, reply);
    const form = formOf(request);
    const lang = h.languageOf(request, portal, form.get("lang"));
    const t = CATALOGUE[lang];
    const query = form.get("gw") ?? "";
    const gateway = h.gatewayOf(request, portal, query);
    if (!gateway) return h.send(reply, 400, messagePage(lang, ASSETS, portal.title, t.noGateway, { portal }));
    if (!h.sameToken(request, form.get("_csrf") ?? ""))
      return h.send(reply, 403, messagePage(lang, ASSETS, portal.title, t.staleForm, { portal }));
    if (await h.attemptsExceeded(request, reply, portal, lang, gateway.clientMac)) return reply;
    const providerId = positiveId(request.params.provider) ?? 0;
    const provider = portal.identityProviders.includes(providerId)
      ? await core.idpSignIn.provider(providerId)
      : undefined;
    const context = { provider: providerId, name: provider?.display_name, portal, lang };
    if (!portal.methods.includes("idp") || !provider || provider.account_id !== portal.accountId)
      return refused(request, reply, new IdpRefusal("provider_off", "not offered by this portal"), context);
    try {
      const started = await core.idpSignIn.start(provider, { kind: "portal", portal, gateway: query, lang });
      setBrowserCookie(request, reply, started.browser);
      return h.send(reply, 200, goingPage(portal, lang, ASSETS, provider.display_name, started.url));
    } catch (error) {
      return refused(request, reply, error, context);
    }
  });

  /** Where a verified sign-in goes on: the portal's finish page, or the console's. */
  function onward(done: { purpose: string; portalId: number | null; providerId: number; finish: string }) {
    return done.purpose === "console"
      ? `/console/sso/${done.providerId}/finish/${done.finish}`
      : `/portal/${done.portalId}/idp/finish/${done.finish}`;
  }

  app.get<{ Params: { provider: string } }>("/idp/:provider/callback", async (request, reply) => {
    const providerId = positiveId(request.params.provider) ?? 0;
    const provider = await core.idpSignIn.provider(providerId);
    const context = { provider: providerId, name: provider?.display_name };
    if (provider?.kind !== "oidc")
      return refused(
        request,
        reply,
        new IdpRefusal("provider_off", "no such OpenID Connect provider"),
        context,
      );
    // The address as the IdP sent the browser to it: redirect_uri plus the IdP's parameters.
    const callback = new URL(core.idp.redirectUri(provider));
    callback.search = request.url.slice(request.url.indexOf("?") + 1 || request.url.length);
    try {
      return reply.redirect(onward(await core.idpSignIn.completeOidc(provider, callback)), 303);
    } catch (error) {
      return refused(request, reply, error, context);
    }
  });

  app.post<{ Params: { provider: string } }>(
    "/idp/:provider/acs",
    { bodyLimit: ACS_BODY_LIMIT },
    async (request, reply) => {
      const providerId = positiveId(request.params.provider) ?? 0;
      const provider = await core.idpSignIn.provider(providerId);
      const context = { provider: providerId, name: provider?.display_name };
      if (provider?.kind !== "saml")
        return refused(request, reply, new IdpRefusal("provider_off", "no such SAML provider"), context);
      const form = formOf(request);
      try {
        const done = await core.idpSignIn.completeSaml(
          provider,
          form.get("SAMLResponse") ?? "",
          form.get("RelayState") ?? "",
        );
        return reply.redirect(onward(done), 303);
      } catch (error) {
        return refused(request, reply, error, context);
      }
    },
  );

  app.get<{ Params: { provider: string } }>("/idp/:provider/metadata", async (request, reply) => {
    const provider = await core.idpSignIn.provider(positiveId(request.params.provider) ?? 0);
    if (provider?.kind !== "saml") return h.notFound(request, reply);
    return reply
      .type("application/samlmetadata+xml; charset=utf-8")
      .header("Cache-Control", "no-cache")
      .header("X-Content-Type-Options", "nosniff")
      .send(await core.idpSignIn.spMetadata(provider));
  });

  app.get<{ Params: { id: string; token: string } }>("/:id/idp/finish/:token", async (request, reply) => {
    const id = positiveId(request.params.id);
    const portal = id === undefined ? undefined : await core.portals.forGuests(id);
    if (!portal) return h.notFound(request, reply);
    const browser = readCookieValue(request.headers.cookie, IDP_COOKIE) ?? "";
    let lang = h.languageOf(request, portal);
    const context: { portal: GuestPortal; lang: PortalLanguage; provider?: number; name?: string } = {
      portal,
      lang,
    };
    try {
      const done = await core.idpSignIn.finish(portal.accountId, request.params.token, browser);
      lang = h.languageOf(request, portal, done.flow.lang);
      Object.assign(context, { lang, provider: done.provider.id, name: done.provider.display_name });
      if (done.flow.portal_id !== portal.id)
        throw new IdpRefusal("unknown_state", `the sign-in was started on portal ${done.flow.portal_id}`);
      const gateway = h.gatewayOf(request, portal, done.flow.gateway);
      if (!gateway) {
        const t = CATALOGUE[lang];
        return h.send(reply, 400, messagePage(lang, ASSETS, portal.title, t.noGateway, { portal }));
      }
      const credential = await core.idpSignIn.portalCredential(portal, done, gateway.clientMac);
      clearBrowserCookie(request, reply);
      return h.handOff(reply, portal, gateway, lang, "idp", { ...credential, providerId: done.provider.id });
    } catch (error) {
      return refused(request, reply, error, context);
    }
  });
}

function readCookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function cookieFlags(request: FastifyRequest): string {
  return `Path=/portal; HttpOnly; SameSite=Lax${request.protocol === "https" ? "; Secure" : ""}`;
}

function setBrowserCookie(request: FastifyRequest, reply: FastifyReply, value: string): void {
  reply.header("Set-Cookie", `${IDP_COOKIE}=${value}; Max-Age=600; ${cookieFlags(request)}`);
}

function clearBrowserCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("Set-Cookie", `${IDP_COOKIE}=; Max-Age=0; ${cookieFlags(request)}`);
}

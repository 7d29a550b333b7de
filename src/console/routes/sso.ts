// Console single sign-on (issue 26 point 4), beside the password login:
//   POST /console/sso                             the login page's single sign-on form (an email, its
//                                                 CSRF token as every login form's): the providers
//                                                 for that email (core/idp/console.ts); one starts
//                                                 at once, several are offered as buttons, none is a
//                                                 failed login of the address
//   POST /console/sso/<provider>                  one of those buttons (with the same email): starts
//                                                 the sign-in, sets the browser's cookie, a page that
//                                                 goes on to the IdP
//   GET  /console/sso/<provider>/finish/<token>   back from the IdP (the portal door's OIDC callback
//                                                 or SAML ACS sent the browser here): the console
//                                                 user the verified email names gets a session
// The login limits apply: a refused sign-in counts as a failed login of the address, and an
// address over its limit starts none. Every refusal is logged with its reason. An admin with a
// second factor (or in an account that requires one) goes on to it, as after a password
// (sign-in.ts): Wisp cannot tell whether the identity provider asked for one.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type IdpProblem, IdpRefusal } from "../../core/idp/rules.ts";
import { addressGroup } from "../../http/rate-limit.ts";
import type { ConsoleContext } from "../context.ts";
import { formOf, positiveId } from "../forms.ts";
import {
  clearSsoCookie,
  preSessionToken,
  readCookie,
  SESSION_COOKIE,
  SSO_COOKIE,
  setSessionCookie,
  setSsoCookie,
} from "../security.ts";
import { show } from "../views.ts";
import { LOGIN_ADDRESS_FAILURE_LIMIT, LOGIN_WINDOW_MS } from "./login-limits.ts";
import { startSignIn } from "./sign-in.ts";

/** What the person is told, by reason (the log line has the details). */
const REFUSALS: Record<IdpProblem, string> = {
  provider_off: "This identity provider does not log in to the console (any more).",
  unknown_state:
    "This log-in was already used, expired or did not start here. Start again from the login page.",
  browser_mismatch: "This log-in was started in another browser. Start again from the login page.",
  idp_error: "The identity provider did not log you in.",
  idp_unreachable: "The identity provider did not answer. Try again in a moment.",
  token_invalid: "The identity provider's answer could not be verified.",
  assertion_invalid: "The identity provider's answer could not be verified.",
  assertion_replayed: "This answer of the identity provider was already used.",
  no_subject: "The identity provider did not say who you are.",
  email_not_verified: "The identity provider vouched for no verified email address.",
  domain_not_allowed: "Your email domain may not log in through this provider.",
  user_refused: "This console user may not log in.",
  no_admin: "There is no console user of this account with your email address. Ask an administrator.",
};

const statusOf = (problem: IdpProblem) =>
  problem === "idp_unreachable" ? 502 : problem === "unknown_state" ? 410 : 403;

export async function ssoRoutes(app: FastifyInstance, { core, counters }: ConsoleContext): Promise<void> {
  const open = { config: { consolePublic: true } };
  const addressCounter = (request: FastifyRequest) => `console-login-address:${addressGroup(request.ip)}`;

  function refusedPage(request: FastifyRequest, reply: FastifyReply, error: unknown, providerId: number) {
    if (!(error instanceof IdpRefusal)) throw error;
    request.log.warn(
      { provider: providerId, reason: error.problem, detail: error.detail },
      `console single sign-on refused: ${error.problem}`,
    );
    return loginPage(request, reply, REFUSALS[error.problem], statusOf(error.problem));
  }

  async function loginPage(request: FastifyRequest, reply: FastifyReply, error: string, status: number) {
    const csrf = preSessionToken(request, reply);
    const sso = await core.consoleSso.offered();
    const values = { next: "/console" };
    return show(request, reply, "login", { title: "Log in", status, csrf }, { values, error, sso });
  }

  /** Whether the address is over the failed-login limit; counts nothing itself. */
  async function overLimit(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const name = addressCounter(request);
    const window = await counters.hit(name, LOGIN_WINDOW_MS).catch(() => null);
    if (!window) return false;
    await counters.release(name, LOGIN_WINDOW_MS, window.resetAt).catch(() => {});
    if (window.count <= LOGIN_ADDRESS_FAILURE_LIMIT) return false;
    reply.header("Retry-After", Math.max(1, Math.ceil((window.resetAt - counters.now()) / 1000)));
    return true;
  }

  const tooMany = (request: FastifyRequest, reply: FastifyReply) =>
    show(
      request,
      reply,
      "error",
      { title: "Too many attempts", status: 429 },
      { message: "Too many failed attempts from your address. Try again later." },
    );

  /** Starts the sign-in through one provider: the browser's cookie, a page going on to the IdP. */
  async function start(request: FastifyRequest, reply: FastifyReply, providerId: number) {
    const provider = await core.consoleSso.provider(providerId);
    if (!provider) throw new IdpRefusal("provider_off", "no such provider with console login");
    const started = await core.consoleSso.start(provider);
    setSsoCookie(request, reply, started.browser);
    // A page, not a redirect: the console's form-action 'self' would stop a redirect elsewhere.
    const name = provider.display_name;
    return show(
      request,
      reply,
      "sso-going",
      { title: `Log in through ${name}` },
      { name, url: started.url, refresh: `0;url=${started.url}` },
    );
  }

  app.post("/sso", open, async (request, reply) => {
    if (await overLimit(request, reply)) return tooMany(request, reply);
    const email = formOf(request).text("email");
    const providers = await core.consoleSso.providersFor(email);
    if (providers.length === 0) {
      // Counted like a wrong password: the form must not become a cheap way to probe addresses.
      await counters.hit(addressCounter(request), LOGIN_WINDOW_MS).catch(() => null);
      return loginPage(request, reply, "No single sign-on is set up for this email address.", 403);
    }
    try {
      if (providers.length === 1) return await start(request, reply, providers[0]!.id);
      const csrf = preSessionToken(request, reply);
      return show(request, reply, "sso-choose", { title: "Log in", csrf }, { email, providers });
    } catch (error) {
      return refusedPage(request, reply, error, providers[0]!.id);
    }
  });

  app.post<{ Params: { provider: string } }>("/sso/:provider", open, async (request, reply) => {
    const providerId = positiveId(request.params.provider) ?? 0;
    if (await overLimit(request, reply)) return tooMany(request, reply);
    try {
      // Only a provider offered for the email: an id alone names no other account's provider.
      const offered = await core.consoleSso.providersFor(formOf(request).text("email"));
      if (!offered.some((p) => p.id === providerId))
        throw new IdpRefusal("provider_off", `provider ${providerId} is not offered for this email`);
      return await start(request, reply, providerId);
    } catch (error) {
      return refusedPage(request, reply, error, providerId);
    }
  });

  app.get<{ Params: { provider: string; token: string } }>(
    "/sso/:provider/finish/:token",
    open,
    async (request, reply) => {
      const providerId = positiveId(request.params.provider) ?? 0;
      try {
        const browser = readCookie(request, SSO_COOKIE) ?? "";
        const signedIn = await core.consoleSso.finish(providerId, request.params.token, browser);
        request.log.info(
          {
            provider: providerId,
            admin: signedIn.session?.adminId,
            created: signedIn.created,
            secondFactor: signedIn.pending ?? null,
          },
          "console single sign-on",
        );
        clearSsoCookie(request, reply);
        // A second factor is due (or must be set up first): the same step as after a password.
        if (signedIn.pending) return startSignIn(request, reply, signedIn.token, signedIn.pending);
        // A session this browser had before is ended, not left behind.
        const previous = readCookie(request, SESSION_COOKIE);
        if (previous) await core.admins.logout(previous);
        setSessionCookie(request, reply, signedIn.token);
        return reply.redirect("/console", 303);
      } catch (error) {
        if (error instanceof IdpRefusal)
          await counters.hit(addressCounter(request), LOGIN_WINDOW_MS).catch(() => null);
        return refusedPage(request, reply, error, providerId);
      }
    },
  );
}

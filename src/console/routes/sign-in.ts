// The console sign-in's second step (issue 29 point 2), after a right password or an identity
// provider's word (core/admins/sign-in.ts keeps the state, named by the wisp_signin cookie):
//   GET  /console/login/second-factor             the admin's factors: TOTP code, recovery code, passkey
//   POST /console/login/second-factor/<method>    totp | recovery | passkey: the answer; a session
//   GET  /console/login/enrol                     the account requires a second factor and the admin
//                                                 has none: set one up (nothing else is reachable)
//   POST /console/login/enrol/<method>            totp | passkey: confirmed, then a session
//   POST /console/login/passkey                   a passkey alone (no password): its page
//   POST /console/login/passkey/finish            the passkey's answer; a session
//   POST /console/login/cancel                    back to the login page
// Wrong answers count as failed logins of the email and address (login-limits.ts), and a sign-in
// ends after a few of them. Every form here carries the pre-login CSRF token, as the login form.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PasskeyRefusedError } from "../../core/admins/second-factors.ts";
import type { ConsoleSession } from "../../core/admins/service.ts";
import { type SignIn, SignInGoneError, type SignInStage } from "../../core/admins/sign-in.ts";
import { AppError, ValidationError } from "../../core/shared/errors.ts";
import { addressGroup } from "../../http/rate-limit.ts";
import type { ConsoleContext } from "../context.ts";
import { formOf } from "../forms.ts";
import {
  clearSignInCookie,
  preSessionToken,
  readCookie,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  setSessionCookie,
  setSignInCookie,
} from "../security.ts";
import { keepRecoveryCodes, optionsJson, totpSetupView } from "../two-factor-view.ts";
import { fieldErrors, show, webauthnScripts } from "../views.ts";
import { loginLimiter } from "./login-limits.ts";

/** After a first factor that did not open a session: the sign-in's cookie, and its page. */
export function startSignIn(request: FastifyRequest, reply: FastifyReply, token: string, stage: SignInStage) {
  setSignInCookie(request, reply, token);
  return reply.redirect(stage === "enrol" ? "/console/login/enrol" : "/console/login/second-factor", 303);
}

/** Refusals of an answer (wrong, used, not this admin's): the page again, with the reason. */
const isRefusal = (error: unknown): error is AppError =>
  error instanceof AppError && [401, 403, 409].includes(error.status) && !(error instanceof SignInGoneError);

export async function signInRoutes(app: FastifyInstance, { core, counters }: ConsoleContext): Promise<void> {
  const open = { config: { consolePublic: true } };
  const { attempt, loginLimits, addressLimits, tooMany } = loginLimiter(counters);
  const flow = core.admins.signIns;

  async function current(request: FastifyRequest): Promise<SignIn | null> {
    const token = readCookie(request, SIGN_IN_COOKIE);
    return token ? flow.find(token) : null;
  }

  function gone(request: FastifyRequest, reply: FastifyReply, message = new SignInGoneError().message) {
    clearSignInCookie(request, reply);
    return show(request, reply, "error", { title: "Log in again", status: 401 }, { message, login: true });
  }

  /** The session is made: this browser's old one ends, and the new recovery codes are shown once. */
  async function enter(
    request: FastifyRequest,
    reply: FastifyReply,
    opened: { token: string; session: ConsoleSession },
    next: string,
    recoveryCodes: string[] | null = null,
  ) {
    const previous = readCookie(request, SESSION_COOKIE);
    if (previous) await core.admins.logout(previous);
    clearSignInCookie(request, reply);
    setSessionCookie(request, reply, opened.token);
    if (!recoveryCodes) return reply.redirect(next, 303);
    await keepRecoveryCodes(core, opened.session, recoveryCodes);
    return reply.redirect(`/console/security/recovery-codes?next=${encodeURIComponent(next)}`, 303);
  }

  async function secondFactorPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signIn: SignIn,
    error = "",
    status = 200,
  ) {
    const choices = await flow.secondFactorChoices(signIn);
    const csrf = preSessionToken(request, reply);
    return show(
      request,
      reply,
      "second-factor",
      { title: "Second factor", status, csrf },
      {
        email: signIn.who?.email,
        choices,
        options: choices.passkey ? optionsJson(choices.passkey) : "",
        error,
        scripts: choices.passkey ? webauthnScripts() : [],
      },
    );
  }

  app.get("/login/second-factor", open, async (request, reply) => {
    const signIn = await current(request);
    if (signIn?.row.stage !== "second-factor") return reply.redirect("/console/login", 303);
    return secondFactorPage(request, reply, signIn);
  });

  app.post<{ Params: { method: string } }>("/login/second-factor/:method", open, async (request, reply) => {
    const signIn = await current(request);
    if (signIn?.row.stage !== "second-factor" || !signIn.who) return gone(request, reply);
    const form = formOf(request);
    const counted = await attempt(loginLimits(addressGroup(request.ip), signIn.who.email));
    if (counted.wait !== null) return tooMany(request, reply, counted.wait);
    const answer = {
      totp: () => flow.withTotp(signIn, form.text("code")),
      recovery: () => flow.withRecoveryCode(signIn, form.text("code")),
      passkey: () => flow.withPasskey(signIn, form.raw("credential")),
    }[request.params.method];
    if (!answer) {
      await counted.release();
      return reply.callNotFound();
    }
    try {
      const opened = await answer();
      await counted.release();
      return enter(request, reply, opened, signIn.row.next);
    } catch (error) {
      if (error instanceof SignInGoneError) return gone(request, reply, error.message);
      if (!isRefusal(error)) {
        await counted.release();
        throw error;
      }
      return secondFactorPage(request, reply, signIn, error.message, error.status);
    }
  });

  async function enrolPage(
    request: FastifyRequest,
    reply: FastifyReply,
    signIn: SignIn,
    errors: Record<string, string> = {},
    status = 200,
  ) {
    const enrolment = await flow.enrolment(signIn);
    const csrf = preSessionToken(request, reply);
    return show(
      request,
      reply,
      "enrol",
      { title: "Set up a second factor", status, csrf },
      {
        email: signIn.who?.email,
        totp: await totpSetupView(enrolment.totp),
        options: optionsJson(enrolment.passkey),
        action: "/console/login/enrol",
        errors,
        scripts: webauthnScripts(),
      },
    );
  }

  app.get("/login/enrol", open, async (request, reply) => {
    const signIn = await current(request);
    if (signIn?.row.stage !== "enrol") return reply.redirect("/console/login", 303);
    return enrolPage(request, reply, signIn);
  });

  app.post<{ Params: { method: string } }>("/login/enrol/:method", open, async (request, reply) => {
    const signIn = await current(request);
    if (signIn?.row.stage !== "enrol") return gone(request, reply);
    const form = formOf(request);
    try {
      if (request.params.method === "totp") {
        const done = await flow.enrolTotp(signIn, form.text("code"));
        return enter(request, reply, done, signIn.row.next, done.recoveryCodes);
      }
      if (request.params.method === "passkey") {
        const done = await flow.enrolPasskey(signIn, form.raw("credential"), form.text("name"));
        return enter(request, reply, done, signIn.row.next, done.recoveryCodes);
      }
      return reply.callNotFound();
    } catch (error) {
      if (error instanceof SignInGoneError) return gone(request, reply, error.message);
      if (error instanceof ValidationError)
        return enrolPage(request, reply, signIn, fieldErrors(error.details), 400);
      if (isRefusal(error))
        return enrolPage(request, reply, signIn, { passkey: error.message }, error.status);
      throw error;
    }
  });

  app.post("/login/passkey", open, async (request, reply) => {
    // An address over its failed-login limit starts no passkey sign-in (nor keeps a row for one).
    const counted = await attempt(addressLimits(addressGroup(request.ip)));
    if (counted.wait !== null) return tooMany(request, reply, counted.wait);
    await counted.release();
    const next = "/console";
    const { token, options } = await flow.startPasskey(next);
    setSignInCookie(request, reply, token);
    const csrf = preSessionToken(request, reply);
    return show(
      request,
      reply,
      "passkey-signin",
      { title: "Log in with a passkey", csrf },
      { options: optionsJson(options), error: "", scripts: webauthnScripts() },
    );
  });

  app.post("/login/passkey/finish", open, async (request, reply) => {
    const signIn = await current(request);
    if (signIn?.row.stage !== "passkey") return gone(request, reply);
    const counted = await attempt(addressLimits(addressGroup(request.ip)));
    if (counted.wait !== null) return tooMany(request, reply, counted.wait);
    try {
      const opened = await flow.finishPasskey(signIn, formOf(request).raw("credential"));
      await counted.release();
      return enter(request, reply, opened, signIn.row.next);
    } catch (error) {
      // Only a passkey that did not prove anyone counts as a failure of the address.
      if (!(error instanceof PasskeyRefusedError)) await counted.release();
      if (error instanceof SignInGoneError) return gone(request, reply, error.message);
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      const csrf = preSessionToken(request, reply);
      return show(
        request,
        reply,
        "passkey-signin",
        { title: "Log in with a passkey", status: error.status, csrf },
        { options: "", error: error.message, scripts: [] },
      );
    }
  });

  app.post("/login/cancel", open, async (request, reply) => {
    clearSignInCookie(request, reply);
    return reply.redirect("/console/login", 303);
  });
}

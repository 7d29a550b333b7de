// First-run setup, login and logout. Failed logins count per console user's email and client
// address (IPv6 by /64) together, and per address alone; setup attempts per address. Each attempt
// is counted in one atomic step before the password is checked, so of any burst exactly the limit
// get a check and the rest a 429 page until the window ends; an attempt that succeeds, or that is
// refused before its check, takes its counts back. A guesser locks out only their own address: the
// same user logs in from anywhere else. The checks themselves (scrypt, 128 MiB each) wait their
// turn in the core's password work queue (src/core/admins/password-work.ts), which names the
// address as the client; past the queue the login page answers 429 with Retry-After.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PasswordLoginOffError } from "../../core/admins/service.ts";
import { ConflictError, TooManyRequestsError, ValidationError } from "../../core/shared/errors.ts";
import { addressGroup } from "../../http/rate-limit.ts";
import type { ConsoleContext } from "../context.ts";
import { formOf } from "../forms.ts";
import {
  clearSessionCookie,
  preSessionToken,
  readCookie,
  SESSION_COOKIE,
  setSessionCookie,
} from "../security.ts";
import { type FieldErrors, fieldErrors, show } from "../views.ts";
import { loginLimiter } from "./login-limits.ts";
import { startSignIn } from "./sign-in.ts";

export { LOGIN_ADDRESS_FAILURE_LIMIT, LOGIN_FAILURE_LIMIT, LOGIN_WINDOW_MS } from "./login-limits.ts";

/** A console path to return to after login; anything else (other hosts, odd paths) is the home page. */
export function safeNext(text: string): string {
  const ok = /^\/console(\/[A-Za-z0-9/_.?=&%-]*)?$/.test(text) && !text.includes("//");
  return ok && !text.startsWith("/console/login") && !text.startsWith("/console/setup") ? text : "/console";
}

export async function authRoutes(app: FastifyInstance, { core, counters }: ConsoleContext): Promise<void> {
  const open = { config: { consolePublic: true } };
  const { attempt, loginLimits, setupLimits, tooMany } = loginLimiter(counters);

  function setupPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: { email?: string },
    errors: FieldErrors = {},
    status = 200,
  ) {
    const csrf = preSessionToken(request, reply);
    return show(request, reply, "setup", { title: "Set up the console", status, csrf }, { values, errors });
  }

  async function loginPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: { email?: string; next: string },
    error = "",
    status = 200,
  ) {
    const csrf = preSessionToken(request, reply);
    const sso = await core.consoleSso.offered();
    return show(request, reply, "login", { title: "Log in", status, csrf }, { values, error, sso });
  }

  app.get("/setup", open, async (request, reply) => {
    if (await core.admins.exist()) return reply.redirect("/console/login", 303);
    return setupPage(request, reply, {});
  });

  app.post("/setup", open, async (request, reply) => {
    if (await core.admins.exist()) return reply.redirect("/console/login", 303);
    const form = formOf(request);
    const values = { email: form.text("email") };
    const password = form.raw("password");
    if (password !== form.raw("password_confirm")) {
      return setupPage(request, reply, values, { password_confirm: "does not match the password" }, 400);
    }
    // Only a wrong code stays counted.
    const address = addressGroup(request.ip);
    const counted = await attempt(setupLimits(address));
    if (counted.wait !== null) return tooMany(request, reply, counted.wait);
    try {
      await core.admins.setup({ code: form.text("code"), email: values.email, password }, address);
    } catch (error) {
      const errors = error instanceof ValidationError ? fieldErrors(error.details) : {};
      if (!errors.code) await counted.release();
      if (error instanceof ConflictError) return reply.redirect("/console/login", 303);
      if (!(error instanceof ValidationError)) throw error;
      return setupPage(request, reply, values, errors, 400);
    }
    await counted.release();
    // A busy password queue: the user exists, they log in on the next page.
    const login = await core.admins.login(values.email, password, address).catch((error) => {
      if (error instanceof TooManyRequestsError) return null;
      throw error;
    });
    if (!login?.session) return reply.redirect("/console/login?notice=setup-done", 303);
    setSessionCookie(request, reply, login.token);
    return reply.redirect("/console", 303);
  });

  app.get<{ Querystring: { next?: string } }>("/login", open, async (request, reply) => {
    if (!(await core.admins.exist())) return reply.redirect("/console/setup", 303);
    const next = safeNext(request.query.next ?? "");
    if (request.consoleSession) return reply.redirect(next, 303);
    return loginPage(request, reply, { next });
  });

  app.post("/login", open, async (request, reply) => {
    const form = formOf(request);
    const values = { email: form.text("email"), next: safeNext(form.text("next")) };
    const address = addressGroup(request.ip);
    const counted = await attempt(loginLimits(address, values.email));
    if (counted.wait !== null) return tooMany(request, reply, counted.wait);
    const login = await core.admins
      .login(values.email, form.raw("password"), address, values.next)
      .catch(async (error) => {
        await counted.release(); // never checked, or right (password login is off)
        if (!(error instanceof TooManyRequestsError || error instanceof PasswordLoginOffError)) throw error;
        return error;
      });
    if (login instanceof PasswordLoginOffError)
      return loginPage(
        request,
        reply,
        values,
        "Password login is turned off for your account: log in through single sign-on below.",
        403,
      );
    if (login instanceof TooManyRequestsError) {
      reply.header("Retry-After", login.retryAfterSeconds);
      const wait = `${login.retryAfterSeconds} second${login.retryAfterSeconds === 1 ? "" : "s"}`;
      const busy = `The server is busy checking other logins. Try again in ${wait}.`;
      return loginPage(request, reply, values, busy, 429);
    }
    if (!login) return loginPage(request, reply, values, "Wrong email or password.", 401);
    await counted.release();
    if (login.pending) return startSignIn(request, reply, login.token, login.pending);
    // A session this browser had before is ended, not left behind.
    const previous = readCookie(request, SESSION_COOKIE);
    if (previous) await core.admins.logout(previous);
    setSessionCookie(request, reply, login.token);
    return reply.redirect(values.next, 303);
  });

  app.post("/logout", { config: { consolePermission: "self" } }, async (request, reply) => {
    const token = readCookie(request, SESSION_COOKIE);
    if (token) await core.admins.logout(token);
    clearSessionCookie(request, reply);
    return reply.redirect("/console/login?notice=logged-out", 303);
  });
}

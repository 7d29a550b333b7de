// First-run setup, login and logout. Login attempts count per console user's email and client
// address (IPv6 by /64) together; setup attempts per address. Each attempt is counted in one atomic
// step before the password is checked, so of any burst exactly 10 in 15 minutes get a check and the
// rest a 429 page until the window ends; an attempt that succeeds takes its count back. A guesser
// locks out only their own address: the same user logs in from anywhere else.
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { normalizeEmail } from "../../core/admins/rules.ts";
import { ConflictError, ValidationError } from "../../core/shared/errors.ts";
import { addressGroup, type WindowCount } from "../../http/rate-limit.ts";
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

export const LOGIN_WINDOW_MS = 15 * 60_000;
export const LOGIN_FAILURE_LIMIT = 10;

/** A console path to return to after login; anything else (other hosts, odd paths) is the home page. */
function safeNext(text: string): string {
  const ok = /^\/console(\/[A-Za-z0-9/_.?=&%-]*)?$/.test(text) && !text.includes("//");
  return ok && !text.startsWith("/console/login") && !text.startsWith("/console/setup") ? text : "/console";
}

export async function authRoutes(app: FastifyInstance, { core, counters }: ConsoleContext): Promise<void> {
  const open = { config: { consolePublic: true } };
  /** The email is hashed: counter names (Redis keys) carry no addresses of people. */
  const loginCounter = (request: FastifyRequest, email: string) =>
    `console-login:${createHash("sha256").update(normalizeEmail(email)).digest("hex").slice(0, 32)}:` +
    addressGroup(request.ip);
  const setupCounter = (request: FastifyRequest) => `console-setup:${addressGroup(request.ip)}`;

  interface Attempt {
    /** Seconds to wait when this attempt is over the limit; null when it may go on. */
    wait: number | null;
    /** Takes the attempt back from the count (it was not a failure). */
    release(): Promise<void>;
  }

  /** Counts an attempt before its work. A store that fails counts nothing (Redis falls back itself). */
  async function attempt(name: string): Promise<Attempt> {
    const window: WindowCount | null = await counters.hit(name, LOGIN_WINDOW_MS).catch(() => null);
    if (!window) return { wait: null, release: async () => {} };
    const over = window.count > LOGIN_FAILURE_LIMIT;
    return {
      wait: over ? Math.max(1, Math.ceil((window.resetAt - Date.now()) / 1000)) : null,
      release: () => counters.release(name, LOGIN_WINDOW_MS, window.resetAt).catch(() => {}),
    };
  }

  function tooMany(request: FastifyRequest, reply: FastifyReply, wait: number) {
    reply.header("Retry-After", wait);
    const minutes = Math.ceil(wait / 60);
    return show(
      request,
      reply,
      "error",
      { title: "Too many attempts", status: 429 },
      {
        message:
          `Too many failed attempts from your address. Try again in ${minutes} minute` +
          `${minutes === 1 ? "" : "s"}.`,
      },
    );
  }

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

  function loginPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: { email?: string; next: string },
    error = "",
    status = 200,
  ) {
    const csrf = preSessionToken(request, reply);
    return show(request, reply, "login", { title: "Log in", status, csrf }, { values, error });
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
    const counted = await attempt(setupCounter(request));
    if (counted.wait !== null) return tooMany(request, reply, counted.wait);
    try {
      await core.admins.setup({ code: form.text("code"), email: values.email, password });
    } catch (error) {
      const errors = error instanceof ValidationError ? fieldErrors(error.details) : {};
      if (!errors.code) await counted.release();
      if (error instanceof ConflictError) return reply.redirect("/console/login", 303);
      if (!(error instanceof ValidationError)) throw error;
      return setupPage(request, reply, values, errors, 400);
    }
    await counted.release();
    const login = await core.admins.login(values.email, password);
    if (!login) return reply.redirect("/console/login?notice=setup-done", 303);
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
    const counted = await attempt(loginCounter(request, values.email));
    if (counted.wait !== null) return tooMany(request, reply, counted.wait);
    const login = await core.admins.login(values.email, form.raw("password"));
    if (!login) return loginPage(request, reply, values, "Wrong email or password.", 401);
    await counted.release();
    // A session this browser had before is ended, not left behind.
    const previous = readCookie(request, SESSION_COOKIE);
    if (previous) await core.admins.logout(previous);
    setSessionCookie(request, reply, login.token);
    return reply.redirect(values.next, 303);
  });

  app.post("/logout", async (request, reply) => {
    const token = readCookie(request, SESSION_COOKIE);
    if (token) await core.admins.logout(token);
    clearSessionCookie(request, reply);
    return reply.redirect("/console/login?notice=logged-out", 303);
  });
}

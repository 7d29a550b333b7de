// First-run setup, login and logout. Failed logins and wrong setup codes count against the
// client's address: 10 in 15 minutes and that address gets a 429 page until the window ends.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ConflictError, ValidationError } from "../../core/shared/errors.ts";
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
  const counterName = (request: FastifyRequest) => `console-login:${request.ip}`;

  /** Seconds to wait when the address is over its failure limit; null when it may try. */
  async function blocked(request: FastifyRequest): Promise<number | null> {
    try {
      const window = await counters.peek(counterName(request), LOGIN_WINDOW_MS);
      if (window.count < LOGIN_FAILURE_LIMIT) return null;
      return Math.max(1, Math.ceil((window.resetAt - Date.now()) / 1000));
    } catch (error) {
      request.log.warn({ err: error }, "rate-limit store unavailable; console login not limited");
      return null;
    }
  }

  async function failed(request: FastifyRequest): Promise<void> {
    await counters.hit(counterName(request), LOGIN_WINDOW_MS).catch(() => {});
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
    const wait = await blocked(request);
    if (wait !== null) return tooMany(request, reply, wait);
    const form = formOf(request);
    const values = { email: form.text("email") };
    const password = form.raw("password");
    if (password !== form.raw("password_confirm")) {
      return setupPage(request, reply, values, { password_confirm: "does not match the password" }, 400);
    }
    try {
      await core.admins.setup({ code: form.text("code"), email: values.email, password });
    } catch (error) {
      if (error instanceof ConflictError) return reply.redirect("/console/login", 303);
      if (!(error instanceof ValidationError)) throw error;
      const errors = fieldErrors(error.details);
      if (errors.code) await failed(request);
      return setupPage(request, reply, values, errors, 400);
    }
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
    const wait = await blocked(request);
    if (wait !== null) return tooMany(request, reply, wait);
    const form = formOf(request);
    const values = { email: form.text("email"), next: safeNext(form.text("next")) };
    const login = await core.admins.login(values.email, form.raw("password"));
    if (!login) {
      await failed(request);
      return loginPage(request, reply, values, "Wrong email or password.", 401);
    }
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

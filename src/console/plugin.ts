// The console door: server-rendered pages under /console for the operators of an account. Forms
// are translated to service calls and the answers (or the services' field errors) back into pages.
// Session cookies, CSRF tokens and security headers are handled here, for every console route.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { roleLabel } from "../core/admins/roles.ts";
import { sameSecret } from "../core/admins/service.ts";
import { type Actor, withActor } from "../core/audit/context.ts";
import { AppError, TooManyRequestsError } from "../core/shared/errors.ts";
import { BUSY_RETRY_AFTER_S, isDatabaseBusy } from "../db/sqlite-writer.ts";
import type { ConsoleContext } from "./context.ts";
import { formOf, registerFormParser } from "./forms.ts";
import { accessPointRoutes } from "./routes/access-points.ts";
import { accountRoutes } from "./routes/account.ts";
import { auditRoutes } from "./routes/audit.ts";
import { authRoutes } from "./routes/auth.ts";
import { deviceRoutes } from "./routes/devices.ts";
import { directoryRoutes } from "./routes/directories.ts";
import { eapRoutes } from "./routes/eap.ts";
import { groupRoutes } from "./routes/groups.ts";
import { guestRoutes } from "./routes/guests.ts";
import { homeRoutes } from "./routes/home.ts";
import { identityProviderRoutes } from "./routes/identity-providers.ts";
import { keyRoutes } from "./routes/keys.ts";
import { networkRoutes } from "./routes/networks.ts";
import { planRoutes } from "./routes/plans.ts";
import { policyRoutes } from "./routes/policies.ts";
import { portalRoutes } from "./routes/portals.ts";
import { reportRoutes } from "./routes/reports.ts";
import { securityRoutes } from "./routes/security.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { signInRoutes } from "./routes/sign-in.ts";
import { ssoRoutes } from "./routes/sso.ts";
import { staticRoutes } from "./routes/static.ts";
import { teamRoutes } from "./routes/team.ts";
import { userRoutes } from "./routes/users.ts";
import { voucherRoutes } from "./routes/vouchers.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import {
  CSRF_COOKIE,
  httpsOnly,
  readCookie,
  SESSION_COOKIE,
  setHttpsOnly,
  setSecurityHeaders,
} from "./security.ts";
import { show } from "./views.ts";

export type ConsoleOptions = ConsoleContext & {
  /** PUBLIC_URL: when https, the console is HTTPS only (Secure cookies, HSTS). */
  publicUrl?: string | undefined;
};

/** Where to go back to after login: a console path of this server, nothing else. */
function nextPath(request: FastifyRequest): string {
  const url = request.url;
  return /^\/console(\/[^\\]*)?$/.test(url) && !url.includes("//") ? url : "/console";
}

function renderError(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  const titles: Record<number, string> = {
    400: "That did not work",
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    415: "Unsupported form",
    429: "Too many attempts",
    503: "Busy",
  };
  return show(
    request,
    reply,
    "error",
    { title: titles[status] ?? "Something went wrong", status },
    { message },
  );
}

/**
 * The audit log's actor of a console request: the admin and their role (core/admins/roles.ts),
 * from the address after trusted proxies. Nobody signed in yet (setup, sign-in
 * through a provider): an admin actor without id.
 */
function adminActor(request: FastifyRequest): Actor {
  const session = request.consoleSession;
  if (!session) return { type: "admin", id: "", name: "", role: "", address: request.ip };
  return {
    type: "admin",
    id: String(session.adminId),
    name: session.email,
    role: session.role,
    address: request.ip,
  };
}

export async function consolePlugin(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const { core } = options;
  app.decorateRequest("consoleSession", null);
  setHttpsOnly(app, httpsOnly(options.publicUrl));
  registerFormParser(app);
  // Console pages are not part of the API document. A route that declares neither the permission
  // it needs nor that it is public stops the start: no page is open to every role by omission.
  // Every change a page makes is audited as the signed-in admin's, with the role (core/audit/context.ts).
  app.addHook("onRoute", (route) => {
    route.schema = { ...route.schema, hide: true };
    const config = route.config as { consolePublic?: boolean; consolePermission?: string } | undefined;
    if (config?.consolePublic !== true && !config?.consolePermission) {
      throw new Error(`console route ${String(route.method)} ${route.url} declares no consolePermission`);
    }
    route.handler = withActor(route.handler, adminActor);
  });

  app.addHook("onRequest", async (request) => {
    if (request.routeOptions.config.consolePublic && request.url.startsWith("/console/static/")) return;
    const token = readCookie(request, SESSION_COOKIE);
    if (token) {
      const seen = { userAgent: request.headers["user-agent"], address: request.ip };
      request.consoleSession = await core.admins.authenticate(token, seen);
    }
  });

  app.addHook("preHandler", async (request, reply) => {
    const open = request.routeOptions.config.consolePublic === true;
    if (request.method === "POST") {
      // Public forms (setup, login) carry the double-submit token; everything else the session's.
      const expected = open ? readCookie(request, CSRF_COOKIE) : request.consoleSession?.csrfToken;
      const given = formOf(request).raw("_csrf");
      if (!expected || !given || !sameSecret(given, expected)) {
        return renderError(
          request,
          reply,
          403,
          "This form was out of date or did not come from this console (its security token did not " +
            "match). Go back, reload the page and try again.",
        );
      }
    }
    if (open) return;
    const session = request.consoleSession;
    if (session) {
      // The role was read with this request's session: a change made a moment ago counts here.
      // Undeclared: the not-found handler (every route declares one; see onRoute).
      const needed = request.routeOptions.config.consolePermission;
      if (needed === undefined || needed === "self" || session.can(needed)) return;
      return renderError(
        request,
        reply,
        403,
        `Your role (${roleLabel(session.role)}) does not allow this: it needs the ${needed} ` +
          "permission. An owner of the account can change your role.",
      );
    }
    if (!(await core.admins.exist())) return reply.redirect("/console/setup", 303);
    const next = request.method === "GET" ? nextPath(request) : "/console";
    return reply.redirect(`/console/login?next=${encodeURIComponent(next)}`, 303);
  });

  app.addHook("onSend", async (request, reply, payload) => {
    setSecurityHeaders(
      request,
      reply,
      request.routeOptions.config.consoleFramed === true && reply.statusCode === 200,
    );
    return payload;
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof TooManyRequestsError) reply.header("Retry-After", error.retryAfterSeconds);
    if (error instanceof AppError) return renderError(request, reply, error.status, error.message);
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return renderError(request, reply, status, error.message);
    if (isDatabaseBusy(error)) {
      request.log.warn("the database stayed locked by another process; answered 503");
      reply.header("Retry-After", String(BUSY_RETRY_AFTER_S));
      return renderError(
        request,
        reply,
        503,
        "The database is busy for a moment. Nothing was saved; try again.",
      );
    }
    request.log.error({ err: error }, "console error");
    return renderError(request, reply, 500, "Something went wrong on the server. It has been logged.");
  });
  app.setNotFoundHandler((request, reply) =>
    renderError(request, reply, 404, "There is no console page at this address."),
  );

  const setupCode = await core.admins.issueSetupCode();
  if (setupCode) {
    const hint = "open /console and enter this code to create the first console user (single use)";
    app.log.warn({ hint }, `console setup code: ${setupCode}`);
  }

  const context: ConsoleContext = { core, counters: options.counters };
  await app.register(staticRoutes);
  await app.register(authRoutes, context);
  await app.register(signInRoutes, context);
  await app.register(securityRoutes, context);
  await app.register(homeRoutes, context);
  await app.register(accessPointRoutes, context);
  await app.register(auditRoutes, context);
  await app.register(keyRoutes, context);
  await app.register(networkRoutes, context);
  await app.register(eapRoutes, context);
  await app.register(portalRoutes, context);
  await app.register(guestRoutes, context);
  await app.register(userRoutes, context);
  await app.register(groupRoutes, context);
  await app.register(voucherRoutes, context);
  await app.register(deviceRoutes, context);
  await app.register(policyRoutes, context);
  await app.register(planRoutes, context);
  await app.register(directoryRoutes, context);
  await app.register(reportRoutes, context);
  await app.register(webhookRoutes, context);
  await app.register(sessionRoutes, context);
  await app.register(identityProviderRoutes, context);
  await app.register(ssoRoutes, context);
  await app.register(teamRoutes, context);
  await app.register(accountRoutes, context);
}

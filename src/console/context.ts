// What every console page module gets, and who is logged in to the request it answers.
import type { ConsoleSession } from "../core/admins/service.ts";
import type { Core } from "../core/index.ts";
import type { Permission } from "../core/keys/permissions.ts";
import { AppError } from "../core/shared/errors.ts";
import type { CounterStore } from "../http/rate-limit.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Who is logged in to the console; null when nobody is (or outside /console). */
    consoleSession: ConsoleSession | null;
  }
  interface FastifyContextConfig {
    /** Console routes open without a session (setup, login, static files). */
    consolePublic?: boolean;
    /**
     * What a signed-in admin's role must hold for this route: a permission of API keys' names, or
     * "self" (the admin's own things: the overview, their sessions, logging out). Every console
     * route declares this or consolePublic; the plugin refuses to register one that does neither.
     */
    consolePermission?: ConsolePermission;
    /** A page the console shows in its own iframe (the portal preview): framable by the console only. */
    consoleFramed?: boolean;
  }
}

export type ConsolePermission = Permission | "self";

/** Route options declaring the permission a console route needs, e.g. need("users:write"). */
export function need(permission: ConsolePermission) {
  return { config: { consolePermission: permission } };
}

export interface ConsoleContext {
  core: Core;
  /** Shared with the API's rate limits: failed console logins are counted per address here. */
  counters: CounterStore;
}

/** The request's session; the plugin's guard has already sent anyone without one to the login page. */
export function sessionOf(request: { consoleSession: ConsoleSession | null }): ConsoleSession {
  const session = request.consoleSession;
  if (!session) throw new AppError(401, "log in first");
  return session;
}

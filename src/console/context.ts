// What every console page module gets, and who is logged in to the request it answers.
import type { ConsoleSession } from "../core/admins/service.ts";
import type { Core } from "../core/index.ts";
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
    /** A page the console shows in its own iframe (the portal preview): framable by the console only. */
    consoleFramed?: boolean;
  }
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

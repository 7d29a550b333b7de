// The key pipeline every /api request passes: header -> key lookup (revocation) -> IP allow-list
// -> rate limit -> content type -> permission. Failures answer in the common error shape.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Action, Resource } from "../core/keys/permissions.ts";
import type { KeyPrincipal, KeysService } from "../core/keys/service.ts";
import { sendError } from "./errors.ts";
import type { CounterStore, WindowCount } from "./rate-limit.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal: KeyPrincipal;
  }
  interface FastifyContextConfig {
    /** The permission a route needs; routes without one are public (health, docs). */
    permission?: [Resource, Action];
  }
}

export interface AuthOptions {
  keys: KeysService;
  counters: CounterStore;
  defaultRateLimit: number;
  authFailureLimit: number;
}

const WINDOW_MS = 60_000;
const BEARER = /^bearer +([^\s]+) *$/i;
const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

function setLimitHeaders(reply: FastifyReply, limit: number, window: WindowCount): number {
  const secondsLeft = Math.max(1, Math.ceil((window.resetAt - Date.now()) / 1000));
  const remaining = Math.max(0, limit - window.count);
  reply.header("X-RateLimit-Limit", limit);
  reply.header("X-RateLimit-Remaining", remaining);
  reply.header("X-RateLimit-Reset", Math.ceil(window.resetAt / 1000));
  reply.header("RateLimit-Policy", `"default";q=${limit};w=${WINDOW_MS / 1000}`);
  reply.header("RateLimit", `"default";r=${remaining};t=${secondsLeft}`);
  return secondsLeft;
}

/** A counter store that fails (Redis down) must not take the API down with it: count nothing. */
async function count(request: FastifyRequest, counters: CounterStore, op: "hit" | "peek", name: string) {
  try {
    return await counters[op](name, WINDOW_MS);
  } catch (error) {
    request.log.warn({ err: error }, "rate-limit store unavailable; request not counted");
    return null;
  }
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  const { keys, counters, defaultRateLimit, authFailureLimit } = options;

  async function refuse(request: FastifyRequest, reply: FastifyReply, message: string) {
    // Failed authentications count against the address, so keys cannot be guessed at speed.
    await count(request, counters, "hit", `authfail:${request.ip}`);
    reply.header("WWW-Authenticate", 'Bearer realm="wisp"');
    return sendError(reply, 401, message);
  }

  app.addHook("onRequest", async (request, reply) => {
    const permission = request.routeOptions.config.permission;
    if (!permission) return;

    const failures = await count(request, counters, "peek", `authfail:${request.ip}`);
    if (failures && failures.count >= authFailureLimit) {
      const wait = Math.max(1, Math.ceil((failures.resetAt - Date.now()) / 1000));
      reply.header("Retry-After", wait);
      return sendError(reply, 429, `too many failed authentications from this address; retry in ${wait} s`);
    }

    const header = request.headers.authorization;
    if (header === undefined)
      return refuse(request, reply, "missing Authorization header; send Authorization: Bearer <API key>");
    const match = BEARER.exec(header);
    if (!match) return refuse(request, reply, "the Authorization header must be 'Bearer <API key>'");
    const principal = await keys.verify(match[1]!);
    if (!principal) return refuse(request, reply, "invalid or revoked API key");
    request.principal = principal;

    if (!principal.allowsIp(request.ip)) {
      return sendError(reply, 403, `this API key may not be used from ${request.ip}`);
    }

    const limit = principal.rateLimit ?? defaultRateLimit;
    const window = await count(request, counters, "hit", `key:${principal.keyId}`);
    if (window) {
      const secondsLeft = setLimitHeaders(reply, limit, window);
      if (window.count > limit) {
        reply.header("Retry-After", secondsLeft);
        return sendError(
          reply,
          429,
          `rate limit of ${limit} requests per minute exceeded; retry in ${secondsLeft} s`,
        );
      }
    }

    if (BODY_METHODS.has(request.method) && !JSON_TYPE.test(request.headers["content-type"] ?? "")) {
      return sendError(reply, 415, "send the body as Content-Type: application/json;charset=utf-8");
    }

    const [resource, action] = permission;
    if (!principal.can(resource, action)) {
      return sendError(reply, 403, `this API key lacks the ${resource}:${action} permission`);
    }
  });
}

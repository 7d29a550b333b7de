// The key pipeline every /api request passes: header -> key lookup (revocation) -> IP allow-list
// -> rate limit -> content type -> permission. Failures answer in the common error shape.
// It runs on every API request, so the usual path (a known key, counters in memory) takes no
// promise; stores and lookups that need I/O are awaited. The requests of one turn of the event
// loop share one check that the known keys are still valid (KeysService.verifyQueued).
//
// A valid key is checked first and on its own: failed authentications from its address (other
// clients behind the same NAT or proxy) never refuse it. Each failure (no key, malformed, unknown
// or revoked) adds one to its address's counter (IPv6 by /64) in one atomic step, and that count
// decides the answer: up to the limit 401, past it 429. A burst of N failures from one address
// gets exactly the limit of 401s, however many arrive at once. The key lookup itself is one
// indexed read, batched per turn; keys are 238 random bits, so the limit is a brake on careless
// clients and scanners, not what keeps keys from being guessed.
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { type Actor, withActor } from "../core/audit/context.ts";
import type { Action, Resource } from "../core/keys/permissions.ts";
import type { KeyPrincipal, KeysService } from "../core/keys/service.ts";
import { sendError as sendApiError } from "./errors.ts";
import { addressGroup, type CounterStore, type WindowCount } from "./rate-limit.ts";

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
  /** How refusals are sent; the API's error shape by default (the SCIM door sends SCIM's). */
  sendError?: (reply: FastifyReply, code: number, message: string) => FastifyReply;
  /** The body media types accepted, and the 415 sentence; application/json by default. */
  bodyType?: { pattern: RegExp; message: string };
}

const WINDOW_MS = 60_000;
const BEARER = /^bearer +([^\s]+) *$/i;
const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/** What the pipeline decided: carry on, or an answer already sent. */
type Outcome = undefined | FastifyReply;

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** The audit log's actor of an authenticated request: the key, from the address after trusted proxies. */
function keyActor(request: FastifyRequest): Actor {
  const principal = request.principal;
  return {
    type: "api_key",
    id: String(principal.keyId),
    name: principal.keyName,
    role: "",
    address: request.ip,
  };
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  const { keys, counters, defaultRateLimit, authFailureLimit } = options;
  const sendError = options.sendError ?? sendApiError;
  const bodyType = options.bodyType ?? {
    pattern: JSON_TYPE,
    message: "send the body as Content-Type: application/json;charset=utf-8",
  };
  const policies = new Map<number, string>();

  function setLimitHeaders(reply: FastifyReply, limit: number, window: WindowCount): number {
    const secondsLeft = Math.max(1, Math.ceil((window.resetAt - counters.now()) / 1000));
    const remaining = Math.max(0, limit - window.count);
    let policy = policies.get(limit);
    if (policy === undefined) {
      policy = `"default";q=${limit};w=${WINDOW_MS / 1000}`;
      policies.set(limit, policy);
    }
    reply.header("X-RateLimit-Limit", limit);
    reply.header("X-RateLimit-Remaining", remaining);
    reply.header("X-RateLimit-Reset", Math.ceil(window.resetAt / 1000));
    reply.header("RateLimit-Policy", policy);
    reply.header("RateLimit", `"default";r=${remaining};t=${secondsLeft}`);
    return secondsLeft;
  }

  /**
   * Adds one to a counter: at once in memory, awaited otherwise. The Redis store falls back to
   * memory by itself (and logs it); any other store that fails counts nothing (null).
   */
  function hit(name: string): WindowCount | null | Promise<WindowCount | null> {
    if (counters.hitSync) return counters.hitSync(name, WINDOW_MS);
    return counters.hit(name, WINDOW_MS).catch(() => null);
  }

  /** A failed authentication: counted against the address first, then 401, or 429 past the limit. */
  function refuse(request: FastifyRequest, reply: FastifyReply, message: string): Outcome | Promise<Outcome> {
    const failures = hit(`authfail:${addressGroup(request.ip)}`);
    if (isPromise(failures)) return failures.then((f) => answerFailure(reply, f, message));
    return answerFailure(reply, failures, message);
  }

  function answerFailure(reply: FastifyReply, failures: WindowCount | null, message: string): Outcome {
    if (failures && failures.count > authFailureLimit) {
      const wait = Math.max(1, Math.ceil((failures.resetAt - counters.now()) / 1000));
      reply.header("Retry-After", wait);
      return sendError(reply, 429, `too many failed authentications from this address; retry in ${wait} s`);
    }
    reply.header("WWW-Authenticate", 'Bearer realm="wisp"');
    return sendError(reply, 401, message);
  }

  function checkPrincipal(request: FastifyRequest, reply: FastifyReply, principal: KeyPrincipal): Outcome {
    request.principal = principal;
    if (!principal.allowsIp(request.ip)) {
      return sendError(reply, 403, `this API key may not be used from ${request.ip}`);
    }
  }

  function checkLimit(reply: FastifyReply, principal: KeyPrincipal, window: WindowCount | null): Outcome {
    if (!window) return;
    const limit = principal.rateLimit ?? defaultRateLimit;
    const secondsLeft = setLimitHeaders(reply, limit, window);
    if (window.count <= limit) return;
    reply.header("Retry-After", secondsLeft);
    return sendError(
      reply,
      429,
      `rate limit of ${limit} requests per minute exceeded; retry in ${secondsLeft} s`,
    );
  }

  function checkRequest(
    request: FastifyRequest,
    reply: FastifyReply,
    principal: KeyPrincipal,
    [resource, action]: [Resource, Action],
  ): Outcome {
    if (BODY_METHODS.has(request.method) && !bodyType.pattern.test(request.headers["content-type"] ?? "")) {
      return sendError(reply, 415, bodyType.message);
    }
    if (!principal.can(resource, action)) {
      return sendError(reply, 403, `this API key lacks the ${resource}:${action} permission`);
    }
  }

  type Done = (error?: Error) => void;

  /** Carries on once an outcome is known: at once, or when its promise settles. */
  function settle(outcome: Outcome | Promise<Outcome>, done: Done): void {
    if (isPromise(outcome)) outcome.then(() => done(), done);
    else done();
  }

  /** The whole pipeline, in callbacks so the usual path makes no promise (see the opening comment). */
  function authenticate(
    request: FastifyRequest,
    reply: FastifyReply,
    permission: [Resource, Action],
    done: Done,
  ): void {
    const header = request.headers.authorization;
    const match = header === undefined ? null : BEARER.exec(header);
    if (!match) {
      const message =
        header === undefined
          ? "missing Authorization header; send Authorization: Bearer <API key>"
          : "the Authorization header must be 'Bearer <API key>'";
      settle(refuse(request, reply, message), done);
      return;
    }
    keys.verifyQueued(match[1]!, (error, principal) => {
      if (error) return done(error as Error);
      settle(afterKey(request, reply, permission, principal), done);
    });
  }

  function afterKey(
    request: FastifyRequest,
    reply: FastifyReply,
    permission: [Resource, Action],
    principal: KeyPrincipal | null,
  ): Outcome | Promise<Outcome> {
    if (!principal) return refuse(request, reply, "invalid or revoked API key");
    const refused = checkPrincipal(request, reply, principal);
    if (refused) return refused;
    const window = hit(`key:${principal.keyId}`);
    if (isPromise(window)) {
      return window.then(
        (w) => checkLimit(reply, principal, w) ?? checkRequest(request, reply, principal, permission),
      );
    }
    return checkLimit(reply, principal, window) ?? checkRequest(request, reply, principal, permission);
  }

  // Only routes that declare a permission get the pipeline (health, docs and the console do not).
  app.addHook("onRoute", (route) => {
    const permission = route.config?.permission;
    if (!permission) return;
    const hook: onRequestHookHandler = (request, reply, done) =>
      authenticate(request, reply, permission, done);
    const existing = route.onRequest ? [route.onRequest].flat() : [];
    route.onRequest = [hook, ...existing];
    // Every change the handler makes is audited as this key's (core/audit/context.ts).
    route.handler = withActor(route.handler, keyActor);
  });
}

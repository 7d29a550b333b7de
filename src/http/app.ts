// The HTTP door: fastify with the key pipeline, error shape, OpenAPI document and routes.
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, { type FastifyInstance } from "fastify";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import { consolePlugin } from "../console/plugin.ts";
import type { Core } from "../core/index.ts";
import { registerAuth } from "./auth.ts";
import { handleError, sendError } from "./errors.ts";
import type { CounterStore } from "./rate-limit.ts";
import { attributesRoutes } from "./routes/attributes.ts";
import { groupsRoutes } from "./routes/groups.ts";
import { networksRoutes } from "./routes/networks.ts";
import { reportsRoutes } from "./routes/reports.ts";
import { usersRoutes } from "./routes/users.ts";
import { vouchersRoutes } from "./routes/vouchers.ts";
import { ErrorBody } from "./schemas.ts";
import { buildValidator } from "./validation.ts";

export interface AppOptions {
  core: Core;
  counters: CounterStore;
  defaultRateLimit: number;
  authFailureLimit: number;
  trustedProxies?: string[];
  logLevel?: string;
}

export const BODY_LIMIT = 1024 * 1024;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: options.logLevel ?? "info",
      // Keys and cookies never reach the log, whatever a serializer does later.
      redact: ["req.headers.authorization", "req.headers.cookie", 'res.headers["set-cookie"]'],
    },
    bodyLimit: BODY_LIMIT,
    trustProxy: options.trustedProxies && options.trustedProxies.length > 0 ? options.trustedProxies : false,
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
    schemaController: { compilersFactory: { buildValidator } },
  });
  app.setErrorHandler(handleError);
  // Once shutdown starts, answers to requests still in flight close their connection, so a
  // keep-alive client does not hold the server open until the shutdown timeout.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  // Every response passes here: a callback hook, which costs no promise.
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("Connection", "close");
    done(null, payload);
  });
  app.addSchema(ErrorBody);

  // A second router that knows every path, to tell "wrong method" (405) from "no such path" (404).
  const paths = FindMyWay({ ignoreTrailingSlash: true });
  // Handlers still running when shutdown starts (their client may have gone) finish before
  // onClose returns, so the database is never closed under them.
  let running = 0;
  const idle: (() => void)[] = [];
  app.addHook("onClose", async () => {
    if (running > 0) await new Promise<void>((resolve) => idle.push(resolve));
  });
  const finished = () => {
    if (--running === 0) for (const resolve of idle.splice(0)) resolve();
  };
  app.addHook("onRoute", (route) => {
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request, reply) {
      running++;
      let result: unknown;
      try {
        result = handler.call(this, request, reply);
      } catch (error) {
        finished();
        throw error;
      }
      if (!(result instanceof Promise)) {
        finished();
        return result;
      }
      return result.then(
        (value) => {
          finished();
          return value;
        },
        (error) => {
          finished();
          throw error;
        },
      );
    };
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) paths.on(method.toUpperCase() as HTTPMethod, route.url, () => {});
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = (["GET", "POST", "PUT", "PATCH", "DELETE"] as const).filter((m) => paths.find(m, path));
    if (allowed.length > 0) {
      reply.header("Allow", allowed.join(", "));
      return sendError(reply, 405, `${request.method} is not allowed here; use ${allowed.join(", ")}`);
    }
    return sendError(reply, 404, `no route ${request.method} ${path}`);
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Wisp API",
        version: "1",
        description: "Manage users, RADIUS attributes, groups, networks, vouchers and reports.",
      },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string) || `def-${i}` },
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });

  registerAuth(app, {
    keys: options.core.keys,
    counters: options.counters,
    defaultRateLimit: options.defaultRateLimit,
    authFailureLimit: options.authFailureLimit,
  });

  app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));
  app.get("/api/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  await app.register(usersRoutes, { users: options.core.users });
  // (route plugins of further areas are registered below, one line each)
  await app.register(consolePlugin, { prefix: "/console", core: options.core, counters: options.counters });
  await app.register(reportsRoutes, { reports: options.core.reports });
  await app.register(attributesRoutes, { attributes: options.core.attributes });
  await app.register(groupsRoutes, { groups: options.core.groups, attributes: options.core.attributes });
  await app.register(networksRoutes, { networks: options.core.networks, portals: options.core.portals });
  await app.register(vouchersRoutes, { vouchers: options.core.vouchers });
  return app;
}

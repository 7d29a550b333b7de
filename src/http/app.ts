// The HTTP door: fastify with the key pipeline, error shape, OpenAPI document and routes.
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { httpsOnly, setDocsHeaders, setHttpsOnly } from "../console/security.ts";
import type { Core } from "../core/index.ts";
import { registerAuth } from "./auth.ts";
import { handleError } from "./errors.ts";
import { completeDocument } from "./openapi.ts";
import type { CounterStore } from "./rate-limit.ts";
import { accountRoutes } from "./routes/account.ts";
import { attributesRoutes } from "./routes/attributes.ts";
import { auditRoutes } from "./routes/audit.ts";
import { devicesRoutes } from "./routes/devices.ts";
import { directoriesRoutes } from "./routes/directories.ts";
import { groupsRoutes } from "./routes/groups.ts";
import { guestsRoutes } from "./routes/guests.ts";
import { identityProvidersRoutes } from "./routes/identity-providers.ts";
import { networksRoutes } from "./routes/networks.ts";
import { nodesRoutes } from "./routes/nodes.ts";
import { plansRoutes } from "./routes/plans.ts";
import { policiesRoutes } from "./routes/policies.ts";
import { radsecRoutes } from "./routes/radsec.ts";
import { reportsRoutes } from "./routes/reports.ts";
import { sessionsRoutes } from "./routes/sessions.ts";
import { usersRoutes } from "./routes/users.ts";
import { vouchersRoutes } from "./routes/vouchers.ts";
import { ErrorBody } from "./schemas.ts";

export interface ApiOptions {
  core: Core;
  counters: CounterStore;
  defaultRateLimit: number;
  authFailureLimit: number;
  /** PUBLIC_URL: when https, the documentation pages send HSTS as the console does. */
  publicUrl?: string | undefined;
}

/** The API door, mounted on the HTTP root (src/http/root.ts) beside the console. */
export async function apiPlugin(app: FastifyInstance, options: ApiOptions): Promise<void> {
  app.setErrorHandler(handleError);
  app.addSchema(ErrorBody);

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Wisp API",
        version: "1",
        description:
          "Manage users, RADIUS attributes, groups, networks, vouchers, devices, sessions, reports and identity providers.",
      },
      // Relative: the API is on the origin that serves the document.
      servers: [{ url: "/", description: "this Wisp server" }],
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }],
    },
    // operationIds, error responses and examples for every operation, in one place (openapi.ts).
    transformObject: (document) =>
      completeDocument("openapiObject" in document ? document.openapiObject : document.swaggerObject),
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string) || `def-${i}` },
  });
  // The documentation and the document are on the console's origin: its security headers.
  await app.register(async (docs) => {
    setHttpsOnly(docs, httpsOnly(options.publicUrl));
    docs.addHook("onSend", async (request, reply, payload) => {
      setDocsHeaders(request, reply);
      return payload;
    });
    await docs.register(swaggerUi, { routePrefix: "/docs" });
    docs.get("/api/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  });

  registerAuth(app, {
    keys: options.core.keys,
    counters: options.counters,
    defaultRateLimit: options.defaultRateLimit,
    authFailureLimit: options.authFailureLimit,
  });

  await app.register(usersRoutes, { users: options.core.users });
  // (route plugins of further areas are registered below, one line each)
  await app.register(reportsRoutes, { reports: options.core.reports });
  await app.register(attributesRoutes, { attributes: options.core.attributes });
  await app.register(groupsRoutes, { groups: options.core.groups, attributes: options.core.attributes });
  await app.register(networksRoutes, { networks: options.core.networks, portals: options.core.portals });
  await app.register(vouchersRoutes, { vouchers: options.core.vouchers });
  await app.register(sessionsRoutes, { sessions: options.core.sessions });
  await app.register(identityProvidersRoutes, { idp: options.core.idp });
  await app.register(devicesRoutes, { devices: options.core.devices });
  await app.register(auditRoutes, { audit: options.core.audit });
  await app.register(policiesRoutes, { policies: options.core.policies });
  await app.register(plansRoutes, { plans: options.core.plans });
  await app.register(directoriesRoutes, { directories: options.core.directories });
  await app.register(nodesRoutes, { nodes: options.core.nodes });
  await app.register(guestsRoutes, { guests: options.core.registeredGuests });
  await app.register(accountRoutes, {
    accounts: options.core.accounts,
    keys: options.core.keys,
    defaultRateLimit: options.defaultRateLimit,
  });
  await app.register(radsecRoutes, {
    radsec: options.core.radsec,
    networks: options.core.networks,
    // Read at each request: the RadSec listener sets its own after the API is built.
    connections: () => options.core.radsecConnections,
  });
}

// The SCIM 2.0 door at /scim/v2 (RFC 7644): what Entra ID and Okta call to provision users and
// groups. Beside the API, with the same key pipeline (src/http/auth.ts: revocation, IP allow-list,
// rate limit) but its own media type (application/scim+json) and error shape (RFC 7644 section
// 3.12). The token is a Wisp API key with the scim permission: scim:read to read, scim:write to write.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Core } from "../core/index.ts";
import { ScimError } from "../core/scim/errors.ts";
import {
  ERROR_SCHEMA,
  GROUP_SCHEMA,
  resourceTypeDocuments,
  schemaDocuments,
  serviceProviderConfig,
  USER_SCHEMA,
} from "../core/scim/schema.ts";
import { type ListRequest, MAX_RESULTS } from "../core/scim/service.ts";
import { AppError, ConflictError, TooManyRequestsError, ValidationError } from "../core/shared/errors.ts";
import { BUSY_RETRY_AFTER_S, isDatabaseBusy } from "../db/sqlite-writer.ts";
import { registerAuth } from "./auth.ts";
import type { CounterStore } from "./rate-limit.ts";

export interface ScimOptions {
  core: Core;
  counters: CounterStore;
  defaultRateLimit: number;
  authFailureLimit: number;
  publicUrl: string;
}

const SCIM_TYPE = "application/scim+json; charset=utf-8";
/** RFC 7644 section 3.1: application/scim+json; application/json is accepted too. */
const BODY_TYPE = /^application\/(scim\+)?json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
type Scim = Record<string, unknown>;

/** RFC 7644 section 3.12: the error's status is a string; scimType for the 400s and 409s that have one. */
export function sendScimError(reply: FastifyReply, status: number, detail: string, scimType?: string) {
  const body: Scim = { schemas: [ERROR_SCHEMA], status: String(status) };
  if (scimType) body.scimType = scimType;
  body.detail = detail;
  return reply.code(status).type(SCIM_TYPE).send(body);
}

/** Fastify's own failures reading a body. */
const FRAMEWORK: Record<string, [number, string, string?]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: [400, "the body is not valid JSON", "invalidSyntax"],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, "the body is empty; send a JSON object", "invalidSyntax"],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, "the body is larger than the 1 MiB limit"],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, "send the body as Content-Type: application/scim+json"],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, "Content-Length does not match the body", "invalidSyntax"],
};

function handleScimError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ScimError) return sendScimError(reply, error.status, error.message, error.scimType);
  if (error instanceof ValidationError) return sendScimError(reply, 400, error.message, "invalidValue");
  if (error instanceof ConflictError) return sendScimError(reply, 409, error.message, "uniqueness");
  if (error instanceof TooManyRequestsError) reply.header("Retry-After", error.retryAfterSeconds);
  if (error instanceof AppError) return sendScimError(reply, error.status, error.message);
  const known = error.code ? FRAMEWORK[error.code] : undefined;
  if (known) return sendScimError(reply, known[0], known[1], known[2]);
  if (error instanceof SyntaxError)
    return sendScimError(reply, 400, "the body is not valid JSON", "invalidSyntax");
  if (isDatabaseBusy(error)) {
    reply.header("Retry-After", String(BUSY_RETRY_AFTER_S));
    return sendScimError(reply, 503, "the database is busy; try again shortly");
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return sendScimError(reply, status, error.message);
  request.log.error({ err: error }, "unhandled error");
  return sendScimError(reply, 500, "internal server error");
}

/** A whole number from the query (startIndex, count); absent: undefined. */
function integerParam(query: Record<string, unknown>, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined || raw === "") return undefined;
  if (typeof raw !== "string" || !/^[+-]?\d{1,30}$/.test(raw.trim())) {
    throw new ScimError(400, `${name} must be a whole number`, "invalidValue");
  }
  // Past 2^31 no page holds anything: larger numbers read as that.
  return Math.max(-1, Math.min(2 ** 31, Number(raw)));
}

function names(query: Record<string, unknown>, name: string): string[] {
  const raw = query[name];
  if (typeof raw !== "string" || raw.trim() === "") return [];
  return raw
    .split(",")
    .map((n) =>
      n
        .trim()
        .toLowerCase()
        .replace(`${USER_SCHEMA.toLowerCase()}:`, "")
        .replace(`${GROUP_SCHEMA.toLowerCase()}:`, ""),
    );
}

/** RFC 7644 section 3.4.2.5: attributes / excludedAttributes (top-level names); id and schemas always stay. */
function project(resource: Scim, only: string[], excluded: string[]): Scim {
  if (only.length === 0 && excluded.length === 0) return resource;
  const out: Scim = {};
  for (const [key, value] of Object.entries(resource)) {
    const name = key.toLowerCase();
    const always = name === "id" || name === "schemas";
    if (!always && only.length > 0 && !only.includes(name)) continue;
    if (!always && excluded.includes(name)) continue;
    out[key] = value;
  }
  return out;
}

function listRequest(request: FastifyRequest): ListRequest & { only: string[]; excluded: string[] } {
  const query = request.query as Record<string, unknown>;
  const filter = query.filter;
  if (filter !== undefined && typeof filter !== "string") {
    throw new ScimError(400, "give one filter", "invalidFilter");
  }
  const only = names(query, "attributes");
  const excluded = names(query, "excludedAttributes");
  return {
    filter,
    startIndex: integerParam(query, "startIndex"),
    count: integerParam(query, "count"),
    members: !excluded.includes("members") && (only.length === 0 || only.includes("members")),
    only,
    excluded,
  };
}

export async function scimPlugin(app: FastifyInstance, options: ScimOptions): Promise<void> {
  const { core } = options;
  const scim = core.scim;
  const base = `${options.publicUrl}/scim/v2`;
  app.setErrorHandler(handleScimError);
  app.setNotFoundHandler((request, reply) =>
    sendScimError(reply, 404, `no SCIM endpoint ${request.method} ${request.url.split("?")[0]}`),
  );
  app.addContentTypeParser(
    "application/scim+json",
    { parseAs: "string" },
    app.getDefaultJsonParser("error", "error"),
  );
  registerAuth(app, {
    keys: core.keys,
    counters: options.counters,
    defaultRateLimit: options.defaultRateLimit,
    authFailureLimit: options.authFailureLimit,
    sendError: (reply, code, message) => sendScimError(reply, code, message),
    bodyType: { pattern: BODY_TYPE, message: "send the body as Content-Type: application/scim+json" },
  });
  const read = { config: { permission: ["scim", "read"] as ["scim", "read"] } };
  const write = { config: { permission: ["scim", "write"] as ["scim", "write"] } };
  const account = (request: FastifyRequest) => request.principal.accountId;
  const id = (request: FastifyRequest) => (request.params as { id: string }).id;
  const send = (reply: FastifyReply, body: Scim, status = 200) => {
    if (status === 201) reply.header("Location", (body.meta as { location: string }).location);
    return reply.code(status).type(SCIM_TYPE).send(body);
  };
  const listed = (body: Scim, list: ReturnType<typeof listRequest>) => ({
    ...body,
    Resources: (body.Resources as Scim[]).map((r) => project(r, list.only, list.excluded)),
  });
  const one = (request: FastifyRequest, body: Scim) => {
    const query = request.query as Record<string, unknown>;
    return project(body, names(query, "attributes"), names(query, "excludedAttributes"));
  };

  app.get("/Users", read, async (request, reply) => {
    const list = listRequest(request);
    return send(reply, listed(await scim.listUsers(account(request), list, base), list));
  });
  app.post("/Users", write, async (request, reply) =>
    send(reply, await scim.createUser(account(request), request.body, base), 201),
  );
  app.get("/Users/:id", read, async (request, reply) =>
    send(reply, one(request, await scim.getUser(account(request), id(request), base))),
  );
  app.put("/Users/:id", write, async (request, reply) =>
    send(reply, await scim.replaceUser(account(request), id(request), request.body, base)),
  );
  app.patch("/Users/:id", write, async (request, reply) =>
    send(reply, await scim.patchUser(account(request), id(request), request.body, base)),
  );
  app.delete("/Users/:id", write, async (request, reply) => {
    await scim.deleteUser(account(request), id(request));
    return reply.code(204).send();
  });

  app.get("/Groups", read, async (request, reply) => {
    const list = listRequest(request);
    return send(reply, listed(await scim.listGroups(account(request), list, base), list));
  });
  app.post("/Groups", write, async (request, reply) =>
    send(reply, await scim.createGroup(account(request), request.body, base), 201),
  );
  app.get("/Groups/:id", read, async (request, reply) => {
    const list = listRequest(request);
    const group = await scim.getGroup(account(request), id(request), base, list.members);
    return send(reply, project(group, list.only, list.excluded));
  });
  app.put("/Groups/:id", write, async (request, reply) =>
    send(reply, await scim.replaceGroup(account(request), id(request), request.body, base)),
  );
  app.patch("/Groups/:id", write, async (request, reply) =>
    send(reply, await scim.patchGroup(account(request), id(request), request.body, base)),
  );
  app.delete("/Groups/:id", write, async (request, reply) => {
    await scim.deleteGroup(account(request), id(request));
    return reply.code(204).send();
  });

  discoveryRoutes(app, base, read, send);
}

/** RFC 7644 section 4: ServiceProviderConfig, ResourceTypes, Schemas (each listed, or one by id). */
function discoveryRoutes(
  app: FastifyInstance,
  base: string,
  read: { config: { permission: ["scim", "read"] } },
  send: (reply: FastifyReply, body: Scim) => FastifyReply,
): void {
  const listOf = (resources: Scim[]) => ({
    schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
    totalResults: resources.length,
    startIndex: 1,
    itemsPerPage: resources.length,
    Resources: resources,
  });
  const byId = (resources: Scim[], what: string) => (request: FastifyRequest, reply: FastifyReply) => {
    const wanted = (request.params as { id: string }).id;
    const found = resources.find((r) => String(r.id).toLowerCase() === wanted.toLowerCase());
    if (!found) return sendScimError(reply, 404, `no ${what} ${wanted}`);
    return send(reply, found);
  };
  const config = serviceProviderConfig(base, MAX_RESULTS);
  const types = resourceTypeDocuments(base);
  const schemas = schemaDocuments(base);
  app.get("/ServiceProviderConfig", read, async (_request, reply) => send(reply, config));
  app.get("/ResourceTypes", read, async (_request, reply) => send(reply, listOf(types)));
  app.get("/ResourceTypes/:id", read, byId(types, "resource type"));
  app.get("/Schemas", read, async (_request, reply) => send(reply, listOf(schemas)));
  app.get("/Schemas/:id", read, byId(schemas, "schema"));
}

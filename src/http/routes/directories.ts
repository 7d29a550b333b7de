// /api/directories: an account's LDAP / Active Directory sources (issue 30), their group mapping,
// a sync on demand. Thin translation to core/directories, which checks every field. The bind
// password is write-only: answers say only whether one is set.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import {
  DIRECTORY_NAME_PATTERN,
  DISABLED_MODES,
  MAX_ATTRIBUTE,
  MAX_BIND_PASSWORD,
  MAX_CA_PEM,
  MAX_DIRECTORY_GROUP,
  MAX_DN,
  MAX_FILTER,
  MAX_MAPPINGS,
  MAX_SERVERS,
  MAX_URL,
  NUMBER_FIELDS,
  SCOPES,
} from "../../core/directories/rules.ts";
import type { DirectoriesService } from "../../core/directories/service.ts";
import { errorResponses, StringEnum } from "../schemas.ts";

const GroupMapping = Type.Object(
  {
    directory_group: Type.String({
      minLength: 1,
      maxLength: MAX_DIRECTORY_GROUP,
      description: "a directory group: its name (group_name_attribute) or its DN, compared without case",
    }),
    group: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "the Wisp group (by name) it puts users in",
    }),
  },
  { additionalProperties: false },
);

const number = (field: keyof typeof NUMBER_FIELDS, description: string) =>
  Type.Integer({ minimum: NUMBER_FIELDS[field][0], maximum: NUMBER_FIELDS[field][1], description });

const writable = {
  enabled: Type.Boolean(),
  servers: Type.Array(Type.String({ maxLength: MAX_URL }), {
    minItems: 1,
    maxItems: MAX_SERVERS,
    description: "ldap://host[:port] or ldaps://host[:port], in failover order",
  }),
  start_tls: Type.Boolean({
    description: "StartTLS (RFC 4511 section 4.14) on ldap:// servers before any bind",
  }),
  ca_pem: Type.String({
    maxLength: MAX_CA_PEM,
    description: "PEM certificates to trust; empty: the system's",
  }),
  bind_dn: Type.String({
    maxLength: MAX_DN,
    description: "the service account's DN; empty: anonymous searches",
  }),
  bind_password: Type.String({
    maxLength: MAX_BIND_PASSWORD,
    writeOnly: true,
    description: "write-only, stored encrypted; an empty string removes it",
  }),
  user_base: Type.String({ maxLength: MAX_DN, description: "where users are searched" }),
  user_scope: StringEnum(SCOPES),
  user_filter: Type.String({
    maxLength: MAX_FILTER,
    description: "an RFC 4515 filter ANDed with (username_attribute=<the username, escaped>)",
  }),
  username_attribute: Type.String({ maxLength: MAX_ATTRIBUTE, description: "uid, sAMAccountName..." }),
  name_attribute: Type.String({ maxLength: MAX_ATTRIBUTE }),
  email_attribute: Type.String({ maxLength: MAX_ATTRIBUTE }),
  disabled_mode: StringEnum(DISABLED_MODES, {
    description: "ad: userAccountControl bit 0x2; attribute: disabled_attribute equals disabled_value",
  }),
  disabled_attribute: Type.String({ maxLength: MAX_ATTRIBUTE }),
  disabled_value: Type.String({ maxLength: 200 }),
  nt_hash_attribute: Type.String({
    maxLength: MAX_ATTRIBUTE,
    description: "an attribute holding the NT hash in hex (sambaNTPassword): lets PEAP/MS-CHAPv2 work",
  }),
  group_base: Type.String({ maxLength: MAX_DN, description: "where groups are searched; empty: no groups" }),
  group_filter: Type.String({ maxLength: MAX_FILTER }),
  group_member_attribute: Type.String({
    maxLength: MAX_ATTRIBUTE,
    description: "member, uniqueMember, memberUid",
  }),
  group_name_attribute: Type.String({ maxLength: MAX_ATTRIBUTE }),
  group_mappings: Type.Array(GroupMapping, {
    maxItems: MAX_MAPPINGS,
    description: "replaces the whole mapping",
  }),
  sync_interval: number("sync_interval", "minutes between scheduled syncs; 0: none"),
  group_cache_seconds: number(
    "group_cache_seconds",
    "how long a user's groups are reused at login; 0: never",
  ),
  connect_timeout_ms: number("connect_timeout_ms", "TCP and TLS connection timeout per server"),
  timeout_ms: number("timeout_ms", "timeout of each LDAP operation (and of waiting for a pooled connection)"),
  pool_size: number(
    "pool_size",
    "connections per server for users' binds, and at most as many for searches (which share connections)",
  ),
  breaker_failures: number("breaker_failures", "failures in a row that open a server's circuit"),
  breaker_cooldown_seconds: number("breaker_cooldown_seconds", "how long an open circuit skips its server"),
};
const optional = Object.fromEntries(
  Object.entries(writable).map(([key, schema]) => [key, Type.Optional(schema)]),
) as { [K in keyof typeof writable]: ReturnType<typeof Type.Optional<(typeof writable)[K]>> };
const { bind_password: _password, group_mappings: _mappings, ...shown } = writable;

const SyncReport = Type.Object(
  {
    directory: Type.String(),
    started: Type.String(),
    finished: Type.String(),
    ok: Type.Boolean(),
    error: Type.Optional(Type.String()),
    seen: Type.Integer({ description: "users the search returned" }),
    counts: Type.Record(Type.String(), Type.Integer(), {
      description: "created, updated, disabled, enabled, unchanged, conflict, skipped, removed",
    }),
    changes: Type.Array(
      Type.Object({ username: Type.String(), change: Type.String(), why: Type.Optional(Type.String()) }),
    ),
    more: Type.Integer({ description: "changes left out of the list" }),
  },
  { $id: "DirectorySyncReport" },
);

const Directory = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    ...shown,
    bind_password_set: Type.Boolean({ description: "whether a bind password is set (it is never returned)" }),
    group_mappings: Type.Array(GroupMapping),
    server_status: Type.Array(
      Type.Object({
        url: Type.String(),
        state: StringEnum(["closed", "open", "half-open"] as const),
        last_error: Type.String(),
      }),
      { description: "this process's view of each server: closed is healthy" },
    ),
    last_sync: Type.Union([Type.Ref("DirectorySyncReport"), Type.Null()]),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  {
    $id: "Directory",
    description: "An LDAP / Active Directory source. The bind password is never returned.",
  },
);

const nameField = Type.String({
  pattern: DIRECTORY_NAME_PATTERN.source,
  description: "1-20 of a-z 0-9 -, unique per account; fixed once created",
});
const CreateDirectory = Type.Object(
  { name: nameField, servers: writable.servers, user_base: writable.user_base, ...omitRequired(optional) },
  { additionalProperties: false },
);
const UpdateDirectory = Type.Object(
  {
    name: Type.Optional(Type.String({ description: "cannot change; accepted when unchanged" })),
    ...optional,
  },
  { additionalProperties: false },
);
const Params = Type.Object(
  { directory: Type.String({ maxLength: 20, description: "the directory's id or name" }) },
  { additionalProperties: false },
);
type Params = Static<typeof Params>;

function omitRequired<T extends Record<string, unknown>>(fields: T): Omit<T, "servers" | "user_base"> {
  const { servers: _s, user_base: _u, ...rest } = fields;
  return rest;
}

export async function directoriesRoutes(
  app: FastifyInstance,
  { directories }: { directories: DirectoriesService },
) {
  app.addSchema(SyncReport);
  app.addSchema(Directory);
  const tags = ["directories"];
  const read = { permission: ["directories", "read"] as ["directories", "read"] };
  const write = { permission: ["directories", "write"] as ["directories", "write"] };
  const one = { 200: Type.Ref("Directory"), ...errorResponses };

  app.get(
    "/api/directories",
    {
      config: read,
      schema: {
        tags,
        summary: "List LDAP / Active Directory sources",
        response: { 200: Type.Object({ data: Type.Array(Type.Ref("Directory")) }), ...errorResponses },
      },
    },
    async (request) => ({ data: await directories.list(request.principal.accountId) }),
  );

  app.get<{ Params: Params }>(
    "/api/directories/:directory",
    { config: read, schema: { tags, summary: "Get a directory", params: Params, response: one } },
    async (request) => directories.get(request.principal.accountId, request.params.directory),
  );

  app.post<{ Body: Static<typeof CreateDirectory> }>(
    "/api/directories",
    {
      config: write,
      schema: {
        tags,
        summary: "Create a directory",
        description: "Needs name, servers and user_base. A duplicate name answers 409.",
        body: CreateDirectory,
        response: { 201: Type.Ref("Directory"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const created = await directories.create(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/directories/${created.id}`).send(created);
    },
  );

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: Params; Body: Static<typeof UpdateDirectory> }>({
      method,
      url: "/api/directories/:directory",
      config: write,
      schema: {
        tags,
        summary: "Update a directory (only the fields sent change; the name is fixed)",
        params: Params,
        body: UpdateDirectory,
        response: one,
      },
      handler: async (request) =>
        directories.update(request.principal.accountId, request.params.directory, request.body),
    });
  }

  app.delete<{ Params: Params }>(
    "/api/directories/:directory",
    {
      config: write,
      schema: {
        tags,
        summary:
          "Delete a directory with its mapping (its shadow users stay, as local users without a password)",
        params: Params,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await directories.delete(request.principal.accountId, request.params.directory);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: Params }>(
    "/api/directories/:directory/sync",
    {
      config: write,
      schema: {
        tags,
        summary: "Sync now: pull users and groups, create, update and disable shadow users",
        description: "Answers when the sync is done, with what changed (also kept as last_sync).",
        params: Params,
        response: { 200: Type.Ref("DirectorySyncReport"), ...errorResponses },
      },
    },
    async (request) => directories.sync(request.principal.accountId, request.params.directory),
  );
}

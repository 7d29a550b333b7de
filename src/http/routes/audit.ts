// /api/audit: the account's audit log, read-only (JSON pages or the same page as CSV). There is
// no route that changes or deletes an entry: only retention (RETENTION_AUDIT_DAYS) removes them.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import { type AuditService, MAX_RANGE_DAYS } from "../../core/audit/service.ts";
import { errorResponses, ListOf, PageQuery, StringEnum } from "../schemas.ts";

const AuditEntry = Type.Object(
  {
    id: Type.Integer(),
    time: Type.String({ format: "date-time", description: "when the change was committed" }),
    actor_type: Type.String({ description: "api_key, admin, cli, worker, radius, portal or system" }),
    actor_id: Type.String({
      description: "the key's id, the admin's id, the OS user; empty for automatic actors",
    }),
    actor_name: Type.String({ description: "the key's name, the admin's email, the OS user" }),
    actor_role: Type.String({ description: "the console admin's role; empty for others" }),
    address: Type.String({ description: "the client address (after trusted proxies); local for the CLI" }),
    resource: Type.String({ description: "user, group, network, webhook, voucher_batch, ..." }),
    resource_id: Type.String(),
    action: Type.String({
      description: "create, update, delete, or the area's verb (revoke, rotate_secret, ...)",
    }),
    before: Type.Unknown({
      description: "the fields before the change (secrets masked as ********); null: none",
    }),
    after: Type.Unknown({ description: "the fields after the change (secrets masked); null: none" }),
  },
  { $id: "AuditEntry" },
);

const short = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 320, description }));

const ListQuery = Type.Object(
  {
    ...PageQuery,
    actor: short("the actor's id or name, exactly (a key id, an admin's email, an OS user)"),
    actor_type: Type.Optional(
      StringEnum(["api_key", "admin", "cli", "worker", "radius", "portal", "system"]),
    ),
    resource: short("e.g. user, network"),
    resource_id: short("the resource's id"),
    action: short("e.g. create, update, delete"),
    from: Type.Optional(
      Type.String({ maxLength: 40, description: "ISO 8601 date or date-time; default: 30 days before `to`" }),
    ),
    to: Type.Optional(
      Type.String({ maxLength: 40, description: `default: now; at most ${MAX_RANGE_DAYS} days after from` }),
    ),
    sort: Type.Optional(
      StringEnum(["time", "-time"], { description: "default -time (newest first); ties by id" }),
    ),
    format: Type.Optional(
      StringEnum(["json", "csv"], { description: "csv: the same page as CSV, with a header row" }),
    ),
  },
  { additionalProperties: false },
);

export async function auditRoutes(app: FastifyInstance, { audit }: { audit: AuditService }) {
  app.addSchema(AuditEntry);
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/audit",
    {
      config: { permission: ["audit", "read"] },
      schema: {
        tags: ["audit"],
        summary: "List the audit log (needs audit:read or full; the read shorthand does not include it)",
        description:
          "One entry per change made through any door (API, console, CLI, worker, RADIUS, portal), newest " +
          `first. Bad dates, from after to, or a range over ${MAX_RANGE_DAYS} days answer 400.`,
        querystring: ListQuery,
        response: {
          200: {
            description: "a page of entries (format=csv: the same page as CSV)",
            content: {
              "application/json": { schema: ListOf(Type.Ref("AuditEntry")) },
              "text/csv": { schema: Type.String() },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { page = 1, limit = 50, format, ...filter } = request.query;
      const result = await audit.list(request.principal.accountId, filter, { page, limit });
      if (format !== "csv") return result;
      reply.header("X-Total-Count", result.total);
      reply.header("Content-Disposition", 'attachment; filename="audit.csv"');
      return reply.type("text/csv; charset=utf-8").send(audit.csv(result));
    },
  );
}

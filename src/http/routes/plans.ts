// /api/plans: thin translation between HTTP and the plans service.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import {
  MAX_BANDWIDTH_KBPS,
  MAX_DATA_QUOTA,
  MAX_DEVICES,
  MAX_PLAN_DESCRIPTION,
  MAX_PLAN_NAME,
  MAX_PLAN_ROLE,
  MAX_TIME_QUOTA,
  MAX_VALIDITY,
  PLAN_PERIODS,
  PLAN_SORT_FIELDS,
  ROLE_PATTERN,
} from "../../core/plans/rules.ts";
import type { PlansService } from "../../core/plans/service.ts";
import { NO_CONTROL_CHARACTERS } from "../../core/shared/text.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery } from "../schemas.ts";

function Nullable<T extends number | string>(type: "integer" | "string", options: object = {}) {
  return Type.Unsafe<T | null>({ ...options, type: [type, "null"] });
}

const period = (what: string) =>
  Nullable<string>("string", {
    enum: [...PLAN_PERIODS, null],
    description: `what ${what} counts over: day or month (local time), or validity (every session: since the first one); null with no quota`,
  });

const figures = {
  download_kbps: Nullable<number>("integer", {
    minimum: 1,
    maximum: MAX_BANDWIDTH_KBPS,
    description: "kbit/s towards the client, written in the network vendor's attributes; null: no limit",
  }),
  upload_kbps: Nullable<number>("integer", {
    minimum: 1,
    maximum: MAX_BANDWIDTH_KBPS,
    description: "kbit/s from the client; null: no limit",
  }),
  data_quota: Nullable<number>("integer", {
    minimum: 1,
    maximum: MAX_DATA_QUOTA,
    description: "octets in plus out per data_period; null: no limit",
  }),
  data_period: period("data_quota"),
  time_quota: Nullable<number>("integer", {
    minimum: 1,
    maximum: MAX_TIME_QUOTA,
    description: "seconds online per time_period; null: no limit",
  }),
  time_period: period("time_quota"),
  validity: Nullable<number>("integer", {
    minimum: 1,
    maximum: MAX_VALIDITY,
    description:
      "seconds from the first session after which the plan refuses logins (Expire-After); null: none",
  }),
  devices: Nullable<number>("integer", {
    minimum: 1,
    maximum: MAX_DEVICES,
    description: "sessions open at once (Simultaneous-Use); null: no limit",
  }),
  role: Type.String({
    maxLength: MAX_PLAN_ROLE,
    pattern: ROLE_PATTERN,
    description:
      "Aruba and Meraki networks: the role / group policy sent (Aruba-User-Role, Filter-Id); empty: WISPr",
  }),
};

const Plan = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    ...figures,
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  { $id: "Plan" },
);

const name = Type.String({ minLength: 1, maxLength: MAX_PLAN_NAME, pattern: NO_CONTROL_CHARACTERS });
const description = Type.String({ maxLength: MAX_PLAN_DESCRIPTION, pattern: NO_CONTROL_CHARACTERS });
const optionalFigures = Object.fromEntries(
  Object.entries(figures).map(([key, schema]) => [key, Type.Optional(schema)]),
) as { [K in keyof typeof figures]: ReturnType<typeof Type.Optional<(typeof figures)[K]>> };

const CreatePlan = Type.Object(
  { name, description: Type.Optional(description), ...optionalFigures },
  { additionalProperties: false },
);
const UpdatePlan = Type.Object(
  { name: Type.Optional(name), description: Type.Optional(description), ...optionalFigures },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  { ...PageQuery, sort: SortQuery(PLAN_SORT_FIELDS) },
  { additionalProperties: false },
);
const PlanParams = Type.Object({ plan_id: Id("the plan's id") }, { additionalProperties: false });
type PlanParams = Static<typeof PlanParams>;

export async function plansRoutes(app: FastifyInstance, { plans }: { plans: PlansService }) {
  app.addSchema(Plan);
  const tags = ["plans"];
  const read = { permission: ["plans", "read"] as ["plans", "read"] };
  const write = { permission: ["plans", "write"] as ["plans", "write"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/plans",
    {
      config: read,
      schema: {
        tags,
        summary: "List plans",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("Plan")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50, sort } = request.query;
      return plans.list(request.principal.accountId, { page, limit }, sort);
    },
  );

  app.get<{ Params: PlanParams }>(
    "/api/plans/:plan_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get a plan",
        params: PlanParams,
        response: { 200: Type.Ref("Plan"), ...errorResponses },
      },
    },
    async (request) => plans.get(request.principal.accountId, request.params.plan_id),
  );

  app.post<{ Body: Static<typeof CreatePlan> }>(
    "/api/plans",
    {
      config: write,
      schema: {
        tags,
        summary: "Create a plan",
        body: CreatePlan,
        response: { 201: Type.Ref("Plan"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const plan = await plans.create(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/plans/${plan.id}`).send(plan);
    },
  );

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: PlanParams; Body: Static<typeof UpdatePlan> }>({
      method,
      url: "/api/plans/:plan_id",
      config: write,
      schema: {
        tags,
        summary: "Update a plan (applies from each user's next login)",
        params: PlanParams,
        body: UpdatePlan,
        response: { 200: Type.Ref("Plan"), ...errorResponses },
      },
      handler: (request) => plans.update(request.principal.accountId, request.params.plan_id, request.body),
    });
  }

  app.delete<{ Params: PlanParams }>(
    "/api/plans/:plan_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete a plan no user, group or voucher batch names (409 with the counts otherwise)",
        params: PlanParams,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await plans.delete(request.principal.accountId, request.params.plan_id);
      return reply.code(204).send();
    },
  );
}

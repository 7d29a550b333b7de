// /api/policies: thin translation between HTTP and the policies service (src/core/policies).
import type { FastifyInstance } from "fastify";
import { type Static, type TSchema, Type } from "typebox";
import {
  ACTIONS,
  AUTH_METHODS,
  DAYS,
  DEVICE_STATES,
  MAX_AVPAIRS,
  MAX_CONDITION_VALUES,
  MAX_POLICY_DESCRIPTION,
  MAX_POLICY_NAME,
  MAX_REASON,
  MAX_TIMEOUT,
  MAX_VALUE_LENGTH,
  PORTAL_METHODS,
} from "../../core/policies/rules.ts";
import type { PoliciesService } from "../../core/policies/service.ts";
import { errorResponses, Id, StringEnum } from "../schemas.ts";

const values = <T extends TSchema>(item: T, description: string) =>
  Type.Optional(Type.Array(item, { minItems: 1, maxItems: MAX_CONDITION_VALUES, description }));
const text = Type.String({ minLength: 1, maxLength: MAX_VALUE_LENGTH });

const Conditions = Type.Object(
  {
    networks: values(Type.Integer({ minimum: 1 }), "network ids of the account"),
    ssids: values(text, "SSIDs (from Called-Station-Id), exact or globs with * and ?; case-sensitive"),
    nas_identifiers: values(text, "NAS-Identifiers, exact or globs with * and ?"),
    groups: values(Type.Integer({ minimum: 1 }), "group ids of the account: the user is in one of them"),
    methods: values(StringEnum(AUTH_METHODS), "how the login was authenticated"),
    portal_methods: values(
      StringEnum(PORTAL_METHODS),
      "how the guest signed in on a captive portal just before this login",
    ),
    days: values(StringEnum(DAYS), "local weekdays (the network's time zone, else the account's)"),
    times: values(
      Type.String({ pattern: "^\\d\\d:\\d\\d-\\d\\d:\\d\\d$", examples: ["09:00-17:00"] }),
      '"HH:MM-HH:MM" local times, end excluded; a start after the end runs over midnight',
    ),
    device: Type.Optional(
      StringEnum(DEVICE_STATES, {
        description:
          "whether the Calling-Station-Id is an enabled, unexpired registered device of the account",
      }),
    ),
  },
  {
    $id: "PolicyConditions",
    additionalProperties: false,
    description:
      "All given conditions must hold; within one, any listed value matches. Empty: every request.",
  },
);

const Outcome = Type.Object(
  {
    action: StringEnum(ACTIONS),
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_REASON,
        description: "reject: the Reply-Message and the auth log reason",
      }),
    ),
    vlan: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 4094,
        description:
          "RFC 3580 3.31: Tunnel-Type:1=VLAN, Tunnel-Medium-Type:1=IEEE-802, Tunnel-Private-Group-Id:1=<vlan>",
      }),
    ),
    filter_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_VALUE_LENGTH, description: "Filter-Id (RFC 2865 5.11)" }),
    ),
    aruba_user_role: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_VALUE_LENGTH })),
    airespace_acl_name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_VALUE_LENGTH })),
    cisco_avpairs: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_VALUE_LENGTH }), {
        minItems: 1,
        maxItems: MAX_AVPAIRS,
      }),
    ),
    plan_id: Type.Optional(Type.Integer({ minimum: 1, description: "a plan of the account" })),
    session_timeout: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_TIMEOUT,
        description: "never lengthens a cap already in the reply",
      }),
    ),
    idle_timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT })),
  },
  {
    $id: "PolicyOutcome",
    additionalProperties: false,
    description:
      "reject (with a reason) or accept; an accept's attributes replace the reply items of the same name, Session-Timeout keeps the smaller",
  },
);

const Warning = Type.Object(
  {
    policy_id: Type.Unsafe<number | null>({
      type: ["integer", "null"],
      description: "null: the default rule",
    }),
    kind: StringEnum(["unreachable", "overlap"] as const),
    earlier_id: Type.Integer(),
    earlier_name: Type.String(),
    message: Type.String(),
  },
  { $id: "PolicyWarning" },
);

const Policy = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    position: Type.Integer({
      description: "1-based evaluation order; the default rule comes after the last",
    }),
    conditions: Type.Ref("PolicyConditions"),
    outcome: Type.Ref("PolicyOutcome"),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
    warnings: Type.Array(Type.Ref("PolicyWarning")),
  },
  { $id: "Policy" },
);

const DefaultPolicy = Type.Object(
  {
    name: Type.Literal("default"),
    position: Type.Integer(),
    outcome: Type.Ref("PolicyOutcome"),
    time_zone: Type.Unsafe<string | null>({
      type: ["string", "null"],
      description: "the account's IANA time zone (networks without their own); null: UTC",
    }),
    warnings: Type.Array(Type.Ref("PolicyWarning")),
  },
  { $id: "DefaultPolicy" },
);

const PolicyList = Type.Object(
  {
    data: Type.Array(Type.Ref("Policy")),
    total: Type.Integer(),
    default: Type.Ref("DefaultPolicy"),
    warnings: Type.Array(Type.Ref("PolicyWarning")),
  },
  { $id: "PolicyList" },
);

const name = Type.String({ minLength: 1, maxLength: MAX_POLICY_NAME });
const description = Type.String({ maxLength: MAX_POLICY_DESCRIPTION });
const position = Type.Integer({ minimum: 1, maximum: 100_000, description: "1-based; default: last" });

const CreatePolicy = Type.Object(
  {
    name,
    description: Type.Optional(description),
    position: Type.Optional(position),
    conditions: Type.Optional(Type.Ref("PolicyConditions")),
    outcome: Type.Ref("PolicyOutcome"),
  },
  { additionalProperties: false },
);
const UpdatePolicy = Type.Partial(CreatePolicy, { additionalProperties: false });
const Move = Type.Object({ position }, { additionalProperties: false });
const Reorder = Type.Object(
  {
    ids: Type.Array(Type.Integer({ minimum: 1 }), {
      maxItems: 1000,
      description: "every policy id, in the new order",
    }),
  },
  { additionalProperties: false },
);
const SetDefault = Type.Object(
  {
    outcome: Type.Optional(Type.Ref("PolicyOutcome")),
    time_zone: Type.Optional(
      Type.Unsafe<string | null>({
        type: ["string", "null"],
        maxLength: 64,
        description: "IANA name; null: UTC",
      }),
    ),
  },
  { additionalProperties: false },
);

const ExplainBody = Type.Object(
  {
    network_id: Id("the network the request comes from"),
    username: Type.Optional(Type.String({ maxLength: 253 })),
    ssid: Type.Optional(Type.String({ maxLength: MAX_VALUE_LENGTH })),
    nas_identifier: Type.Optional(Type.String({ maxLength: MAX_VALUE_LENGTH })),
    method: Type.Optional(StringEnum(AUTH_METHODS)),
    portal_method: Type.Optional(StringEnum(PORTAL_METHODS)),
    time: Type.Optional(
      Type.Union([Type.String({ maxLength: 40 }), Type.Integer({ minimum: 0 })], {
        description: "ISO 8601 date-time with offset, or Unix seconds; default: now",
      }),
    ),
    mac: Type.Optional(Type.String({ maxLength: 64, description: "the device's MAC (Calling-Station-Id)" })),
  },
  { additionalProperties: false },
);

const Explanation = Type.Object(
  {
    facts: Type.Record(Type.String(), Type.Unknown()),
    matched: Type.Object({
      id: Type.Unsafe<number | null>({ type: ["integer", "null"] }),
      name: Type.String(),
      position: Type.Integer(),
      default: Type.Boolean(),
    }),
    skipped: Type.Array(
      Type.Object({
        id: Type.Integer(),
        name: Type.String(),
        position: Type.Integer(),
        condition: Type.String(),
        expected: Type.Unknown(),
        actual: Type.Unknown(),
        message: Type.String(),
      }),
    ),
    decision: StringEnum(ACTIONS),
    reason: Type.Unsafe<string | null>({ type: ["string", "null"] }),
    reply: Type.Array(Type.Object({ attribute: Type.String(), value: Type.String() })),
  },
  { $id: "PolicyExplanation" },
);

const Params = Type.Object({ policy_id: Id("the policy's id") }, { additionalProperties: false });
type Params = Static<typeof Params>;

export async function policiesRoutes(app: FastifyInstance, { policies }: { policies: PoliciesService }) {
  for (const schema of [Conditions, Outcome, Warning, Policy, DefaultPolicy, PolicyList, Explanation])
    app.addSchema(schema);
  const tags = ["policies"];
  const read = { permission: ["policies", "read"] as ["policies", "read"] };
  const write = { permission: ["policies", "write"] as ["policies", "write"] };
  const listReply = { 200: Type.Ref("PolicyList"), ...errorResponses };

  app.get(
    "/api/policies",
    { config: read, schema: { tags, summary: "List the policies in evaluation order", response: listReply } },
    async (request) => policies.list(request.principal.accountId),
  );

  app.get(
    "/api/policies/default",
    {
      config: read,
      schema: {
        tags,
        summary: "The default rule and the account's time zone",
        response: { 200: Type.Ref("DefaultPolicy"), ...errorResponses },
      },
    },
    async (request) => policies.getDefault(request.principal.accountId),
  );

  app.put<{ Body: Static<typeof SetDefault> }>(
    "/api/policies/default",
    {
      config: write,
      schema: {
        tags,
        summary: "Change the default rule's outcome (it stays last) or the account's time zone",
        body: SetDefault,
        response: { 200: Type.Ref("DefaultPolicy"), ...errorResponses },
      },
    },
    async (request) => policies.setDefault(request.principal.accountId, request.body),
  );

  app.post<{ Body: Static<typeof ExplainBody> }>(
    "/api/policies/explain",
    {
      config: read,
      schema: {
        tags,
        summary:
          "Which rule a request with these facts meets, why not the earlier ones, and the reply; nothing sent or recorded",
        body: ExplainBody,
        response: { 200: Type.Ref("PolicyExplanation"), ...errorResponses },
      },
    },
    async (request) => policies.explain(request.principal.accountId, request.body),
  );

  app.put<{ Body: Static<typeof Reorder> }>(
    "/api/policies/order",
    {
      config: write,
      schema: { tags, summary: "Reorder every policy at once", body: Reorder, response: listReply },
    },
    async (request) => policies.reorder(request.principal.accountId, request.body.ids),
  );

  app.get<{ Params: Params }>(
    "/api/policies/:policy_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get a policy",
        params: Params,
        response: { 200: Type.Ref("Policy"), ...errorResponses },
      },
    },
    async (request) => policies.get(request.principal.accountId, request.params.policy_id),
  );

  app.post<{ Body: Static<typeof CreatePolicy> }>(
    "/api/policies",
    {
      config: write,
      schema: {
        tags,
        summary: "Create a policy",
        body: CreatePolicy,
        response: { 201: Type.Ref("Policy"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const policy = await policies.create(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/policies/${policy.id}`).send(policy);
    },
  );

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: Params; Body: Static<typeof UpdatePolicy> }>({
      method,
      url: "/api/policies/:policy_id",
      config: write,
      schema: {
        tags,
        summary: "Update a policy (conditions and outcome are replaced whole; position moves it)",
        params: Params,
        body: UpdatePolicy,
        response: { 200: Type.Ref("Policy"), ...errorResponses },
      },
      handler: (request) =>
        policies.update(request.principal.accountId, request.params.policy_id, request.body),
    });
  }

  app.post<{ Params: Params; Body: Static<typeof Move> }>(
    "/api/policies/:policy_id/move",
    {
      config: write,
      schema: {
        tags,
        summary: "Move a policy to a position",
        params: Params,
        body: Move,
        response: listReply,
      },
    },
    async (request) =>
      policies.move(request.principal.accountId, request.params.policy_id, request.body.position),
  );

  app.delete<{ Params: Params }>(
    "/api/policies/:policy_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete a policy",
        params: Params,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await policies.delete(request.principal.accountId, request.params.policy_id);
      return reply.code(204).send();
    },
  );
}

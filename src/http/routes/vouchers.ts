// /api/vouchers: thin translation between HTTP and the vouchers service.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import {
  CODE_ALPHABET,
  CODE_PATTERN,
  DEFAULT_USAGE_LIMIT,
  MAX_BATCH,
  MAX_CODE,
  MAX_DATA_LIMIT,
  MAX_PREFIX,
  MAX_USAGE_LIMIT,
  MAX_VALIDITY,
  MIN_SESSION_TIMEOUT,
  MIN_VALIDITY,
  PREFIX_PATTERN,
  VOUCHER_SORT_FIELDS,
  VOUCHER_STATUSES,
} from "../../core/vouchers/rules.ts";
import type { VouchersService } from "../../core/vouchers/service.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery, StringEnum } from "../schemas.ts";

/**
 * `type: [T, "null"]` rather than anyOf: fast-json-stringify serializes it without trying each
 * branch, which matters for 10,000-voucher batch answers.
 */
function Nullable<T extends number | string>(type: "integer" | "string", options: object = {}) {
  return Type.Unsafe<T | null>({ ...options, type: [type, "null"] });
}

const Voucher = Type.Object(
  {
    id: Type.Integer(),
    code: Type.String({ description: "the guest's username and password; matched ignoring case" }),
    status: StringEnum(VOUCHER_STATUSES, {
      description:
        "unused (never logged in), active (first login done), expired (`expires` passed), " +
        "exhausted (every device slot taken), disabled",
    }),
    validity: Type.Integer({ description: "seconds, counted from the first successful login" }),
    usage_limit: Type.Integer({ description: "distinct client devices (MAC addresses); 0 = unlimited" }),
    session_timeout: Nullable<number>("integer", {
      description: "longest single session in seconds; null = no cap",
    }),
    batch_id: Nullable<number>("integer", {
      description: "the batch that created it; null for single vouchers",
    }),
    created: Type.String({ format: "date-time" }),
    first_used: Nullable<string>("string", { format: "date-time", description: "first successful login" }),
    expires: Nullable<string>("string", { format: "date-time", description: "first_used + validity" }),
    devices_used: Type.Integer({ description: "distinct devices that have logged in" }),
    data_limit: Nullable<number>("integer", {
      description: "octets in plus out over every session of the voucher; null = unlimited",
    }),
  },
  { $id: "Voucher" },
);

const terms = {
  validity: Type.Integer({
    minimum: MIN_VALIDITY,
    maximum: MAX_VALIDITY,
    description: `seconds (${MIN_VALIDITY} to ${MAX_VALIDITY}, one year), counted from the first login`,
  }),
  usage_limit: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_USAGE_LIMIT,
      default: DEFAULT_USAGE_LIMIT,
      description: "distinct client devices that may log in with the code; 0 = unlimited",
    }),
  ),
  session_timeout: Type.Optional(
    Nullable<number>("integer", {
      minimum: MIN_SESSION_TIMEOUT,
      maximum: MAX_VALIDITY,
      description: `longest single session in seconds, ${MIN_SESSION_TIMEOUT} up to the validity; null = no cap`,
    }),
  ),
  data_limit: Type.Optional(
    Nullable<number>("integer", {
      minimum: 1,
      maximum: MAX_DATA_LIMIT,
      description:
        "octets in plus out (gigawords included) over every session of the voucher; refused at login " +
        "and disconnected once used up; sent as what remains (ChilliSpot-Max-Total-Octets, " +
        "Mikrotik-Total-Limit); null = unlimited",
    }),
  ),
};

const UpdateVoucher = Type.Object(
  {
    status: StringEnum(["disabled", "enabled"] as const, {
      description:
        "disabled: refused at login, and its open sessions are disconnected; enabled: usable again " +
        "(its status follows its first use, devices and expiry)",
    }),
  },
  { additionalProperties: false },
);

const CreateVoucher = Type.Object(
  {
    ...terms,
    code: Type.Optional(
      Type.String({
        pattern: CODE_PATTERN,
        description: `4-${MAX_CODE} of A-Z a-z 0-9, stored upper-case; generated when absent`,
      }),
    ),
  },
  { additionalProperties: false },
);

const CreateBatch = Type.Object(
  {
    plan_id: Type.Optional(
      Nullable<number>("integer", {
        minimum: 1,
        description: "the plan of the batch's vouchers (a plan of this account, 404 otherwise), or null",
      }),
    ),
    quantity: Type.Integer({ minimum: 1, maximum: MAX_BATCH, description: "vouchers to generate" }),
    prefix: Type.Optional(
      Type.String({
        maxLength: MAX_PREFIX,
        pattern: PREFIX_PATTERN,
        description: `0-${MAX_PREFIX} of A-Z a-z 0-9, stored upper-case; followed by 8 of ${CODE_ALPHABET}`,
      }),
    ),
    ...terms,
  },
  { additionalProperties: false },
);

const BatchCreated = Type.Object({
  batch_id: Type.Integer(),
  quantity: Type.Integer(),
  plan_id: Nullable<number>("integer", { description: "the batch's plan; null: none" }),
  data: Type.Array(Type.Ref("Voucher")),
});

const BatchParams = Type.Object({ batch_id: Id("the batch's id") }, { additionalProperties: false });
const UpdateBatch = Type.Object(
  { plan_id: Nullable<number>("integer", { minimum: 1, description: "a plan of this account, or null" }) },
  { additionalProperties: false },
);
const BatchPlan = Type.Object({
  batch_id: Type.Integer(),
  plan_id: Nullable<number>("integer"),
});

const ListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(StringEnum(VOUCHER_STATUSES)),
    batch_id: Type.Optional(Id("only the vouchers of this batch")),
    search: Type.Optional(
      Type.String({ maxLength: MAX_CODE, description: "case-insensitive substring of the code" }),
    ),
    sort: SortQuery(VOUCHER_SORT_FIELDS),
  },
  { additionalProperties: false },
);

const VoucherParams = Type.Object({ voucher_id: Id("the voucher's id") }, { additionalProperties: false });
type VoucherParams = Static<typeof VoucherParams>;

export async function vouchersRoutes(app: FastifyInstance, { vouchers }: { vouchers: VouchersService }) {
  app.addSchema(Voucher);
  const tags = ["vouchers"];
  const read = { permission: ["vouchers", "read"] as ["vouchers", "read"] };
  const write = { permission: ["vouchers", "write"] as ["vouchers", "write"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/vouchers",
    {
      config: read,
      schema: {
        tags,
        summary: "List vouchers",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("Voucher")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50, status, batch_id, search, sort } = request.query;
      const filter = { status, batchId: batch_id, search };
      return vouchers.list(request.principal.accountId, filter, { page, limit }, sort);
    },
  );

  app.get<{ Params: VoucherParams }>(
    "/api/vouchers/:voucher_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get a voucher",
        params: VoucherParams,
        response: { 200: Type.Ref("Voucher"), ...errorResponses },
      },
    },
    async (request) => vouchers.get(request.principal.accountId, request.params.voucher_id),
  );

  app.post<{ Body: Static<typeof CreateVoucher> }>(
    "/api/vouchers",
    {
      config: write,
      schema: {
        tags,
        summary: "Create a voucher",
        body: CreateVoucher,
        response: { 201: Type.Ref("Voucher"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const voucher = await vouchers.create(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/vouchers/${voucher.id}`).send(voucher);
    },
  );

  app.post<{ Body: Static<typeof CreateBatch> }>(
    "/api/vouchers/batch",
    {
      config: write,
      schema: {
        tags,
        summary: `Create 1-${MAX_BATCH} vouchers at once, all or nothing`,
        body: CreateBatch,
        response: { 201: BatchCreated, ...errorResponses },
      },
    },
    async (request, reply) => {
      const batch = await vouchers.createBatch(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/vouchers?batch_id=${batch.batch_id}`).send(batch);
    },
  );

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: Static<typeof BatchParams>; Body: Static<typeof UpdateBatch> }>({
      method,
      url: "/api/vouchers/batch/:batch_id",
      config: write,
      schema: {
        tags,
        summary: "Set or clear the plan of a batch's vouchers (applies from their next login)",
        params: BatchParams,
        body: UpdateBatch,
        response: { 200: BatchPlan, ...errorResponses },
      },
      handler: (request) =>
        vouchers.setBatchPlan(request.principal.accountId, request.params.batch_id, request.body.plan_id),
    });
  }

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: VoucherParams; Body: Static<typeof UpdateVoucher> }>({
      method,
      url: "/api/vouchers/:voucher_id",
      config: write,
      schema: {
        tags,
        summary: "Disable or enable a voucher",
        params: VoucherParams,
        body: UpdateVoucher,
        response: { 200: Type.Ref("Voucher"), ...errorResponses },
      },
      handler: (request) =>
        vouchers.setEnabled(
          request.principal.accountId,
          request.params.voucher_id,
          request.body.status === "enabled",
        ),
    });
  }

  app.delete<{ Params: VoucherParams }>(
    "/api/vouchers/:voucher_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete a voucher (its open sessions are disconnected)",
        params: VoucherParams,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await vouchers.delete(request.principal.accountId, request.params.voucher_id);
      return reply.code(204).send();
    },
  );
}

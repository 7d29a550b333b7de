// /api/devices: thin translation between HTTP and the devices service.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import { MAC_RULE } from "../../core/devices/mac.ts";
import {
  DEVICE_KINDS,
  DEVICE_SORT_FIELDS,
  DEVICE_STATUSES,
  MAX_DEVICE_DESCRIPTION,
  MAX_DEVICE_NAME,
  MAX_DEVICE_SEARCH,
} from "../../core/devices/rules.ts";
import type { DevicesService } from "../../core/devices/service.ts";
import { NO_CONTROL_CHARACTERS } from "../../core/shared/text.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery, StringEnum } from "../schemas.ts";

/** `type: [T, "null"]`, as the vouchers' schema writes nullable fields. */
function Nullable<T extends number | string>(type: "integer" | "string", options: object = {}) {
  return Type.Unsafe<T | null>({ ...options, type: [type, "null"] });
}

const Device = Type.Object(
  {
    id: Type.Integer(),
    mac: Type.String({ description: "lower-case, colon-separated; unique per account" }),
    name: Type.String(),
    description: Type.String(),
    status: StringEnum(DEVICE_STATUSES, {
      description: "a disabled device is refused MAC authentication, and its open sessions are disconnected",
    }),
    kind: StringEnum(DEVICE_KINDS, {
      description:
        "registered (by an operator, an import or its owner) or remembered (after a portal sign-in)",
    }),
    user_id: Nullable<number>("integer", { description: "the owning user; null: none" }),
    voucher_id: Nullable<number>("integer", { description: "the owning voucher; null: none" }),
    group_id: Nullable<number>("integer", {
      description: "a group whose check and reply items apply to the device (before its owner's groups)",
    }),
    portal_id: Nullable<number>("integer", {
      description: "remembered devices: the portal that remembered it",
    }),
    expires: Nullable<string>("string", {
      format: "date-time",
      description: "refused from then on; null: never",
    }),
    last_seen: Nullable<string>("string", {
      format: "date-time",
      description: "last MAC authentication accepted",
    }),
    last_network_id: Nullable<number>("integer", { description: "the network where it was last seen" }),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  { $id: "Device" },
);

const fields = {
  mac: Type.String({
    maxLength: 64,
    description: `the device's MAC address: ${MAC_RULE.replace(/^must be /, "")}`,
  }),
  name: Type.String({ maxLength: MAX_DEVICE_NAME, pattern: NO_CONTROL_CHARACTERS }),
  description: Type.String({ maxLength: MAX_DEVICE_DESCRIPTION, pattern: NO_CONTROL_CHARACTERS }),
  status: StringEnum(DEVICE_STATUSES),
  user_id: Type.Optional(
    Nullable<number>("integer", { minimum: 1, description: "a user of this account, or null" }),
  ),
  voucher_id: Type.Optional(
    Nullable<number>("integer", {
      minimum: 1,
      description: "a voucher of this account, or null (one owner at most)",
    }),
  ),
  group_id: Type.Optional(
    Nullable<number>("integer", { minimum: 1, description: "a group of this account, or null" }),
  ),
  expires: Type.Optional(
    Nullable<string>("string", {
      maxLength: 40,
      description: "ISO 8601 date or date-time, or Unix seconds; null: never",
    }),
  ),
};

const CreateDevice = Type.Object(
  {
    mac: fields.mac,
    name: Type.Optional(fields.name),
    description: Type.Optional(fields.description),
    status: Type.Optional(fields.status),
    user_id: fields.user_id,
    voucher_id: fields.voucher_id,
    group_id: fields.group_id,
    expires: fields.expires,
  },
  { additionalProperties: false },
);

const UpdateDevice = Type.Object(
  {
    mac: Type.Optional(fields.mac),
    name: Type.Optional(fields.name),
    description: Type.Optional(fields.description),
    status: Type.Optional(fields.status),
    user_id: fields.user_id,
    voucher_id: fields.voucher_id,
    group_id: fields.group_id,
    expires: fields.expires,
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(StringEnum(DEVICE_STATUSES)),
    kind: Type.Optional(StringEnum(DEVICE_KINDS)),
    user_id: Type.Optional(Id("only this user's devices")),
    voucher_id: Type.Optional(Id("only this voucher's devices")),
    group_id: Type.Optional(Id("only the devices in this group")),
    search: Type.Optional(
      Type.String({
        maxLength: MAX_DEVICE_SEARCH,
        description:
          "case-insensitive substring of the MAC (a whole MAC in any notation), name or description",
      }),
    ),
    sort: SortQuery(DEVICE_SORT_FIELDS),
  },
  { additionalProperties: false },
);

const DeviceParams = Type.Object({ device_id: Id("the device's id") }, { additionalProperties: false });
type DeviceParams = Static<typeof DeviceParams>;

export async function devicesRoutes(app: FastifyInstance, { devices }: { devices: DevicesService }) {
  app.addSchema(Device);
  const tags = ["devices"];
  const read = { permission: ["devices", "read"] as ["devices", "read"] };
  const write = { permission: ["devices", "write"] as ["devices", "write"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/devices",
    {
      config: read,
      schema: {
        tags,
        summary: "List devices",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("Device")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50, sort, ...filter } = request.query;
      return devices.list(request.principal.accountId, filter, { page, limit }, sort);
    },
  );

  app.get<{ Params: DeviceParams }>(
    "/api/devices/:device_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get a device",
        params: DeviceParams,
        response: { 200: Type.Ref("Device"), ...errorResponses },
      },
    },
    async (request) => devices.get(request.principal.accountId, request.params.device_id),
  );

  app.post<{ Body: Static<typeof CreateDevice> }>(
    "/api/devices",
    {
      config: write,
      schema: {
        tags,
        summary: "Register a device",
        body: CreateDevice,
        response: { 201: Type.Ref("Device"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const device = await devices.create(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/devices/${device.id}`).send(device);
    },
  );

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: DeviceParams; Body: Static<typeof UpdateDevice> }>({
      method,
      url: "/api/devices/:device_id",
      config: write,
      schema: {
        tags,
        summary: "Update a device (disabling it disconnects its open sessions)",
        params: DeviceParams,
        body: UpdateDevice,
        response: { 200: Type.Ref("Device"), ...errorResponses },
      },
      handler: (request) =>
        devices.update(request.principal.accountId, request.params.device_id, request.body),
    });
  }

  app.delete<{ Params: DeviceParams }>(
    "/api/devices/:device_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete (forget) a device; its open sessions are disconnected",
        params: DeviceParams,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await devices.delete(request.principal.accountId, request.params.device_id);
      return reply.code(204).send();
    },
  );
}

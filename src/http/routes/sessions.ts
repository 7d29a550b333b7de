// /api/sessions: who is online (and was), and the disconnect (RFC 5176 Disconnect-Request).
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import { DISCONNECT_RESULTS, SESSION_SORT_FIELDS, SESSION_STATUSES } from "../../core/sessions/rules.ts";
import type { SessionsService } from "../../core/sessions/service.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery, StringEnum } from "../schemas.ts";

const nullable = (type: "string" | "integer", options: object = {}) =>
  Type.Unsafe<string | number | null>({ ...options, type: [type, "null"] });

const Disconnect = Type.Object(
  {
    result: StringEnum(DISCONNECT_RESULTS, {
      description:
        "ack: Disconnect-ACK; nak: Disconnect-NAK; timeout: no valid answer after the retries; " +
        "error: nothing could be sent; pending: queued for the worker",
    }),
    cause: nullable("string", {
      description:
        "nak: the Error-Cause's name (RFC 5176 section 3.6), e.g. Session-Context-Not-Found; " +
        "error or pending: why",
    }),
    at: Type.String({ format: "date-time" }),
  },
  { $id: "SessionDisconnect", description: "The last disconnect sent for the session" },
);

const Coa = Type.Object(
  {
    result: StringEnum(["ack", "nak", "timeout", "error"] as const, {
      description:
        "ack: CoA-ACK (the change applies now); nak: CoA-NAK; timeout: no valid answer after the retries; error: nothing could be sent",
    }),
    cause: nullable("string", {
      description:
        "nak: the Error-Cause's name (RFC 5176 section 3.6), e.g. Unsupported-Attribute; error: why",
    }),
    at: Type.String({ format: "date-time" }),
    fallback: Type.Union(
      [
        Type.Object({
          result: Type.String({
            description: "the Disconnect-Request's outcome: ack, nak, timeout or error",
          }),
          cause: nullable("string"),
        }),
        Type.Null(),
      ],
      {
        description:
          "the Disconnect-Request sent after a NAK or no answer (the network's coa_fallback), or null",
      },
    ),
  },
  {
    $id: "SessionCoa",
    description: "The last CoA-Request (RFC 5176) sent for the session when what its user gets changed",
  },
);

const Session = Type.Object(
  {
    id: Type.Integer(),
    status: StringEnum(SESSION_STATUSES, { description: "active: no stop yet; closed" }),
    username: Type.String(),
    user_id: nullable("integer", { description: "the Wisp user; null for vouchers and unknown names" }),
    network_id: nullable("integer"),
    acct_session_id: Type.String({ description: "Acct-Session-Id, as the NAS names the session" }),
    nas_ip: Type.String({ description: "NAS-IP-Address (or the packet's source address)" }),
    ap_mac: nullable("string", { description: "the access point's MAC, from Called-Station-Id" }),
    client_mac: nullable("string", { description: "the device's MAC, from Calling-Station-Id" }),
    ssid: nullable("string"),
    framed_ip: nullable("string", { description: "Framed-IP-Address" }),
    start: nullable("string", { format: "date-time" }),
    update: nullable("string", { format: "date-time", description: "the last accounting received" }),
    stop: nullable("string", { format: "date-time" }),
    duration: Type.Integer({ description: "Acct-Session-Time, seconds" }),
    input_bytes: Type.Integer({ description: "octets from the device, gigawords included" }),
    output_bytes: Type.Integer({ description: "octets to the device, gigawords included" }),
    terminate_cause: nullable("string", { description: "Acct-Terminate-Cause of a closed session" }),
    disconnect: Type.Union([Type.Ref("SessionDisconnect"), Type.Null()]),
    coa: Type.Union([Type.Ref("SessionCoa"), Type.Null()]),
    device_name: nullable("string", {
      description: "the name of the account's device with this client MAC, when it has one",
    }),
  },
  { $id: "Session", description: "A RADIUS accounting session (a radacct row)" },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(StringEnum(SESSION_STATUSES)),
    user_id: Type.Optional(Id("only this user's sessions")),
    network_id: Type.Optional(Id("only this network's sessions")),
    ap_mac: Type.Optional(Type.String({ maxLength: 17, description: "only sessions on this access point" })),
    client_mac: Type.Optional(Type.String({ maxLength: 17, description: "only this device's sessions" })),
    since: Type.Optional(
      Type.String({
        maxLength: 40,
        description: "only sessions started at or after: ISO 8601 or Unix seconds",
      }),
    ),
    sort: SortQuery(SESSION_SORT_FIELDS, "-id", "id"),
  },
  { additionalProperties: false },
);

const SessionParams = Type.Object({ session_id: Id("the session's id") }, { additionalProperties: false });
type SessionParams = Static<typeof SessionParams>;

const DisconnectBody = Type.Object(
  {
    reason: Type.Optional(
      Type.String({
        maxLength: 100,
        description: "why, for the session.disconnected event; default operator",
      }),
    ),
  },
  { additionalProperties: false },
);

export async function sessionsRoutes(app: FastifyInstance, { sessions }: { sessions: SessionsService }) {
  app.addSchema(Disconnect);
  app.addSchema(Coa);
  app.addSchema(Session);
  const tags = ["sessions"];
  const read = { permission: ["sessions", "read"] as ["sessions", "read"] };
  const write = { permission: ["sessions", "write"] as ["sessions", "write"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/sessions",
    {
      config: read,
      schema: {
        tags,
        summary: "List sessions (status=active: who is online now)",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("Session")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50, sort, ...filter } = request.query;
      return sessions.list(request.principal.accountId, filter, { page, limit }, sort);
    },
  );

  app.get<{ Params: SessionParams }>(
    "/api/sessions/:session_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get a session",
        params: SessionParams,
        response: { 200: Type.Ref("Session"), ...errorResponses },
      },
    },
    async (request) => sessions.get(request.principal.accountId, request.params.session_id),
  );

  app.post<{ Params: SessionParams; Body: Static<typeof DisconnectBody> | undefined }>(
    "/api/sessions/:session_id/disconnect",
    {
      config: write,
      schema: {
        tags,
        summary: "Disconnect a session (RFC 5176 Disconnect-Request to its NAS); answers with the outcome",
        params: SessionParams,
        body: Type.Optional(DisconnectBody),
        response: {
          200: Type.Object({ session: Type.Ref("Session"), disconnect: Type.Ref("SessionDisconnect") }),
          ...errorResponses,
        },
      },
    },
    async (request) =>
      sessions.disconnect(
        request.principal.accountId,
        request.params.session_id,
        request.body?.reason ?? "operator",
      ),
  );
}

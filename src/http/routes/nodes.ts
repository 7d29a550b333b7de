// /api/nodes: the access points seen in accounting and authentication (core/nodes), read-only.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import { MAX_NODE_SEARCH, MAX_SSID, NODE_SORT_FIELDS } from "../../core/nodes/rules.ts";
import type { NodesService } from "../../core/nodes/service.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery } from "../schemas.ts";

const Node = Type.Object(
  {
    id: Type.String({ description: "the access point's MAC: its id in /api/nodes/{node_id}" }),
    mac: Type.String({ description: "from Called-Station-Id (RFC 3580 section 3.20), aa:bb:cc:dd:ee:ff" }),
    ssids: Type.Array(
      Type.Object({ ssid: Type.String(), seen: Type.Integer({ description: "records seen with it" }) }),
      {
        description: "the SSIDs seen with it, most seen first",
      },
    ),
    network_id: Type.Unsafe<number | null>({
      type: ["integer", "null"],
      description: "the network it was last seen on",
    }),
    network_name: Type.Unsafe<string | null>({ type: ["string", "null"] }),
    first_seen: Type.String({ format: "date-time" }),
    last_seen: Type.String({ format: "date-time" }),
    sessions_now: Type.Integer({ description: "open accounting sessions" }),
    authentications_24h: Type.Integer({ description: "authentications in the last 24 hours" }),
    failures_24h: Type.Integer({ description: "of those, refused" }),
  },
  { $id: "Node", description: "An access point Wisp has seen in accounting or authentication" },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    network_id: Type.Optional(Id("only access points seen on this network")),
    ssid: Type.Optional(
      Type.String({ maxLength: MAX_SSID, description: "only access points seen with this SSID" }),
    ),
    search: Type.Optional(
      Type.String({ maxLength: MAX_NODE_SEARCH, description: "case-insensitive substring of the MAC" }),
    ),
    sort: SortQuery(NODE_SORT_FIELDS, "mac", "mac"),
  },
  { additionalProperties: false },
);

const NodeParams = Type.Object(
  { node_id: Type.String({ maxLength: 17, description: "the access point's MAC, in any common notation" }) },
  { additionalProperties: false },
);

export async function nodesRoutes(app: FastifyInstance, { nodes }: { nodes: NodesService }) {
  app.addSchema(Node);
  const tags = ["nodes"];
  const read = { permission: ["nodes", "read"] as ["nodes", "read"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/nodes",
    {
      config: read,
      schema: {
        tags,
        summary: "List access points (nodes) seen in accounting and authentication",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("Node")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50, sort, network_id, ssid, search } = request.query;
      const filter = { networkId: network_id, ssid, search };
      return nodes.list(request.principal.accountId, filter, { page, limit }, sort);
    },
  );

  app.get<{ Params: Static<typeof NodeParams> }>(
    "/api/nodes/:node_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get an access point (node) by its MAC",
        params: NodeParams,
        response: { 200: Type.Ref("Node"), ...errorResponses },
      },
    },
    async (request) => nodes.get(request.principal.accountId, request.params.node_id),
  );
}

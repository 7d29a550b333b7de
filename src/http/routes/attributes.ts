// /api/attributes: a user's check (radcheck) and reply (radreply) items. Thin translation between
// HTTP and the attributes service, which applies the dictionary rules.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import {
  ALL_OPERATORS,
  ATTRIBUTE_SORT_FIELDS,
  MAX_ATTRIBUTE_NAME,
  MAX_VALUE_BYTES,
  SECRET_MASK,
  USER_TABLES,
} from "../../core/attributes/rules.ts";
import type { AttributesService } from "../../core/attributes/service.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery, StringEnum } from "../schemas.ts";

const SECRETS =
  "Secret values (any *-Password such as Cleartext-Password or NT-Password, password hashes, " +
  `attributes encrypted on the wire) are never returned: they read as "${SECRET_MASK}".`;

/** Field schemas shared with the group attributes of routes/groups.ts. */
export const attributeFields = {
  id: Type.Integer({ description: "the attribute_id; each table has its own id sequence" }),
  attribute: Type.String({
    minLength: 1,
    maxLength: MAX_ATTRIBUTE_NAME,
    description:
      "a RADIUS dictionary attribute (incl. WISPr, ChilliSpot, MikroTik, Microsoft vendor attributes), " +
      "matched ignoring case and stored with the dictionary's spelling",
  }),
  operator: StringEnum(ALL_OPERATORS, {
    description: "check tables: == := += != > >= < <= =~ !~ =* !*; reply tables: = := +=",
  }),
  value: Type.String({
    maxLength: MAX_VALUE_BYTES,
    description:
      `at most ${MAX_VALUE_BYTES} bytes, parsed for the attribute's type (integer or named value, ` +
      `date as Unix seconds, IP address, ...); not wrapped in quotes or backticks, no %{. ${SECRETS}`,
  }),
  /** The value as answered. */
  storedValue: Type.String({ description: `the value. ${SECRETS}` }),
};

const Attribute = Type.Object(
  {
    id: attributeFields.id,
    userid: Type.Integer({ description: "the owning user's id" }),
    attribute: Type.String(),
    operator: attributeFields.operator,
    value: attributeFields.storedValue,
    table: StringEnum(USER_TABLES),
  },
  { $id: "Attribute" },
);

const table = StringEnum(USER_TABLES, {
  description: "radcheck: compared with the request or set as control items; radreply: sent back",
});

const CreateAttribute = Type.Object(
  {
    userid: Id("the user's id"),
    attribute: attributeFields.attribute,
    operator: attributeFields.operator,
    value: attributeFields.value,
    table,
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    userid: Id("the user's id"),
    table: Type.Optional(StringEnum(USER_TABLES, { description: "omitted: radcheck rows, then radreply" })),
    ...PageQuery,
    sort: SortQuery(ATTRIBUTE_SORT_FIELDS, "table, then id", "table, then id"),
  },
  { additionalProperties: false },
);

const TableQuery = Type.Object(
  { table: StringEnum(USER_TABLES, { description: "the table the id belongs to" }) },
  { additionalProperties: false },
);

const AttributeParams = Type.Object(
  { attribute_id: Id("the attribute's id in its table") },
  { additionalProperties: false },
);
type AttributeParams = Static<typeof AttributeParams>;

export async function attributesRoutes(
  app: FastifyInstance,
  { attributes }: { attributes: AttributesService },
) {
  app.addSchema(Attribute);
  const tags = ["attributes"];
  const read = { permission: ["attributes", "read"] as ["attributes", "read"] };
  const write = { permission: ["attributes", "write"] as ["attributes", "write"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/attributes",
    {
      config: read,
      schema: {
        tags,
        summary: "List a user's attributes",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("Attribute")), ...errorResponses },
      },
    },
    async (request) => {
      const { userid, table, page = 1, limit = 50, sort } = request.query;
      return attributes.listForUser(request.principal.accountId, userid, table, { page, limit }, sort);
    },
  );

  app.get<{ Params: AttributeParams; Querystring: Static<typeof TableQuery> }>(
    "/api/attributes/:attribute_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get one attribute",
        params: AttributeParams,
        querystring: TableQuery,
        response: { 200: Type.Ref("Attribute"), ...errorResponses },
      },
    },
    async (request) =>
      attributes.getForUser(request.principal.accountId, request.query.table, request.params.attribute_id),
  );

  app.post<{ Body: Static<typeof CreateAttribute> }>(
    "/api/attributes",
    {
      config: write,
      schema: {
        tags,
        summary: "Add an attribute to a user",
        description: "An identical row (same attribute, operator and value) already there answers 409.",
        body: CreateAttribute,
        response: { 201: Type.Ref("Attribute"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const created = await attributes.addToUser(request.principal.accountId, request.body);
      return reply
        .code(201)
        .header("Location", `/api/attributes/${created.id}?table=${created.table}`)
        .send(created);
    },
  );

  app.delete<{ Params: AttributeParams; Querystring: Static<typeof TableQuery> }>(
    "/api/attributes/:attribute_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete an attribute",
        params: AttributeParams,
        querystring: TableQuery,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await attributes.removeFromUser(
        request.principal.accountId,
        request.query.table,
        request.params.attribute_id,
      );
      return reply.code(204).send();
    },
  );
}

// /api/groups: groups, their members and their check/reply attributes. Thin translation between
// HTTP and the groups and attributes services.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import { ATTRIBUTE_SORT_FIELDS, GROUP_TABLES } from "../../core/attributes/rules.ts";
import type { AttributesService } from "../../core/attributes/service.ts";
import {
  DEFAULT_PRIORITY,
  GROUP_NAME_PATTERN,
  GROUP_SORT_FIELDS,
  MAX_DESCRIPTION,
  MAX_PRIORITY,
  MAX_SEARCH,
  MEMBER_SORT_FIELDS,
  MIN_PRIORITY,
} from "../../core/groups/rules.ts";
import type { GroupsService } from "../../core/groups/service.ts";
import { NO_CONTROL_CHARACTERS } from "../../core/shared/text.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery, StringEnum } from "../schemas.ts";
import { attributeFields } from "./attributes.ts";

const Group = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
    plan_id: Type.Unsafe<number | null>({
      type: ["integer", "null"],
      description: "the members' plan when they have none of their own; null: none",
    }),
  },
  { $id: "Group" },
);

const Membership = Type.Object(
  {
    group_id: Type.Integer(),
    userid: Type.Integer(),
    username: Type.String(),
    priority: Type.Integer({ description: "lower is evaluated first" }),
  },
  { $id: "Membership" },
);

const GroupAttribute = Type.Object(
  {
    id: attributeFields.id,
    group_id: Type.Integer(),
    attribute: Type.String(),
    operator: attributeFields.operator,
    value: attributeFields.storedValue,
    table: StringEnum(GROUP_TABLES),
  },
  { $id: "GroupAttribute" },
);

const fields = {
  name: Type.String({
    pattern: GROUP_NAME_PATTERN,
    description: "1-64 of A-Z a-z 0-9 @ . _ : -; unique per account ignoring case",
  }),
  description: Type.String({ maxLength: MAX_DESCRIPTION, pattern: NO_CONTROL_CHARACTERS }),
  plan_id: Type.Unsafe<number | null>({
    type: ["integer", "null"],
    minimum: 1,
    description: "a plan of this account (404 otherwise), or null",
  }),
};

const CreateGroup = Type.Object(
  {
    name: fields.name,
    description: Type.Optional(fields.description),
    plan_id: Type.Optional(fields.plan_id),
  },
  { additionalProperties: false },
);

const UpdateGroup = Type.Object(
  {
    name: Type.Optional(fields.name),
    description: Type.Optional(fields.description),
    plan_id: Type.Optional(fields.plan_id),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    search: Type.Optional(
      Type.String({
        maxLength: MAX_SEARCH,
        description: "case-insensitive substring of name or description",
      }),
    ),
    sort: SortQuery(GROUP_SORT_FIELDS),
  },
  { additionalProperties: false },
);

const MembersQuery = Type.Object(
  { ...PageQuery, sort: SortQuery(MEMBER_SORT_FIELDS, "priority, then username", "userid") },
  { additionalProperties: false },
);

const AddMember = Type.Object(
  {
    userid: Id("the user's id"),
    priority: Type.Optional(
      Type.Integer({
        minimum: MIN_PRIORITY,
        maximum: MAX_PRIORITY,
        default: DEFAULT_PRIORITY,
        description: "order in which FreeRADIUS evaluates the user's groups: lower first",
      }),
    ),
  },
  { additionalProperties: false },
);

const groupTable = StringEnum(GROUP_TABLES, {
  description: "radgroupcheck: compared with the request or set as control items; radgroupreply: sent back",
});

const CreateGroupAttribute = Type.Object(
  {
    attribute: attributeFields.attribute,
    operator: attributeFields.operator,
    value: attributeFields.value,
    table: groupTable,
  },
  { additionalProperties: false },
);

const GroupAttributesQuery = Type.Object(
  {
    table: Type.Optional(
      StringEnum(GROUP_TABLES, { description: "omitted: radgroupcheck, then radgroupreply" }),
    ),
    ...PageQuery,
    sort: SortQuery(ATTRIBUTE_SORT_FIELDS, "table, then id", "table, then id"),
  },
  { additionalProperties: false },
);

const TableQuery = Type.Object(
  { table: StringEnum(GROUP_TABLES, { description: "the table the id belongs to" }) },
  { additionalProperties: false },
);

const GroupParams = Type.Object({ group_id: Id("the group's id") }, { additionalProperties: false });
const MemberParams = Type.Object(
  { group_id: Id("the group's id"), userid: Id("the user's id") },
  { additionalProperties: false },
);
const GroupAttributeParams = Type.Object(
  { group_id: Id("the group's id"), attribute_id: Id("the attribute's id in its table") },
  { additionalProperties: false },
);
type GroupParams = Static<typeof GroupParams>;
type MemberParams = Static<typeof MemberParams>;
type GroupAttributeParams = Static<typeof GroupAttributeParams>;

export async function groupsRoutes(
  app: FastifyInstance,
  { groups, attributes }: { groups: GroupsService; attributes: AttributesService },
) {
  app.addSchema(Group);
  app.addSchema(Membership);
  app.addSchema(GroupAttribute);
  const tags = ["groups"];
  const read = { permission: ["groups", "read"] as ["groups", "read"] };
  const write = { permission: ["groups", "write"] as ["groups", "write"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/groups",
    {
      config: read,
      schema: {
        tags,
        summary: "List groups",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("Group")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50, search, sort } = request.query;
      return groups.list(request.principal.accountId, search, { page, limit }, sort);
    },
  );

  app.get<{ Params: GroupParams }>(
    "/api/groups/:group_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get a group",
        params: GroupParams,
        response: { 200: Type.Ref("Group"), ...errorResponses },
      },
    },
    async (request) => groups.get(request.principal.accountId, request.params.group_id),
  );

  app.post<{ Body: Static<typeof CreateGroup> }>(
    "/api/groups",
    {
      config: write,
      schema: {
        tags,
        summary: "Create a group",
        body: CreateGroup,
        response: { 201: Type.Ref("Group"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const group = await groups.create(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/groups/${group.id}`).send(group);
    },
  );

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: GroupParams; Body: Static<typeof UpdateGroup> }>({
      method,
      url: "/api/groups/:group_id",
      config: write,
      schema: {
        tags,
        summary:
          method === "PUT"
            ? "Update a group (only the fields sent change; a rename carries members and attributes)"
            : "Update a group (same as PUT)",
        params: GroupParams,
        body: UpdateGroup,
        response: { 200: Type.Ref("Group"), ...errorResponses },
      },
      handler: async (request) =>
        groups.update(request.principal.accountId, request.params.group_id, request.body),
    });
  }

  app.delete<{ Params: GroupParams }>(
    "/api/groups/:group_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete a group with its memberships and attributes (its users stay)",
        params: GroupParams,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await groups.delete(request.principal.accountId, request.params.group_id);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: GroupParams; Querystring: Static<typeof MembersQuery> }>(
    "/api/groups/:group_id/users",
    {
      config: read,
      schema: {
        tags,
        summary: "List a group's members, by priority then username",
        params: GroupParams,
        querystring: MembersQuery,
        response: { 200: ListOf(Type.Ref("Membership")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50, sort } = request.query;
      const { group_id } = request.params;
      return groups.listMembers(request.principal.accountId, group_id, { page, limit }, sort);
    },
  );

  app.get<{ Params: MemberParams }>(
    "/api/groups/:group_id/users/:userid",
    {
      config: read,
      schema: {
        tags,
        summary: "Get one membership",
        params: MemberParams,
        response: { 200: Type.Ref("Membership"), ...errorResponses },
      },
    },
    async (request) =>
      groups.getMember(request.principal.accountId, request.params.group_id, request.params.userid),
  );

  app.post<{ Params: GroupParams; Body: Static<typeof AddMember> }>(
    "/api/groups/:group_id/users",
    {
      config: write,
      schema: {
        tags,
        summary: "Add a user to a group",
        description: "A user already in the group answers 409.",
        params: GroupParams,
        body: AddMember,
        response: { 201: Type.Ref("Membership"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const member = await groups.addMember(
        request.principal.accountId,
        request.params.group_id,
        request.body,
      );
      return reply
        .code(201)
        .header("Location", `/api/groups/${member.group_id}/users/${member.userid}`)
        .send(member);
    },
  );

  app.delete<{ Params: MemberParams }>(
    "/api/groups/:group_id/users/:userid",
    {
      config: write,
      schema: {
        tags,
        summary: "Remove a user from a group (the user stays)",
        params: MemberParams,
        response: { 204: Type.Null({ description: "removed" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await groups.removeMember(request.principal.accountId, request.params.group_id, request.params.userid);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: GroupParams; Querystring: Static<typeof GroupAttributesQuery> }>(
    "/api/groups/:group_id/attributes",
    {
      config: read,
      schema: {
        tags,
        summary: "List a group's attributes",
        params: GroupParams,
        querystring: GroupAttributesQuery,
        response: { 200: ListOf(Type.Ref("GroupAttribute")), ...errorResponses },
      },
    },
    async (request) => {
      const { table, page = 1, limit = 50, sort } = request.query;
      const { group_id } = request.params;
      return attributes.listForGroup(request.principal.accountId, group_id, table, { page, limit }, sort);
    },
  );

  app.get<{ Params: GroupAttributeParams; Querystring: Static<typeof TableQuery> }>(
    "/api/groups/:group_id/attributes/:attribute_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get one group attribute",
        params: GroupAttributeParams,
        querystring: TableQuery,
        response: { 200: Type.Ref("GroupAttribute"), ...errorResponses },
      },
    },
    async (request) => {
      const { group_id, attribute_id } = request.params;
      return attributes.getForGroup(request.principal.accountId, group_id, request.query.table, attribute_id);
    },
  );

  app.post<{ Params: GroupParams; Body: Static<typeof CreateGroupAttribute> }>(
    "/api/groups/:group_id/attributes",
    {
      config: write,
      schema: {
        tags,
        summary: "Add an attribute to a group",
        description: "An identical row (same attribute, operator and value) already there answers 409.",
        params: GroupParams,
        body: CreateGroupAttribute,
        response: { 201: Type.Ref("GroupAttribute"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { group_id } = request.params;
      const created = await attributes.addToGroup(request.principal.accountId, group_id, request.body);
      return reply
        .code(201)
        .header("Location", `/api/groups/${group_id}/attributes/${created.id}?table=${created.table}`)
        .send(created);
    },
  );

  app.delete<{ Params: GroupAttributeParams; Querystring: Static<typeof TableQuery> }>(
    "/api/groups/:group_id/attributes/:attribute_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete a group attribute",
        params: GroupAttributeParams,
        querystring: TableQuery,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { group_id, attribute_id } = request.params;
      await attributes.removeFromGroup(
        request.principal.accountId,
        group_id,
        request.query.table,
        attribute_id,
      );
      return reply.code(204).send();
    },
  );
}

// /api/users: thin translation between HTTP and the users service.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import { MAX_VALUE_BYTES } from "../../core/aaa/values.ts";
import { NO_CONTROL_CHARACTERS } from "../../core/shared/text.ts";
import {
  EMAIL_PATTERN,
  MAX_EMAIL,
  MAX_FULLNAME,
  MAX_PASSWORD,
  MAX_SEARCH,
  USER_SORT_FIELDS,
  USER_STATUSES,
  USERNAME_PATTERN,
} from "../../core/users/rules.ts";
import type { UsersService } from "../../core/users/service.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery, StringEnum } from "../schemas.ts";

const User = Type.Object(
  {
    id: Type.Integer(),
    username: Type.String(),
    email: Type.String(),
    fullname: Type.String(),
    status: StringEnum(USER_STATUSES),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
    plan_id: Type.Unsafe<number | null>({
      type: ["integer", "null"],
      description: "the user's own plan; null: its first group's with one (see /api/plans)",
    }),
  },
  { $id: "User" },
);

const fields = {
  username: Type.String({
    pattern: USERNAME_PATTERN,
    description: "1-64 of A-Z a-z 0-9 @ . _ : -; unique per account ignoring case",
  }),
  email: Type.String({ maxLength: MAX_EMAIL, pattern: EMAIL_PATTERN }),
  fullname: Type.String({ maxLength: MAX_FULLNAME, pattern: NO_CONTROL_CHARACTERS }),
  status: StringEnum(USER_STATUSES, { description: "a disabled user is rejected at login" }),
  password: Type.String({
    minLength: 1,
    maxLength: MAX_PASSWORD,
    writeOnly: true,
    description:
      "write-only; stored as the radcheck item Cleartext-Password := <password>, replacing any other password item",
  }),
  password_hash: Type.String({
    minLength: 1,
    maxLength: MAX_VALUE_BYTES,
    writeOnly: true,
    description:
      "write-only; a pre-hashed password instead of password: {SCHEME}<hash> as LDAP's userPassword holds it " +
      "({SSHA}, {SHA}, {MD5}, {SMD5}, {SHA256}, {SSHA512}, {crypt}, {X-PBKDF2}, {NTHASH}..., every header " +
      "FreeRADIUS's rlm_pap knows but {clear}), or a bare crypt(3) string ($1$, $5$, $6$, $2a$, $2b$, $2y$) " +
      "or PBKDF2 string ($pbkdf2-<digest>$..., $PBKDF2$...). Stored as the radcheck item " +
      "Password-With-Header := {SCHEME}<hash> ({crypt} or {X-PBKDF2} put in front of bare strings), replacing " +
      "any other password item. Such a user logs in with PAP (and EAP-TTLS/PAP, the portal); CHAP needs a " +
      "cleartext password and MS-CHAP a cleartext or {NTHASH} one. A hash Wisp cannot check is refused (400).",
  }),
  plan_id: Type.Unsafe<number | null>({
    type: ["integer", "null"],
    minimum: 1,
    description: "a plan of this account (404 otherwise), or null; it wins over the groups' plans",
  }),
};

const CreateUser = Type.Object(
  {
    username: fields.username,
    email: Type.Optional(fields.email),
    fullname: Type.Optional(fields.fullname),
    status: Type.Optional(fields.status),
    password: Type.Optional(fields.password),
    password_hash: Type.Optional(fields.password_hash),
    plan_id: Type.Optional(fields.plan_id),
  },
  { additionalProperties: false },
);

const UpdateUser = Type.Object(
  {
    username: Type.Optional(fields.username),
    email: Type.Optional(fields.email),
    fullname: Type.Optional(fields.fullname),
    status: Type.Optional(fields.status),
    password: Type.Optional(fields.password),
    password_hash: Type.Optional(fields.password_hash),
    plan_id: Type.Optional(fields.plan_id),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(fields.status),
    search: Type.Optional(
      Type.String({
        maxLength: MAX_SEARCH,
        description: "case-insensitive substring of username, email or fullname",
      }),
    ),
    sort: SortQuery(USER_SORT_FIELDS),
  },
  { additionalProperties: false },
);

const UserParams = Type.Object({ user_id: Id("the user's id") }, { additionalProperties: false });
type UserParams = Static<typeof UserParams>;

export async function usersRoutes(app: FastifyInstance, { users }: { users: UsersService }) {
  app.addSchema(User);
  const tags = ["users"];
  const read = { permission: ["users", "read"] as ["users", "read"] };
  const write = { permission: ["users", "write"] as ["users", "write"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/users",
    {
      config: read,
      schema: {
        tags,
        summary: "List users",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("User")), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { page = 1, limit = 50, status, search, sort } = request.query;
      const filter = { status, search };
      const body = await users.listJson(request.principal.accountId, filter, { page, limit }, sort);
      // Already JSON in the documented shape (the tests check it against the schema): sent as is.
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );

  app.get<{ Params: UserParams }>(
    "/api/users/:user_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get a user",
        params: UserParams,
        response: { 200: Type.Ref("User"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = await users.getJson(request.principal.accountId, request.params.user_id);
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );

  app.post<{ Body: Static<typeof CreateUser> }>(
    "/api/users",
    {
      config: write,
      schema: {
        tags,
        summary: "Create a user",
        body: CreateUser,
        response: { 201: Type.Ref("User"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const user = await users.create(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/users/${user.id}`).send(user);
    },
  );

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: UserParams; Body: Static<typeof UpdateUser> }>({
      method,
      url: "/api/users/:user_id",
      config: write,
      schema: {
        tags,
        summary:
          method === "PUT" ? "Update a user (only the fields sent change)" : "Update a user (same as PUT)",
        params: UserParams,
        body: UpdateUser,
        response: { 200: Type.Ref("User"), ...errorResponses },
      },
      handler: async (request) =>
        users.update(request.principal.accountId, request.params.user_id, request.body),
    });
  }

  app.delete<{ Params: UserParams }>(
    "/api/users/:user_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete a user, its attributes and group memberships",
        params: UserParams,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await users.delete(request.principal.accountId, request.params.user_id);
      return reply.code(204).send();
    },
  );
}

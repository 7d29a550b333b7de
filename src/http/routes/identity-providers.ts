// /api/identityproviders: an account's OpenID Connect and SAML identity providers (issue 26), with
// their group mappings. Thin translation to core/idp's service, which checks every field. The
// client secret is write-only: answers say only whether one is set.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import {
  IDP_KINDS,
  IDP_NAME_PATTERN,
  MAX_ATTRIBUTE,
  MAX_CLAIM,
  MAX_CLIENT_ID,
  MAX_CLIENT_SECRET,
  MAX_DISPLAY_NAME,
  MAX_DOMAINS,
  MAX_IDP_GROUP,
  MAX_MAPPINGS,
  MAX_METADATA,
  MAX_SCOPES,
  MAX_URL,
} from "../../core/idp/rules.ts";
import type { IdpService } from "../../core/idp/service.ts";
import { errorResponses, Id, ListOf, PageQuery, StringEnum } from "../schemas.ts";

const GroupMapping = Type.Object(
  {
    idp_group: Type.String({
      minLength: 1,
      maxLength: MAX_IDP_GROUP,
      description: "a group as the IdP names it (OIDC group claim value, SAML group attribute value)",
    }),
    group: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "the Wisp group (by name) it puts users in",
    }),
  },
  { additionalProperties: false },
);

const domains = (description: string) =>
  Type.Array(Type.String({ maxLength: 253 }), { maxItems: MAX_DOMAINS, description });

const IdentityProvider = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String({ description: "short name, the prefix of its users' names (<name>:<subject>)" }),
    display_name: Type.String({ description: "the button's text on the guest page and console login" }),
    kind: StringEnum(IDP_KINDS),
    enabled: Type.Boolean(),
    issuer: Type.String({
      description: "OIDC: the issuer URL (discovery at /.well-known/openid-configuration)",
    }),
    client_id: Type.String({ description: "OIDC: the client id registered at the IdP" }),
    client_secret_set: Type.Boolean({
      description: "OIDC: whether a client secret is set (it is write-only and never returned)",
    }),
    scopes: Type.String({ description: "OIDC: space-separated scopes, openid included" }),
    user_claim: Type.String({ description: "OIDC: the ID token claim that names the user (sub, oid...)" }),
    group_claim: Type.String({ description: "OIDC: the claim listing the user's groups; empty for none" }),
    allowed_domains: Type.Array(Type.String(), {
      description: "only verified email addresses of these domains may sign in; empty: any",
    }),
    metadata_url: Type.String({
      description: "SAML: where the IdP's metadata was read from; empty if uploaded",
    }),
    idp_entity_id: Type.String({ description: "SAML: the IdP's entity id, from its metadata" }),
    sso_url: Type.String({ description: "SAML: the IdP's single sign-on address, from its metadata" }),
    user_attribute: Type.String({ description: "SAML: the attribute naming the user; empty: the NameID" }),
    group_attribute: Type.String({ description: "SAML: the attribute listing the groups; empty for none" }),
    console_login: Type.Boolean({ description: "console single sign-on through this provider" }),
    admin_domains: Type.Array(Type.String(), {
      description:
        "console: a verified email of these domains without a console user gets one on first sign-in",
    }),
    redirect_uri: Type.String({
      description: "OIDC: the redirect URI to register at the IdP; SAML: the assertion consumer service",
    }),
    sp_entity_id: Type.String({ description: "SAML: Wisp's entity id for this provider" }),
    sp_metadata_url: Type.String({ description: "SAML: where the IdP reads Wisp's SP metadata" }),
    group_mappings: Type.Array(GroupMapping, { description: "IdP group -> Wisp group" }),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  {
    $id: "IdentityProvider",
    description: "An OpenID Connect or SAML 2.0 identity provider. The client secret is never returned.",
  },
);

const writable = {
  display_name: Type.String({ maxLength: MAX_DISPLAY_NAME }),
  enabled: Type.Boolean(),
  issuer: Type.String({ maxLength: MAX_URL }),
  client_id: Type.String({ maxLength: MAX_CLIENT_ID }),
  client_secret: Type.String({
    maxLength: MAX_CLIENT_SECRET,
    writeOnly: true,
    description: "OIDC: write-only; an empty string removes it",
  }),
  scopes: Type.String({ maxLength: MAX_SCOPES }),
  user_claim: Type.String({ maxLength: MAX_CLAIM }),
  group_claim: Type.String({ maxLength: MAX_CLAIM }),
  allowed_domains: domains("only verified emails of these domains may sign in; [] for any"),
  metadata_url: Type.String({
    maxLength: MAX_URL,
    description: "SAML: the IdP's metadata address, read now (bounded wait and size)",
  }),
  metadata: Type.String({
    maxLength: MAX_METADATA,
    writeOnly: true,
    description: "SAML: the IdP's metadata XML as uploaded (no DOCTYPE; one IDPSSODescriptor)",
  }),
  user_attribute: Type.String({ maxLength: MAX_ATTRIBUTE }),
  group_attribute: Type.String({ maxLength: MAX_ATTRIBUTE }),
  console_login: Type.Boolean(),
  admin_domains: domains("console users are created on first sign-in for verified emails of these domains"),
  group_mappings: Type.Array(GroupMapping, {
    maxItems: MAX_MAPPINGS,
    description: "replaces the whole mapping; [] removes it",
  }),
};
const optional = Object.fromEntries(
  Object.entries(writable).map(([key, schema]) => [key, Type.Optional(schema)]),
) as { [K in keyof typeof writable]: ReturnType<typeof Type.Optional<(typeof writable)[K]>> };

const nameField = Type.String({
  pattern: IDP_NAME_PATTERN.source,
  description: "1-20 of a-z 0-9 -, unique per account; fixed once created",
});
const CreateIdentityProvider = Type.Object(
  { name: nameField, kind: StringEnum(IDP_KINDS), ...optional },
  { additionalProperties: false },
);
const UpdateIdentityProvider = Type.Object(
  {
    name: Type.Optional(Type.String({ description: "cannot change; accepted when unchanged" })),
    kind: Type.Optional(Type.String({ description: "cannot change; accepted when unchanged" })),
    ...optional,
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
const ProviderParams = Type.Object(
  { provider_id: Id("the identity provider's id") },
  { additionalProperties: false },
);
type ProviderParams = Static<typeof ProviderParams>;

export async function identityProvidersRoutes(app: FastifyInstance, { idp }: { idp: IdpService }) {
  app.addSchema(IdentityProvider);
  const tags = ["identity providers"];
  const read = { permission: ["identityproviders", "read"] as ["identityproviders", "read"] };
  const write = { permission: ["identityproviders", "write"] as ["identityproviders", "write"] };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/identityproviders",
    {
      config: read,
      schema: {
        tags,
        summary: "List identity providers",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("IdentityProvider")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50 } = request.query;
      return idp.page(request.principal.accountId, { page, limit });
    },
  );

  app.get<{ Params: ProviderParams }>(
    "/api/identityproviders/:provider_id",
    {
      config: read,
      schema: {
        tags,
        summary: "Get an identity provider",
        params: ProviderParams,
        response: { 200: Type.Ref("IdentityProvider"), ...errorResponses },
      },
    },
    async (request) => idp.get(request.principal.accountId, request.params.provider_id),
  );

  app.post<{ Body: Static<typeof CreateIdentityProvider> }>(
    "/api/identityproviders",
    {
      config: write,
      schema: {
        tags,
        summary: "Create an identity provider",
        description:
          "OIDC needs issuer and client_id (its discovery is read at the first sign-in); SAML needs " +
          "metadata or metadata_url (read now). A duplicate name answers 409.",
        body: CreateIdentityProvider,
        response: { 201: Type.Ref("IdentityProvider"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const created = await idp.create(request.principal.accountId, request.body);
      return reply.code(201).header("Location", `/api/identityproviders/${created.id}`).send(created);
    },
  );

  for (const method of ["PUT", "PATCH"] as const) {
    app.route<{ Params: ProviderParams; Body: Static<typeof UpdateIdentityProvider> }>({
      method,
      url: "/api/identityproviders/:provider_id",
      config: write,
      schema: {
        tags,
        summary:
          method === "PUT"
            ? "Update an identity provider (only the fields sent change; name and kind are fixed)"
            : "Update an identity provider (same as PUT)",
        params: ProviderParams,
        body: UpdateIdentityProvider,
        response: { 200: Type.Ref("IdentityProvider"), ...errorResponses },
      },
      handler: async (request) =>
        idp.update(request.principal.accountId, request.params.provider_id, request.body),
    });
  }

  app.delete<{ Params: ProviderParams }>(
    "/api/identityproviders/:provider_id",
    {
      config: write,
      schema: {
        tags,
        summary: "Delete an identity provider with its group mapping (its users stay)",
        params: ProviderParams,
        response: { 204: Type.Null({ description: "deleted" }), ...errorResponses },
      },
    },
    async (request, reply) => {
      await idp.delete(request.principal.accountId, request.params.provider_id);
      return reply.code(204).send();
    },
  );
}

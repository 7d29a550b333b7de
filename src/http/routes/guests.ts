// /api/guests: users created by captive-portal registration and identity-provider sign-in, with
// how and where they registered (core/guests/registered.ts), read-only.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import type { RegisteredGuests } from "../../core/guests/registered.ts";
import {
  GUEST_METHODS,
  GUEST_SORT_FIELDS,
  GUEST_SOURCES,
  MAX_GUEST_SEARCH,
} from "../../core/guests/rules.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery, StringEnum } from "../schemas.ts";

const nullable = (type: "integer" | "string", description?: string) =>
  Type.Unsafe<number | string | null>({ type: [type, "null"], ...(description ? { description } : {}) });

const Guest = Type.Object(
  {
    id: Type.Integer({ description: "the user's id (/api/users/{user_id})" }),
    username: Type.String(),
    email: Type.String(),
    fullname: Type.String(),
    status: Type.String(),
    source: StringEnum(GUEST_SOURCES, {
      description: "portal: registered on a captive portal; idp: signed in with an identity provider",
    }),
    method: Type.Unsafe<string | null>({
      type: ["string", "null"],
      enum: [...GUEST_METHODS, null],
      description:
        "how: the portal's form (registration), a verification (email_code, email_link, sms, sponsor) or idp; null for guests registered before Wisp recorded it",
    }),
    portal: Type.Unsafe<{ id: number; name: string | null; network_id: number | null } | null>({
      type: ["object", "null"],
      properties: { id: { type: "integer" }, name: nullable("string"), network_id: nullable("integer") },
      required: ["id", "name", "network_id"],
      description: "where: the captive portal (and its network)",
    }),
    identity_provider: Type.Unsafe<{ id: number; name: string | null } | null>({
      type: ["object", "null"],
      properties: { id: { type: "integer" }, name: nullable("string") },
      required: ["id", "name"],
    }),
    client_mac: nullable("string", "the device it registered from, when the gateway said"),
    created: Type.String({ format: "date-time", description: "when it registered" }),
    updated: Type.String({ format: "date-time" }),
  },
  { $id: "Guest" },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    source: Type.Optional(StringEnum(GUEST_SOURCES)),
    method: Type.Optional(StringEnum(GUEST_METHODS)),
    portal_id: Type.Optional(Id("only guests of this captive portal")),
    identity_provider_id: Type.Optional(Id("only guests of this identity provider")),
    search: Type.Optional(
      Type.String({
        maxLength: MAX_GUEST_SEARCH,
        description: "case-insensitive substring of username, email or name",
      }),
    ),
    sort: SortQuery(GUEST_SORT_FIELDS),
  },
  { additionalProperties: false },
);

export async function guestsRoutes(app: FastifyInstance, { guests }: { guests: RegisteredGuests }) {
  app.addSchema(Guest);
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    "/api/guests",
    {
      config: { permission: ["guests", "read"] },
      schema: {
        tags: ["guests"],
        summary: "List guests: users created by portal registration and identity-provider sign-in",
        querystring: ListQuery,
        response: { 200: ListOf(Type.Ref("Guest")), ...errorResponses },
      },
    },
    async (request) => {
      const {
        page = 1,
        limit = 50,
        sort,
        source,
        method,
        portal_id,
        identity_provider_id,
        search,
      } = request.query;
      const filter = { source, method, portalId: portal_id, providerId: identity_provider_id, search };
      return guests.list(request.principal.accountId, filter, { page, limit }, sort);
    },
  );
}

// /api/account and /api/keys: the account a key belongs to (name, limits, counts) and its keys,
// masked as the console lists them. Read-only: keys are made and revoked in the console and CLI.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import type { AccountsService } from "../../core/accounts/service.ts";
import type { KeysService } from "../../core/keys/service.ts";
import { MAX_PAGE_SIZE } from "../../core/shared/pages.ts";
import { BODY_LIMIT } from "../root.ts";
import { errorResponses, ListOf, PageQuery } from "../schemas.ts";

const count = (description: string) => Type.Integer({ description });

const Account = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    created: Type.String({ format: "date-time" }),
    limits: Type.Object({
      requests_per_minute: Type.Integer({
        description: "this key's rate limit (its own, else the server's)",
      }),
      default_requests_per_minute: Type.Integer({
        description: "the server's default rate limit (RATE_LIMIT)",
      }),
      max_page_size: Type.Integer({ description: "the largest `limit` a list takes" }),
      max_body_bytes: Type.Integer({ description: "the largest request body" }),
    }),
    counts: Type.Object({
      users: count("all users, guests included"),
      guests: count("users created by portal registration or identity-provider sign-in"),
      groups: count("groups"),
      networks: count("networks (RADIUS clients)"),
      captive_portals: count("captive portals"),
      vouchers: count("vouchers"),
      devices: count("devices"),
      identity_providers: count("identity providers"),
      api_keys: count("API keys not revoked"),
      sessions_open: count("open accounting sessions"),
    }),
  },
  { $id: "Account" },
);

const ApiKey = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    masked: Type.String({
      description: "the key's prefix and last four characters; the key itself is never shown again",
    }),
    permissions: Type.Array(Type.String()),
    allow_ips: Type.Array(Type.String({ description: "CIDR" }), { description: "empty: any address" }),
    rate_limit: Type.Unsafe<number | null>({
      type: ["integer", "null"],
      description: "requests per minute; null: the server's default",
    }),
    created: Type.String({ format: "date-time" }),
    last_used: Type.Unsafe<string | null>({ type: ["string", "null"], format: "date-time" }),
    revoked: Type.Unsafe<string | null>({ type: ["string", "null"], format: "date-time" }),
  },
  { $id: "ApiKey" },
);

const KeysQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export async function accountRoutes(
  app: FastifyInstance,
  options: { accounts: AccountsService; keys: KeysService; defaultRateLimit: number },
) {
  app.addSchema(Account);
  app.addSchema(ApiKey);
  app.get(
    "/api/account",
    {
      config: { permission: ["account", "read"] },
      schema: {
        tags: ["account"],
        summary: "Get the key's account: its name, limits and counts",
        response: { 200: Type.Ref("Account"), ...errorResponses },
      },
    },
    async (request) => {
      const { account, counts } = await options.accounts.overview(request.principal.accountId);
      return {
        id: account.id,
        name: account.name,
        created: account.created,
        limits: {
          requests_per_minute: request.principal.rateLimit ?? options.defaultRateLimit,
          default_requests_per_minute: options.defaultRateLimit,
          max_page_size: MAX_PAGE_SIZE,
          max_body_bytes: BODY_LIMIT,
        },
        counts,
      };
    },
  );

  app.get<{ Querystring: Static<typeof KeysQuery> }>(
    "/api/keys",
    {
      config: { permission: ["keys", "read"] },
      schema: {
        tags: ["account"],
        summary: "List the account's API keys, masked",
        querystring: KeysQuery,
        response: { 200: ListOf(Type.Ref("ApiKey")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50 } = request.query;
      const listed = await options.keys.listPage(request.principal.accountId, { page, limit });
      return {
        ...listed,
        data: listed.data.map((k) => ({
          id: k.id,
          name: k.name,
          masked: k.masked,
          permissions: k.permissions,
          allow_ips: k.allowIps,
          rate_limit: k.rateLimit,
          created: k.created,
          last_used: k.lastUsed,
          revoked: k.revoked,
        })),
      };
    },
  );
}

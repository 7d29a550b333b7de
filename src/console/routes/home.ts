// The console's home page: what the account has, with a way into each part.
import type { FastifyInstance } from "fastify";
import { type ConsoleContext, sessionOf } from "../context.ts";
import { show } from "../views.ts";

export async function homeRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  app.get("/", async (request, reply) => {
    const { accountId } = sessionOf(request);
    const one = { page: 1, limit: 1 };
    const [users, disabled, networks, portals, groups, unused, keys] = await Promise.all([
      core.users.list(accountId, {}, one),
      core.users.list(accountId, { status: "disabled" }, one),
      core.networks.list(accountId, {}, one),
      core.portals.list(accountId, {}, one),
      core.groups.list(accountId, undefined, one),
      core.vouchers.list(accountId, { status: "unused" }, one),
      core.keys.list(accountId),
    ]);
    return show(
      request,
      reply,
      "home",
      { title: "Overview", section: "home" },
      {
        counts: {
          users: users.total,
          disabled: disabled.total,
          networks: networks.total,
          portals: portals.total,
          groups: groups.total,
          unusedVouchers: unused.total,
          keys: keys.filter((k) => k.revoked === null).length,
        },
      },
    );
  });
}

// The console's home page: the last 24 hours as charts (authentications accepted and rejected,
// sessions open, hour by hour, drawn as inline SVG with a table beside them), the busiest access
// points, and what the account has, with a way into each part.
import type { FastifyInstance } from "fastify";
import { stackedBars } from "../charts.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { show } from "../views.ts";

export async function homeRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  app.get("/", need("self"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const one = { page: 1, limit: 1 };
    const [users, disabled, networks, portals, groups, unused, keys, dashboard] = await Promise.all([
      core.users.list(accountId, {}, one),
      core.users.list(accountId, { status: "disabled" }, one),
      core.networks.list(accountId, {}, one),
      core.portals.list(accountId, {}, one),
      core.groups.list(accountId, undefined, one),
      core.vouchers.list(accountId, { status: "unused" }, one),
      core.keys.list(accountId),
      core.activity.dashboard(accountId),
    ]);
    const labels = dashboard.hours.map((h) => `${h.hour.slice(11, 16)}`);
    const authChart = stackedBars("Authentications per hour, last 24 hours (UTC)", labels, [
      { name: "accepted", className: "bar-accepted", values: dashboard.hours.map((h) => h.accepted) },
      { name: "rejected", className: "bar-rejected", values: dashboard.hours.map((h) => h.rejected) },
    ]);
    const sessionChart = stackedBars("Sessions open per hour, last 24 hours (UTC)", labels, [
      { name: "sessions", className: "bar-sessions", values: dashboard.hours.map((h) => h.sessions) },
    ]);
    return show(
      request,
      reply,
      "home",
      { title: "Overview", section: "home" },
      {
        hours: dashboard.hours,
        accessPoints: dashboard.accessPoints,
        authChart,
        sessionChart,
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

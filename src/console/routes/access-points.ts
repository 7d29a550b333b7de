// Access points: the APs seen in accounting and authentication (core/nodes, as /api/nodes shows
// them), sorted by what an operator asks; each AP's page charts its authentications and failures
// hour by hour over the last 24 hours and lists its SSIDs, most seen first.
import type { FastifyInstance } from "fastify";
import { normalizeMac } from "../../core/aaa/stations.ts";
import { NODE_SORT_FIELDS } from "../../core/nodes/rules.ts";
import { NotFoundError } from "../../core/shared/errors.ts";
import { sortValues } from "../../core/shared/sort.ts";
import { stackedBars } from "../charts.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { show } from "../views.ts";
import { PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

const SORTS = sortValues(NODE_SORT_FIELDS);

export async function accessPointRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "home" };

  app.get("/access-points", need("nodes:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const search = queryText(request, "search").slice(0, 17);
    const asked = queryText(request, "sort");
    const sort = (SORTS as string[]).includes(asked) ? asked : "-last_seen";
    const page = await core.nodes.list(
      accountId,
      { search: search || undefined },
      { page: pageNumber(queryText(request, "page")), limit: PAGE_SIZE },
      sort,
    );
    const pager = pagerOf(page, "/console/access-points", { search, sort });
    return show(
      request,
      reply,
      "access-points",
      { title: "Access points", ...section },
      { nodes: page.data, pager, search, sort },
    );
  });

  app.get("/access-points/:mac", need("nodes:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const mac = normalizeMac((request.params as { mac: string }).mac);
    if (!mac) throw new NotFoundError("there is nothing at this address");
    const [node, hours] = await Promise.all([
      core.nodes.get(accountId, mac),
      core.nodes.hourly(accountId, mac, 24),
    ]);
    const labels = hours.map((h) => new Date(h.hour * 1000).toISOString().slice(11, 16));
    const chart = stackedBars(`Authentications at ${mac} per hour, last 24 hours (UTC)`, labels, [
      { name: "accepted", className: "bar-accepted", values: hours.map((h) => h.accepted) },
      { name: "failed", className: "bar-rejected", values: hours.map((h) => h.rejected) },
    ]);
    return show(
      request,
      reply,
      "access-point",
      { title: `Access point ${mac}`, ...section },
      { node, hours, chart, topSsids: node.ssids.slice(0, 10) },
    );
  });
}

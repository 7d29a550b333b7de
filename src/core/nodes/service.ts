// The access points an account has seen (rules.ts): listed, sorted and read by MAC.

import { normalizeMac } from "../aaa/stations.ts";
import { NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import type { NodeFilter, NodeHourRow, NodeRow, NodeSightingRow, NodesRepo } from "./repo.ts";
import { NODE_SORT_FIELDS, RECENT_WINDOW_S } from "./rules.ts";

export interface Node {
  /** The AP's MAC, lower-case and colon-separated: also its id in /api/nodes/{id}. */
  id: string;
  mac: string;
  /** SSIDs seen with it, most seen first. */
  ssids: { ssid: string; seen: number }[];
  /** The network (RADIUS client) it was last seen on. */
  network_id: number | null;
  network_name: string | null;
  first_seen: string;
  last_seen: string;
  sessions_now: number;
  authentications_24h: number;
  failures_24h: number;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

function present(row: NodeRow, sightings: NodeSightingRow[]): Node {
  const mine = sightings.filter((s) => s.mac === row.mac);
  const ssids = new Map<string, number>();
  for (const s of mine) if (s.ssid) ssids.set(s.ssid, (ssids.get(s.ssid) ?? 0) + s.seen);
  const latest = mine.reduce<NodeSightingRow | undefined>(
    (best, s) => (s.network_id !== null && (!best || s.last > best.last) ? s : best),
    undefined,
  );
  return {
    id: row.mac,
    mac: row.mac,
    ssids: [...ssids].sort((a, b) => b[1] - a[1]).map(([ssid, seen]) => ({ ssid, seen })),
    network_id: latest?.network_id ?? null,
    network_name: latest?.network_name ?? null,
    first_seen: iso(row.first_seen),
    last_seen: iso(row.last_seen),
    sessions_now: row.sessions_now,
    authentications_24h: row.authentications_24h,
    failures_24h: row.failures_24h,
  };
}

export class NodesService {
  constructor(
    private readonly repo: NodesRepo,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async list(
    accountId: number,
    filter: Omit<NodeFilter, "mac">,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<Node>> {
    const order = parseSort(sort, NODE_SORT_FIELDS);
    const { rows, total } = await this.repo.list(
      accountId,
      filter,
      page,
      order,
      this.now() - RECENT_WINDOW_S,
    );
    const sightings = await this.repo.sightings(
      accountId,
      rows.map((r) => r.mac),
    );
    return { data: rows.map((r) => present(r, sightings)), page: page.page, total, limit: page.limit };
  }

  /** One AP by its MAC in any notation; 404 when the account never saw it. */
  async get(accountId: number, id: string): Promise<Node> {
    const mac = normalizeMac(id);
    if (!mac) throw ValidationError.field("node_id", "must be an access point's MAC address");
    const { rows } = await this.repo.list(
      accountId,
      { mac },
      { page: 1, limit: 1 },
      undefined,
      this.now() - RECENT_WINDOW_S,
    );
    const row = rows[0];
    if (!row) throw new NotFoundError(`node ${mac} not found`);
    return present(row, await this.repo.sightings(accountId, [mac]));
  }

  /** An AP's authentications per hour over the last `hours` (every hour listed, zeros included). */
  async hourly(accountId: number, mac: string, hours: number): Promise<NodeHourRow[]> {
    const end = Math.floor(this.now() / 3600) * 3600;
    const since = end - (hours - 1) * 3600;
    const found = new Map(
      (await this.repo.authenticationsPerHour(accountId, mac, since)).map((r) => [r.hour, r]),
    );
    const out: NodeHourRow[] = [];
    for (let hour = since; hour <= end; hour += 3600)
      out.push(found.get(hour) ?? { hour, accepted: 0, rejected: 0 });
    return out;
  }
}

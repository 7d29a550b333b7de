// Access points aggregated from radacct and radpostauth. Every statement names the account. Times
// become Unix seconds in SQL (radacct keeps Unix seconds on SQLite, radpostauth FreeRADIUS's
// 'YYYY-MM-DD HH:MM:SS' text; both are timestamptz on PostgreSQL), so one ORDER BY fits both.
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { orderTerms, type SortPlan } from "../../db/sort.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import { likePattern } from "../shared/text.ts";
import type { NodeSortField } from "./rules.ts";

export interface NodeFilter {
  mac?: string | undefined;
  networkId?: number | undefined;
  ssid?: string | undefined;
  search?: string | undefined;
}

/** One access point's figures; times in Unix seconds. */
export interface NodeRow {
  mac: string;
  first_seen: number;
  last_seen: number;
  sessions_now: number;
  authentications_24h: number;
  failures_24h: number;
}

/** How often an AP was seen with an SSID on a network, and when last. */
export interface NodeSightingRow {
  mac: string;
  ssid: string | null;
  network_id: number | null;
  network_name: string | null;
  seen: number;
  last: number;
}

export interface NodeHourRow {
  hour: number;
  accepted: number;
  rejected: number;
}

const SORT: SortPlan<NodeSortField> = {
  keys: {
    mac: { column: "mac" },
    first_seen: { column: "first_seen" },
    last_seen: { column: "last_seen" },
    sessions_now: { column: "sessions_now" },
    authentications_24h: { column: "authentications_24h" },
    failures_24h: { column: "failures_24h" },
  },
  defaultOrder: [{ field: "mac", descending: false }],
  unique: [{ column: "mac" }],
};

export class NodesRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  private epoch(column: string): RawBuilder<number> {
    const ref = sql.ref(column);
    if (this.dialect === "postgres") return sql<number>`cast(extract(epoch from ${ref}) as bigint)`;
    return column.endsWith("authdate")
      ? sql<number>`cast(strftime('%s', ${ref}) as integer)`
      : sql<number>`${ref}`;
  }

  /** A radpostauth.authdate parameter (as core/activity's repo writes it). */
  private authTime(seconds: number): string | Date {
    const date = new Date(seconds * 1000);
    return this.dialect === "sqlite" ? date.toISOString().slice(0, 19).replace("T", " ") : date;
  }

  /** The rows of one table that name an AP and pass the filter. */
  private where(
    table: "radacct" | "radpostauth",
    accountId: number,
    filter: NodeFilter,
  ): RawBuilder<unknown> {
    const terms = [
      sql`${sql.ref(`${table}.account_id`)} = ${accountId}`,
      sql`${sql.ref(`${table}.ap_mac`)} is not null`,
      sql`${sql.ref(`${table}.ap_mac`)} <> ''`,
    ];
    if (filter.mac !== undefined) terms.push(sql`${sql.ref(`${table}.ap_mac`)} = ${filter.mac}`);
    if (filter.networkId !== undefined)
      terms.push(sql`${sql.ref(`${table}.network_id`)} = ${filter.networkId}`);
    if (filter.ssid !== undefined) terms.push(sql`${sql.ref(`${table}.ssid`)} = ${filter.ssid}`);
    if (filter.search)
      terms.push(sql`lower(${sql.ref(`${table}.ap_mac`)}) like ${likePattern(filter.search)} escape '\\'`);
    return sql.join(terms, sql` and `);
  }

  /** One row per AP: sessions from radacct and authentications from radpostauth, merged. */
  private nodes(accountId: number, filter: NodeFilter, since: number): RawBuilder<unknown> {
    const start = this.epoch("radacct.acctstarttime");
    const last = sql`coalesce(${this.epoch("radacct.acctstoptime")}, ${this.epoch("radacct.acctupdatetime")}, ${start})`;
    const authdate = this.epoch("radpostauth.authdate");
    const recent = sql`radpostauth.authdate >= ${this.authTime(since)}`;
    return sql`
      select mac, min(first_seen) as first_seen, max(last_seen) as last_seen,
        sum(sessions_now) as sessions_now, sum(authentications_24h) as authentications_24h,
        sum(failures_24h) as failures_24h
      from (
        select radacct.ap_mac as mac, min(${start}) as first_seen, max(${last}) as last_seen,
          sum(case when radacct.acctstoptime is null then 1 else 0 end) as sessions_now,
          0 as authentications_24h, 0 as failures_24h
        from radacct where ${this.where("radacct", accountId, filter)}
        group by radacct.ap_mac
        union all
        select radpostauth.ap_mac as mac, min(${authdate}), max(${authdate}), 0,
          sum(case when ${recent} then 1 else 0 end),
          sum(case when ${recent} and radpostauth.reply <> 'Access-Accept' then 1 else 0 end)
        from radpostauth where ${this.where("radpostauth", accountId, filter)}
        group by radpostauth.ap_mac
      ) seen
      group by mac`;
  }

  async list(
    accountId: number,
    filter: NodeFilter,
    page: PageRequest,
    sort: Sort<NodeSortField> | undefined,
    recentSince: number,
  ): Promise<{ rows: NodeRow[]; total: number }> {
    const nodes = this.nodes(accountId, filter, recentSince);
    const order = orderTerms(this.dialect, SORT, sort);
    const [rows, count] = await Promise.all([
      sql<NodeRow>`select * from (${nodes}) nodes order by ${order} limit ${page.limit} offset ${offsetOf(page)}`.execute(
        this.db,
      ),
      sql<{ total: number }>`select count(*) as total from (${nodes}) nodes`.execute(this.db),
    ]);
    return { rows: rows.rows.map(numbers), total: Number(count.rows[0]?.total ?? 0) };
  }

  /** The SSIDs and networks the APs were seen with, most seen first. */
  async sightings(accountId: number, macs: string[]): Promise<NodeSightingRow[]> {
    if (macs.length === 0) return [];
    const list = sql.join(macs);
    const rows = await sql<NodeSightingRow>`
      select seen.mac, seen.ssid, seen.network_id, nas.name as network_name,
        sum(seen.seen) as seen, max(seen.last) as last
      from (
        select ap_mac as mac, ssid, network_id, count(*) as seen, max(${this.epoch("radacct.acctstarttime")}) as last
        from radacct where account_id = ${accountId} and ap_mac in (${list})
        group by ap_mac, ssid, network_id
        union all
        select ap_mac, ssid, network_id, count(*), max(${this.epoch("radpostauth.authdate")})
        from radpostauth where account_id = ${accountId} and ap_mac in (${list})
        group by ap_mac, ssid, network_id
      ) seen
      left join nas on nas.id = seen.network_id and nas.account_id = ${accountId}
      group by seen.mac, seen.ssid, seen.network_id, nas.name
      order by seen.mac, sum(seen.seen) desc, seen.ssid`.execute(this.db);
    return rows.rows.map((row) => ({
      ...row,
      network_id: row.network_id === null ? null : Number(row.network_id),
      seen: Number(row.seen),
      last: Number(row.last),
    }));
  }

  /** One AP's accepted and rejected authentications per hour from `since` (Unix seconds) on. */
  async authenticationsPerHour(accountId: number, mac: string, since: number): Promise<NodeHourRow[]> {
    const hour = sql<number>`(${this.epoch("radpostauth.authdate")} / 3600) * 3600`;
    const rows = await sql<NodeHourRow>`
      select ${hour} as hour,
        sum(case when reply = 'Access-Accept' then 1 else 0 end) as accepted,
        sum(case when reply = 'Access-Accept' then 0 else 1 end) as rejected
      from radpostauth
      where account_id = ${accountId} and ap_mac = ${mac} and authdate >= ${this.authTime(since)}
      group by ${hour} order by 1`.execute(this.db);
    return rows.rows.map((row) => ({
      hour: Number(row.hour),
      accepted: Number(row.accepted),
      rejected: Number(row.rejected),
    }));
  }
}

/** PostgreSQL answers sums and bigints as strings. */
function numbers(row: NodeRow): NodeRow {
  return {
    mac: row.mac,
    first_seen: Number(row.first_seen),
    last_seen: Number(row.last_seen),
    sessions_now: Number(row.sessions_now),
    authentications_24h: Number(row.authentications_24h),
    failures_24h: Number(row.failures_24h),
  };
}

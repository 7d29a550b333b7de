// What the console shows about an account's activity and set-up beyond the areas' own services:
// the latest authentications of a network, voucher batches, and the RADIUS settings an access
// point needs to reach this Wisp (server address from PUBLIC_URL, ports from the configuration).
import type { Database } from "../../db/database.ts";
import { NotFoundError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import {
  type AccessPointRow,
  ActivityRepo,
  type AuthenticationRow,
  type BatchRow,
  type UserGroupRow,
} from "./repo.ts";

export type { AccessPointRow, AuthenticationRow, UserGroupRow };

const HOUR = 3600;
export const DASHBOARD_HOURS = 24;
export const TOP_ACCESS_POINTS = 10;

export interface DashboardHour {
  /** The hour's start, ISO 8601 UTC. */
  hour: string;
  accepted: number;
  rejected: number;
  /** Sessions open at some time during the hour. */
  sessions: number;
}

export interface Dashboard {
  hours: DashboardHour[];
  accessPoints: AccessPointRow[];
}

export interface VoucherBatch {
  id: number;
  prefix: string;
  quantity: number;
  validity: number;
  usage_limit: number;
  session_timeout: number | null;
  /** The plan of the batch's vouchers (core/plans); null: none. */
  plan_id: number | null;
  created: string;
}

export interface RadiusSettings {
  /** The host of PUBLIC_URL: where access points send RADIUS packets. */
  server: string;
  /** UDP ports; null when that RADIUS port is turned off (0). */
  authPort: number | null;
  acctPort: number | null;
}

export interface ActivityOptions {
  publicUrl: string;
  radiusAuthPort?: number | undefined;
  radiusAcctPort?: number | undefined;
}

export const MAX_RECENT = 200;

function batch(row: BatchRow): VoucherBatch {
  return {
    id: row.id,
    prefix: row.prefix,
    quantity: row.quantity,
    validity: row.validity,
    usage_limit: row.usage_limit,
    session_timeout: row.session_timeout,
    plan_id: row.plan_id === null || row.plan_id === undefined ? null : Number(row.plan_id),
    created: row.created,
  };
}

export class ActivityService {
  constructor(
    private readonly repo: ActivityRepo,
    private readonly options: ActivityOptions,
  ) {}

  /** Newest first; `limit` is capped at MAX_RECENT. */
  recentAuthentications(accountId: number, networkId: number, limit = 50): Promise<AuthenticationRow[]> {
    return this.repo.recentAuthentications(accountId, networkId, Math.max(1, Math.min(limit, MAX_RECENT)));
  }

  /** Newest first. */
  async listBatches(accountId: number, page: PageRequest): Promise<Page<VoucherBatch>> {
    const { rows, total } = await this.repo.listBatches(accountId, page);
    return { data: rows.map(batch), page: page.page, total, limit: page.limit };
  }

  async getBatch(accountId: number, id: number): Promise<VoucherBatch> {
    const row = await this.repo.findBatch(accountId, id);
    if (!row) throw new NotFoundError(`voucher batch ${id} not found`);
    return batch(row);
  }

  /** The groups of a user (looked up by the username the caller has just read), by priority. */
  groupsOfUser(accountId: number, username: string): Promise<UserGroupRow[]> {
    return this.repo.groupsOfUser(accountId, username);
  }

  /**
   * The last 24 hours, hour by hour (the current hour last): authentications accepted and
   * rejected, sessions open during each hour; and the access points with most authentications.
   */
  async dashboard(accountId: number, now = Date.now()): Promise<Dashboard> {
    const nowSeconds = Math.floor(now / 1000);
    const first = (Math.floor(nowSeconds / HOUR) - DASHBOARD_HOURS + 1) * HOUR;
    const [auths, spans, accessPoints] = await Promise.all([
      this.repo.authenticationsPerHour(accountId, first),
      this.repo.sessionSpans(accountId, first, nowSeconds + 1),
      this.repo.topAccessPoints(accountId, first, TOP_ACCESS_POINTS),
    ]);
    const hours: DashboardHour[] = Array.from({ length: DASHBOARD_HOURS }, (_, i) => ({
      hour: `${new Date((first + i * HOUR) * 1000).toISOString().slice(0, 19)}Z`,
      accepted: 0,
      rejected: 0,
      sessions: 0,
    }));
    const byKey = new Map(hours.map((h) => [h.hour.slice(0, 13), h]));
    for (const row of auths) {
      const hour = byKey.get(row.hour);
      if (hour) {
        hour.accepted += row.accepted;
        hour.rejected += row.rejected;
      }
    }
    // Each session counts in every hour it overlaps: a difference array over the 24 buckets.
    const delta = new Array<number>(DASHBOARD_HOURS + 1).fill(0);
    for (const { start, stop } of spans) {
      const from = Math.max(0, Math.floor((start - first) / HOUR));
      const to =
        stop === null
          ? DASHBOARD_HOURS - 1
          : Math.min(DASHBOARD_HOURS - 1, Math.floor((stop - first) / HOUR));
      if (to < from) continue;
      delta[from]! += 1;
      delta[to + 1]! -= 1;
    }
    let open = 0;
    for (let i = 0; i < DASHBOARD_HOURS; i++) {
      open += delta[i]!;
      hours[i]!.sessions = open;
    }
    return { hours, accessPoints };
  }

  radiusSettings(): RadiusSettings {
    const port = (value: number | undefined, fallback: number) => (value === 0 ? null : (value ?? fallback));
    return {
      server: new URL(this.options.publicUrl).hostname.replace(/^\[(.*)\]$/, "$1"),
      authPort: port(this.options.radiusAuthPort, 1812),
      acctPort: port(this.options.radiusAcctPort, 1813),
    };
  }
}

export function createActivity(database: Database, options: ActivityOptions): ActivityService {
  return new ActivityService(new ActivityRepo(database.db, database.dialect), options);
}

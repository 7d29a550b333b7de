// Read-only views the console shows that no area's service offers: a network's latest
// authentications (radpostauth) and an account's voucher batches. Scoped by account_id.
import { type Kysely, type Selectable, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema, VoucherBatchesTable } from "../../db/schema.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";

export type BatchRow = Selectable<VoucherBatchesTable>;

export interface AuthenticationRow {
  id: number;
  /** ISO 8601 UTC. */
  time: string;
  username: string;
  accepted: boolean;
  reason: string | null;
  client_mac: string | null;
  ap_mac: string | null;
  ssid: string | null;
}

/** Authentications in one UTC hour ("YYYY-MM-DDTHH"), by answer. */
export interface HourlyAuthRow {
  hour: string;
  accepted: number;
  rejected: number;
}

/** A session's span in Unix seconds; stop is null while it is open. */
export interface SessionSpanRow {
  start: number;
  stop: number | null;
}

export interface AccessPointRow {
  ap_mac: string;
  /** The SSID most seen with it (the largest, when several). */
  ssid: string | null;
  authentications: number;
}

export interface UserGroupRow {
  group_id: number;
  name: string;
  priority: number;
}

export class ActivityRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  /** radpostauth.authdate is 'YYYY-MM-DD HH:MM:SS' UTC text on SQLite, timestamptz on PostgreSQL. */
  private iso(value: string | Date): string {
    if (value instanceof Date) return `${value.toISOString().slice(0, 19)}Z`;
    return this.dialect === "sqlite" ? `${value.slice(0, 19).replace(" ", "T")}Z` : value;
  }

  async recentAuthentications(
    accountId: number,
    networkId: number,
    limit: number,
  ): Promise<AuthenticationRow[]> {
    const rows = await this.db
      .selectFrom("radpostauth")
      .select(["id", "authdate", "username", "reply", "reason", "client_mac", "ap_mac", "ssid"])
      .where("account_id", "=", accountId)
      .where("network_id", "=", networkId)
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: Number(row.id),
      time: this.iso(row.authdate),
      username: row.username,
      accepted: row.reply === "Access-Accept",
      reason: row.reason,
      client_mac: row.client_mac,
      ap_mac: row.ap_mac,
      ssid: row.ssid,
    }));
  }

  /** A radpostauth.authdate parameter: FreeRADIUS's SQLite text, or a Date on PostgreSQL. */
  private authTime(seconds: number): string | Date {
    const date = new Date(seconds * 1000);
    return this.dialect === "sqlite" ? date.toISOString().slice(0, 19).replace("T", " ") : date;
  }

  /** A radacct time parameter: Unix seconds on SQLite, a Date on PostgreSQL. */
  private sessionTime(seconds: number): number | Date {
    return this.dialect === "sqlite" ? seconds : new Date(seconds * 1000);
  }

  private seconds(value: number | Date | string | null): number | null {
    if (value === null) return null;
    if (value instanceof Date) return Math.floor(value.getTime() / 1000);
    return typeof value === "string" ? Math.floor(Date.parse(value) / 1000) : Number(value);
  }

  /** Accepted and rejected authentications per UTC hour from `since` (Unix seconds) on. */
  async authenticationsPerHour(accountId: number, since: number): Promise<HourlyAuthRow[]> {
    const hour =
      this.dialect === "sqlite"
        ? sql<string>`substr(authdate, 1, 13)`
        : sql<string>`to_char(authdate at time zone 'UTC', 'YYYY-MM-DD HH24')`;
    const rows = await this.db
      .selectFrom("radpostauth")
      .select([
        hour.as("hour"),
        sql<number>`sum(case when reply = 'Access-Accept' then 1 else 0 end)`.as("accepted"),
        sql<number>`sum(case when reply = 'Access-Accept' then 0 else 1 end)`.as("rejected"),
      ])
      .where("account_id", "=", accountId)
      .where("authdate", ">=", this.authTime(since))
      .groupBy(hour)
      .execute();
    return rows.map((row) => ({
      hour: row.hour.replace(" ", "T"),
      accepted: Number(row.accepted),
      rejected: Number(row.rejected),
    }));
  }

  /** Sessions that were open at some time from `since` to `until` (Unix seconds). */
  async sessionSpans(accountId: number, since: number, until: number): Promise<SessionSpanRow[]> {
    const rows = await this.db
      .selectFrom("radacct")
      .select(["acctstarttime", "acctstoptime"])
      .where("account_id", "=", accountId)
      .where("acctstarttime", "<", this.sessionTime(until))
      .where((eb) =>
        eb.or([eb("acctstoptime", "is", null), eb("acctstoptime", ">=", this.sessionTime(since))]),
      )
      .execute();
    const spans: SessionSpanRow[] = [];
    for (const row of rows) {
      const start = this.seconds(row.acctstarttime);
      if (start !== null) spans.push({ start, stop: this.seconds(row.acctstoptime) });
    }
    return spans;
  }

  /** The access points with the most authentications from `since` on. */
  async topAccessPoints(accountId: number, since: number, limit: number): Promise<AccessPointRow[]> {
    const rows = await this.db
      .selectFrom("radpostauth")
      .select([
        "ap_mac",
        sql<string | null>`max(ssid)`.as("ssid"),
        sql<number>`count(*)`.as("authentications"),
      ])
      .where("account_id", "=", accountId)
      .where("authdate", ">=", this.authTime(since))
      .where("ap_mac", "is not", null)
      .where("ap_mac", "!=", "")
      .groupBy("ap_mac")
      .orderBy("authentications", "desc")
      .orderBy("ap_mac")
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      ap_mac: row.ap_mac ?? "",
      ssid: row.ssid,
      authentications: Number(row.authentications),
    }));
  }

  async listBatches(accountId: number, page: PageRequest): Promise<{ rows: BatchRow[]; total: number }> {
    const query = this.db.selectFrom("voucher_batches").where("account_id", "=", accountId);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy("id", "desc").limit(page.limit).offset(offsetOf(page)).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  findBatch(accountId: number, id: number): Promise<BatchRow | undefined> {
    return this.db
      .selectFrom("voucher_batches")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** The groups a user is a member of, by priority (the order FreeRADIUS evaluates them in). */
  groupsOfUser(accountId: number, username: string): Promise<UserGroupRow[]> {
    return this.db
      .selectFrom("radusergroup as m")
      .innerJoin("groups as g", (join) =>
        join.onRef("g.account_id", "=", "m.account_id").onRef("g.name", "=", "m.groupname"),
      )
      .select(["g.id as group_id", "g.name", "m.priority"])
      .where("m.account_id", "=", accountId)
      .where("m.username", "=", username)
      .orderBy("m.priority")
      .orderBy("g.name")
      .execute();
  }
}

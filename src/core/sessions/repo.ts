// The sessions of radacct as the API, the console and the worker read them, always within one
// account; the outcome of disconnects; the sweeps' queries (stale sessions, expired users).

import { type ExpressionBuilder, type Kysely, type Selectable, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { RadacctTable, Schema } from "../../db/schema.ts";
import { ordered, type SortPlan } from "../../db/sort.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { insertEvents, type NewEvent } from "../events/repo.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import type { ReauthorizationTarget } from "./reauthorize.ts";
import type { SessionSortField } from "./rules.ts";

export type SessionRow = Selectable<RadacctTable>;
/** A session as lists and pages show it: with its device's name, when the account knows the MAC. */
export type NamedSessionRow = SessionRow & { device_name?: string | null };

export interface SessionFilter {
  status?: "active" | "closed" | undefined;
  userId?: number | undefined;
  networkId?: number | undefined;
  apMac?: string | undefined;
  clientMac?: string | undefined;
  /** Unix seconds: sessions started at or after. */
  since?: number | undefined;
}

const SORT: SortPlan<SessionSortField> = {
  keys: {
    id: { column: "radacctid" },
    start: { column: "acctstarttime", nullable: true },
    stop: { column: "acctstoptime", nullable: true },
    update: { column: "acctupdatetime", nullable: true },
    username: { column: "username", text: true, nullable: true },
    duration: { column: "acctsessiontime", nullable: true },
    input_bytes: { column: "acctinputoctets", nullable: true },
    output_bytes: { column: "acctoutputoctets", nullable: true },
  },
  defaultOrder: [{ field: "id", descending: true }],
  unique: [{ column: "radacctid" }],
};

export interface OnlineCount {
  network_id: number | null;
  network: string | null;
  ap_mac: string | null;
  sessions: number;
}

export class SessionsRepo {
  constructor(
    readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: SessionsRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new SessionsRepo(trx, this.dialect)));
  }

  /** Unix seconds as the column type: integers on SQLite, timestamptz on PostgreSQL. */
  time(seconds: number): number | Date {
    return this.dialect === "sqlite" ? seconds : new Date(seconds * 1000);
  }

  private filtered(accountId: number, filter: SessionFilter) {
    let query = this.db.selectFrom("radacct").where("account_id", "=", accountId);
    if (filter.status === "active") query = query.where("acctstoptime", "is", null);
    if (filter.status === "closed") query = query.where("acctstoptime", "is not", null);
    if (filter.userId !== undefined) query = query.where("user_id", "=", filter.userId);
    if (filter.networkId !== undefined) query = query.where("network_id", "=", filter.networkId);
    if (filter.apMac !== undefined) query = query.where("ap_mac", "=", filter.apMac);
    if (filter.clientMac !== undefined) query = query.where("client_mac", "=", filter.clientMac);
    if (filter.since !== undefined) query = query.where("acctstarttime", ">=", this.time(filter.since));
    return query;
  }

  /** The name of the account's device with the session's client MAC, when it has one (issue 24). */
  private deviceName(eb: ExpressionBuilder<Schema, "radacct">) {
    return eb
      .selectFrom("devices as d")
      .select(sql<string | null>`nullif(d.name, '')`.as("name"))
      .whereRef("d.account_id", "=", "radacct.account_id")
      .whereRef("d.mac", "=", "radacct.client_mac")
      .as("device_name");
  }

  async list(
    accountId: number,
    filter: SessionFilter,
    page: PageRequest,
    sort?: Sort<SessionSortField>,
  ): Promise<{ rows: NamedSessionRow[]; total: number }> {
    const query = this.filtered(accountId, filter);
    const [rows, count] = await Promise.all([
      ordered(
        query.selectAll().select((eb) => this.deviceName(eb)),
        this.dialect,
        SORT,
        sort,
      )
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  get(accountId: number, id: number): Promise<NamedSessionRow | undefined> {
    return this.db
      .selectFrom("radacct")
      .selectAll()
      .select((eb) => this.deviceName(eb))
      .where("account_id", "=", accountId)
      .where("radacctid", "=", id)
      .executeTakeFirst();
  }

  /** A session by id in whichever account has it (operators' doors: the CLI). */
  async accountOf(id: number): Promise<number | undefined> {
    const row = await this.db
      .selectFrom("radacct")
      .select("account_id")
      .where("radacctid", "=", id)
      .executeTakeFirst();
    return row?.account_id ?? undefined;
  }

  /** Open sessions per network and access point. */
  async onlineCounts(accountId: number): Promise<OnlineCount[]> {
    const rows = await this.db
      .selectFrom("radacct")
      .leftJoin("nas", (join) =>
        join.onRef("nas.id", "=", "radacct.network_id").onRef("nas.account_id", "=", "radacct.account_id"),
      )
      .where("radacct.account_id", "=", accountId)
      .where("radacct.acctstoptime", "is", null)
      .groupBy(["radacct.network_id", "nas.name", "radacct.ap_mac"])
      .select((eb) => [
        "radacct.network_id",
        "nas.name as network",
        "radacct.ap_mac",
        eb.fn.countAll<number>().as("sessions"),
      ])
      .orderBy("radacct.network_id")
      .orderBy("radacct.ap_mac")
      .execute();
    return rows.map((r) => ({ ...r, sessions: Number(r.sessions) }));
  }

  /** Open sessions of these usernames (a user's, or a voucher's code in any of its spellings). */
  openOfUsernames(accountId: number, usernames: string[]): Promise<SessionRow[]> {
    if (usernames.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom("radacct")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("username", "in", usernames)
      .where("acctstoptime", "is", null)
      .execute();
  }

  openOfMacs(accountId: number, macs: string[]): Promise<SessionRow[]> {
    if (macs.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom("radacct")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("client_mac", "in", macs)
      .where("acctstoptime", "is", null)
      .execute();
  }

  network(accountId: number, id: number | null) {
    if (id === null) return Promise.resolve(undefined);
    return this.db
      .selectFrom("nas")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /**
   * Open sessions of a reauthorization's target on networks that allow CoA, after the cursor, in
   * radacctid order (wisp_radacct_account_open), with their network's CoA settings.
   */
  openForReauthorization(accountId: number, target: ReauthorizationTarget, after: number, limit: number) {
    let query = this.db
      .selectFrom("radacct")
      .innerJoin("nas", (join) =>
        join.onRef("nas.id", "=", "radacct.network_id").onRef("nas.account_id", "=", "radacct.account_id"),
      )
      .selectAll("radacct")
      .where("radacct.account_id", "=", accountId)
      .where("radacct.acctstoptime", "is", null)
      .where("radacct.radacctid", ">", after)
      .where("nas.coa_enabled", "=", 1);
    if ("usernames" in target) query = query.where("radacct.username", "in", target.usernames);
    if ("group" in target) {
      query = query.where("radacct.username", "in", (eb) =>
        eb
          .selectFrom("radusergroup")
          .select("radusergroup.username")
          .where("radusergroup.account_id", "=", accountId)
          .where("radusergroup.groupname", "=", target.group),
      );
    }
    return query.orderBy("radacct.radacctid").limit(limit).execute();
  }

  /** The accepted login that most likely opened the session (same user and device), for its facts. */
  lastLogin(accountId: number, row: SessionRow) {
    if (!row.client_mac || !row.username) return Promise.resolve(undefined);
    return this.db
      .selectFrom("radpostauth")
      .select(["nas_identifier", "method", "calledstationid"])
      .where("account_id", "=", accountId)
      .where("client_mac", "=", row.client_mac)
      .where("username", "=", row.username)
      .where("reply", "=", "Access-Accept")
      .orderBy("id", "desc")
      .limit(1)
      .executeTakeFirst();
  }

  /** Records a CoA-Request's outcome (and its fallback's) on the session, with its events. */
  async recordCoa(
    accountId: number,
    id: number,
    outcome: {
      result: string;
      cause: string | null;
      at: string;
      fallback: { result: string; cause: string | null } | null;
    },
    events: NewEvent[],
  ): Promise<void> {
    const cut = (text: string | null | undefined) => (text == null ? null : text.slice(0, 200));
    await this.transaction(async (repo) => {
      await repo.db
        .updateTable("radacct")
        .set({
          coa_result: outcome.result,
          coa_cause: cut(outcome.cause),
          coa_at: outcome.at,
          coa_fallback_result: outcome.fallback?.result ?? null,
          coa_fallback_cause: cut(outcome.fallback?.cause),
        })
        .where("account_id", "=", accountId)
        .where("radacctid", "=", id)
        .execute();
      await insertEvents(repo.db, events);
    });
  }

  /** Records a disconnect's outcome on the session, with its events, in one transaction. */
  async recordDisconnect(
    accountId: number,
    id: number,
    outcome: { result: string; cause: string | null; at: string },
    events: NewEvent[],
  ): Promise<void> {
    await this.transaction(async (repo) => {
      await repo.db
        .updateTable("radacct")
        .set({
          disconnect_result: outcome.result,
          disconnect_cause: outcome.cause === null ? null : outcome.cause.slice(0, 200),
          disconnect_at: outcome.at,
        })
        .where("account_id", "=", accountId)
        .where("radacctid", "=", id)
        .execute();
      await insertEvents(repo.db, events);
      await repo.audit({ accountId, resource: "session", id, action: "disconnect", after: outcome });
    });
  }

  /**
   * Open sessions whose last accounting (update, else start) is older than their network allows:
   * stale_after seconds, or three interim intervals; networks with neither are never swept.
   */
  async staleSessions(now: number, limit: number): Promise<(SessionRow & { stale_seconds: number })[]> {
    // Most installations sweep nothing: then radacct is not touched at all.
    const sweeping = await this.db
      .selectFrom("nas")
      .select("id")
      .where((eb) => eb.or([eb("stale_after", ">", 0), eb("interim_interval", ">", 0)]))
      .limit(1)
      .executeTakeFirst();
    if (!sweeping) return [];
    const last =
      this.dialect === "postgres"
        ? sql<number>`extract(epoch from coalesce(radacct.acctupdatetime, radacct.acctstarttime))`
        : sql<number>`coalesce(radacct.acctupdatetime, radacct.acctstarttime)`;
    const allowed = sql<number>`case when nas.stale_after > 0 then nas.stale_after else 3 * nas.interim_interval end`;
    const rows = await this.db
      .selectFrom("radacct")
      .innerJoin("nas", (join) =>
        join.onRef("nas.id", "=", "radacct.network_id").onRef("nas.account_id", "=", "radacct.account_id"),
      )
      .selectAll("radacct")
      .select(allowed.as("stale_seconds"))
      .where("radacct.acctstoptime", "is", null)
      .where((eb) => eb.or([eb("nas.stale_after", ">", 0), eb("nas.interim_interval", ">", 0)]))
      .where(sql<boolean>`${last} + ${allowed} < ${now}`)
      .limit(limit)
      .execute();
    return rows.map((r) => ({ ...r, stale_seconds: Number(r.stale_seconds) }));
  }

  /** Closes a session the NAS stopped reporting (FreeRADIUS's own columns, as a Stop would). */
  async close(
    accountId: number,
    id: number,
    stop: number,
    sessionTime: number,
    cause: string,
    events: NewEvent[],
  ): Promise<boolean> {
    return this.transaction(async (repo) => {
      const result = await repo.db
        .updateTable("radacct")
        .set({
          acctstoptime: this.time(stop),
          acctsessiontime: sessionTime,
          acctterminatecause: cause,
        })
        .where("account_id", "=", accountId)
        .where("radacctid", "=", id)
        .where("acctstoptime", "is", null)
        .executeTakeFirst();
      const closed = Number(result.numUpdatedRows) > 0;
      if (closed) await insertEvents(repo.db, events);
      return closed;
    });
  }

  /** Open sessions of users with an Expiration check item (the sweep compares it with the clock). */
  async openWithExpiration(limit: number) {
    const any = await this.db
      .selectFrom("radcheck")
      .select("id")
      .where("attribute", "=", "Expiration")
      .limit(1)
      .executeTakeFirst();
    if (!any) return [];
    return this.db
      .selectFrom("radacct")
      .innerJoin("radcheck", (join) =>
        join
          .onRef("radcheck.account_id", "=", "radacct.account_id")
          .onRef("radcheck.username", "=", "radacct.username"),
      )
      .where("radacct.acctstoptime", "is", null)
      .where("radcheck.attribute", "=", "Expiration")
      .select([
        "radacct.radacctid",
        "radacct.account_id",
        "radacct.disconnect_at",
        "radcheck.value as expiration",
        "radcheck.op",
      ])
      .limit(limit)
      .execute();
  }
}

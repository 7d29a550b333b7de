// Writes what the RADIUS server saw: one radpostauth row per authentication attempt (never the
// password tried) with its event, and the session rows of accounting, each with its events.
import { type Insertable, sql, type Transaction } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { preparedInsert, preparedLists, preparedOn } from "../../db/prepared.ts";
import type { RadacctTable, Schema } from "../../db/schema.ts";
import { insertEvents, type NewEvent } from "../events/repo.ts";
import { isoNow } from "../shared/time.ts";
import type { SessionValues } from "./accounting.ts";

export interface AttemptRecord {
  accountId: number;
  username: string;
  accepted: boolean;
  reason: string | null;
  userId: number | null;
  voucherId: number | null;
  networkId: number;
  calledStationId: string;
  callingStationId: string;
  clientMac: string | null;
  apMac: string | null;
  ssid: string | null;
  nasIp: string | null;
  nasIdentifier: string | null;
  /** How the user was proven: PAP, CHAP, MSCHAPv2, PEAP, TTLS, TLS (null: no credentials seen). */
  method: AuthMethod | null;
  /** EAP: the outer identity (EAP-Response/Identity), when the user was named inside a tunnel. */
  outerIdentity: string | null;
  /** Unix seconds. */
  at: number;
  /** MAB: the device let in (or refused); `touch`: write its last_seen and network with the attempt. */
  device?: { id: number; touch: boolean } | undefined;
  /** The policy that decided the attempt (id null: the default rule); absent: none evaluated. */
  policy?: { id: number | null; name: string } | undefined;
}

export type AuthMethod = "PAP" | "CHAP" | "MSCHAPv2" | "PEAP" | "TTLS" | "TLS" | "MAB";

/** Where the session happened and who it was, beside FreeRADIUS's own columns. */
export interface SessionContext {
  accountId: number;
  networkId: number;
  userId: number | null;
  voucherId: number | null;
  clientMac: string | null;
  apMac: string | null;
  ssid: string | null;
}

type Trx = Transaction<Schema>;

/**
 * A portal sign-in hands the guest to its gateway, which logs in with PAP, CHAP or MS-CHAP; an
 * 802.1X (EAP) login never follows one, so its attempts are not matched against portal sign-ins.
 */
const EAP_METHODS = new Set<AuthMethod | null>(["PEAP", "TTLS", "TLS"]);

const ATTEMPT_COLUMNS = [
  "username",
  "pass",
  "reply",
  "calledstationid",
  "callingstationid",
  "authdate",
  "account_id",
  "reason",
  "user_id",
  "voucher_id",
  "network_id",
  "client_mac",
  "ap_mac",
  "ssid",
  "nas_ip",
  "nas_identifier",
  "portal_id",
  "method",
  "outer_identity",
  "policy_id",
  "policy_name",
] as const;

type AttemptRow = Pick<Insertable<Schema["radpostauth"]>, (typeof ATTEMPT_COLUMNS)[number]>;

/** Every attempt is written: compiled once per row count (db/prepared.ts). */
const insertAttemptRows = preparedInsert<AttemptRow>(
  (db, rows) => db.insertInto("radpostauth").values(rows),
  ATTEMPT_COLUMNS,
);

/**
 * The portal sign-ins still pending for these usernames: run for nearly every batch of PAP attempts,
 * so compiled once per list lengths (building it with Kysely cost 3% of the RADIUS thread's time
 * in bench/ldap.ts, --cpu-prof).
 */
const pendingPortalLogins = preparedLists((db, now: number[], usernames: string[], accounts: number[]) =>
  db
    .selectFrom("portal_logins")
    .selectAll()
    .where("expires", ">=", now[0]!)
    .where("username", "in", usernames)
    .where("account_id", "in", accounts)
    .orderBy("id", "desc"),
);

/** The advisory lock space of accounting's per-session turns (PostgreSQL): "WACC". */
const SESSION_LOCK = 0x57_41_43_43;

export class RecordingRepo {
  /** Every accounting packet looks its session up: compiled once (per database: placeholders differ). */
  private readonly sessionByUniqueId = preparedOn(
    (db, accountId: number, acctuniqueid: string, former: string) =>
      db
        .selectFrom("radacct")
        .selectAll()
        .where("acctuniqueid", "in", [acctuniqueid, former])
        .where("account_id", "=", accountId),
    3,
  );

  constructor(private readonly dialect: DialectName) {}

  /** Unix seconds as the column type of each database: integers on SQLite, timestamptz on PostgreSQL. */
  time(seconds: number): number | Date {
    return this.dialect === "sqlite" ? seconds : new Date(seconds * 1000);
  }

  seconds(value: number | Date | null): number | null {
    if (value === null) return null;
    return value instanceof Date ? Math.floor(value.getTime() / 1000) : Number(value);
  }

  /**
   * Writes attempts and their events with one multi-row INSERT each (in chunks): the RADIUS server
   * records every attempt, and a statement per row would cost more than deciding the login.
   */
  async recordAttempts(
    trx: Trx,
    attempts: readonly AttemptRecord[],
    events: readonly NewEvent[],
  ): Promise<void> {
    const portals = await this.takePortalLogins(trx, attempts, events);
    const rows = attempts.map((attempt, i) => ({
      username: attempt.username,
      pass: "",
      reply: attempt.accepted ? "Access-Accept" : "Access-Reject",
      calledstationid: attempt.calledStationId,
      callingstationid: attempt.callingStationId,
      authdate:
        this.dialect === "sqlite"
          ? new Date(attempt.at * 1000).toISOString().slice(0, 19).replace("T", " ")
          : new Date(attempt.at * 1000),
      account_id: attempt.accountId,
      reason: attempt.reason,
      user_id: attempt.userId,
      voucher_id: attempt.voucherId,
      network_id: attempt.networkId,
      client_mac: attempt.clientMac,
      ap_mac: attempt.apMac,
      ssid: attempt.ssid,
      nas_ip: attempt.nasIp,
      nas_identifier: attempt.nasIdentifier,
      portal_id: portals[i] ?? null,
      method: attempt.method,
      outer_identity: attempt.outerIdentity,
      policy_id: attempt.policy?.id ?? null,
      policy_name: attempt.policy?.name ?? null,
    }));
    // 21 columns: 500 rows stay far below SQLite's and PostgreSQL's bound-parameter limits.
    for (let i = 0; i < rows.length; i += 500) await insertAttemptRows(trx, rows.slice(i, i + 500));
    for (let i = 0; i < events.length; i += 1000) await insertEvents(trx, events.slice(i, i + 1000));
    await this.touchDevices(trx, attempts);
  }

  /** Devices let in by MAB: when and on which network they were last seen (one UPDATE per device). */
  private async touchDevices(trx: Trx, attempts: readonly AttemptRecord[]): Promise<void> {
    const latest = new Map<string, AttemptRecord>();
    for (const a of attempts)
      if (a.accepted && a.device?.touch) latest.set(`${a.accountId}:${a.device.id}`, a);
    for (const a of latest.values()) {
      await trx
        .updateTable("devices")
        .set({
          last_seen: isoNow(new Date(a.at * 1000)),
          last_network_id: a.networkId,
        })
        .where("account_id", "=", a.accountId)
        .where("id", "=", a.device!.id)
        .execute();
    }
  }

  /**
   * Links accepted attempts to the portal sign-ins that led to them (src/core/portals/service.ts
   * expectLogin: same account and username, same device when both name one, not expired): the
   * attempt's portal, and portal_id and method in its user.authenticated event. Each pending sign-in
   * is used once. One query for the whole batch; none when no attempt was accepted.
   */
  private async takePortalLogins(
    trx: Trx,
    attempts: readonly AttemptRecord[],
    events: readonly NewEvent[],
  ): Promise<(number | undefined)[]> {
    const found: (number | undefined)[] = [];
    const linkable = (a: AttemptRecord) => a.accepted && !EAP_METHODS.has(a.method);
    const accepted = attempts.filter(linkable);
    if (accepted.length === 0) return found;
    const now = Math.max(...accepted.map((a) => a.at));
    const pending = await pendingPortalLogins(
      trx,
      [now],
      [...new Set(accepted.map((a) => a.username))],
      [...new Set(accepted.map((a) => a.accountId))],
    );
    if (pending.length === 0) return found;
    const used: number[] = [];
    attempts.forEach((attempt, i) => {
      if (!linkable(attempt)) return;
      const match = pending.find(
        (p) =>
          !used.includes(p.id) &&
          p.account_id === attempt.accountId &&
          p.username === attempt.username &&
          (p.client_mac === null || attempt.clientMac === null || p.client_mac === attempt.clientMac),
      );
      if (!match) return;
      used.push(match.id);
      found[i] = match.portal_id;
      const event = events[i];
      if (event?.kind === "user.authenticated") {
        event.data = { ...event.data, portal_id: match.portal_id, method: match.method };
        // An identity provider's sign-in (issue 26): the provider's id.
        if (match.provider_id != null) event.data.provider_id = match.provider_id;
      }
    });
    if (used.length > 0) {
      const accounts = [...new Set(pending.filter((p) => used.includes(p.id)).map((p) => p.account_id))];
      await trx
        .deleteFrom("portal_logins")
        .where("account_id", "in", accounts)
        .where("id", "in", used)
        .execute();
    }
    return found;
  }

  /**
   * PostgreSQL: the packets of one session that several instances handle at once (a NAS's
   * retransmission to another instance, an Interim beside the Stop) take turns until commit, so
   * each reads what the one before wrote; otherwise both would see the session open and raise
   * session.stopped twice, or a late Interim would overwrite the Stop's counters. SQLite has one
   * writer at a time already.
   */
  async lockSession(trx: Trx, acctuniqueid: string): Promise<void> {
    if (this.dialect !== "postgres") return;
    await sql`select pg_advisory_xact_lock(${SESSION_LOCK}::int, hashtext(${acctuniqueid}))`.execute(trx);
  }

  /**
   * A session of this account, by its key, or by the key it had before keys included the account
   * (sessions open across that upgrade); never another account's session.
   */
  async findSession(trx: Trx, accountId: number, acctuniqueid: string, former: string) {
    const rows = await this.sessionByUniqueId(trx, accountId, acctuniqueid, former);
    return rows.find((row) => row.acctuniqueid === acctuniqueid) ?? rows[0];
  }

  async insertSession(
    trx: Trx,
    values: SessionValues,
    context: SessionContext,
    start: number,
    stop: number | null,
  ): Promise<number> {
    const row = await trx
      .insertInto("radacct")
      .values({
        ...this.columns(values),
        acctstarttime: this.time(start),
        acctupdatetime: this.time(values.eventTime),
        acctstoptime: stop === null ? null : this.time(stop),
        acctsessiontime: values.sessionTime,
        acctinputoctets: values.inputOctets,
        acctoutputoctets: values.outputOctets,
        acctterminatecause: stop === null ? "" : values.terminateCause,
        connectinfo_start: values.connectinfo,
        connectinfo_stop: stop === null ? "" : values.connectinfo,
        account_id: context.accountId,
        network_id: context.networkId,
        user_id: context.userId,
        voucher_id: context.voucherId,
        client_mac: context.clientMac,
        ap_mac: context.apMac,
        ssid: context.ssid,
      })
      .returning("radacctid")
      .executeTakeFirstOrThrow();
    return row.radacctid;
  }

  async updateSession(
    trx: Trx,
    accountId: number,
    radacctid: number,
    changes: Partial<Omit<RadacctTable, "radacctid">>,
  ): Promise<void> {
    await trx
      .updateTable("radacct")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("radacctid", "=", radacctid)
      .execute();
  }

  /** Open sessions of one NAS of this account (for Accounting-On/Off), started at or before `at`. */
  openSessionsOfNas(trx: Trx, accountId: number, nasIp: string, at: number) {
    return trx
      .selectFrom("radacct")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("nasipaddress", "=", nasIp)
      .where("acctstoptime", "is", null)
      .where("acctstarttime", "<=", this.time(at))
      .execute();
  }

  private columns(values: SessionValues) {
    const pg = this.dialect === "postgres";
    // FreeRADIUS's PostgreSQL queries write NULL for absent addresses (inet columns), SQLite ''.
    const address = (text: string) => (pg && text === "" ? null : text);
    return {
      acctsessionid: values.acctsessionid,
      acctuniqueid: values.acctuniqueid,
      username: values.username,
      realm: values.realm,
      nasipaddress: values.nasipaddress,
      nasportid: values.nasportid,
      nasporttype: values.nasporttype,
      acctauthentic: values.acctauthentic,
      calledstationid: values.calledstationid,
      callingstationid: values.callingstationid,
      servicetype: values.servicetype,
      framedprotocol: values.framedprotocol,
      framedipaddress: address(values.framedipaddress),
      framedipv6address: address(values.framedipv6address),
      framedipv6prefix: address(values.framedipv6prefix),
      framedinterfaceid: values.framedinterfaceid,
      delegatedipv6prefix: address(values.delegatedipv6prefix),
    };
  }
}

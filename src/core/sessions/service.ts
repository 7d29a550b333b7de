// Live sessions: who is online, and their control. A disconnect goes to the session's NAS through
// the DynamicAuthorization port (RFC 5176, sent by the RADIUS door); its outcome is recorded on the
// session. The worker's sweeps close sessions their NAS stopped reporting (Lost-Carrier) and queue
// disconnects for users whose Expiration passed.

import type { Pair } from "../aaa/pairs.ts";
import type { NewEvent } from "../events/repo.ts";
import { JobQueue, olderJobQueued } from "../jobs/queue.ts";
import { containingNetworks } from "../networks/address.ts";
import { ConflictError, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { isoNow } from "../shared/time.ts";
import type { ConnectedDas, DasAttribute, DasOutcome, DynamicAuthorization } from "./das.ts";
import { queueDisconnect, SWEEP_JOB } from "./jobs.ts";
import {
  isCoaAttribute,
  Pacer,
  REAUTHORIZATION_CHUNK,
  type ReauthorizationPayload,
  type ReplyOf,
} from "./reauthorize.ts";
import type { NamedSessionRow, OnlineCount, SessionFilter, SessionRow, SessionsRepo } from "./repo.ts";
import { DISCONNECT_RETRY_AFTER_S, SESSION_SORT_FIELDS, type SessionStatus } from "./rules.ts";

export interface SessionDisconnect {
  result: string;
  /** NAK: the Error-Cause's name; error: what stopped it; otherwise null. */
  cause: string | null;
  at: string;
}

export interface SessionCoa {
  /** ack, nak, timeout, or error (nothing could be sent). */
  result: string;
  /** NAK: the Error-Cause's name; error: what stopped it; otherwise null. */
  cause: string | null;
  at: string;
  /** The Disconnect-Request sent after it (the network's coa_fallback), or null. */
  fallback: { result: string; cause: string | null } | null;
}

export interface Session {
  id: number;
  status: SessionStatus;
  username: string;
  user_id: number | null;
  network_id: number | null;
  acct_session_id: string;
  nas_ip: string;
  ap_mac: string | null;
  client_mac: string | null;
  ssid: string | null;
  framed_ip: string | null;
  start: string | null;
  update: string | null;
  stop: string | null;
  duration: number;
  input_bytes: number;
  output_bytes: number;
  terminate_cause: string | null;
  disconnect: SessionDisconnect | null;
  /** The last CoA-Request sent for a change (issue 25), or null. */
  coa: SessionCoa | null;
  /** The name of the account's device with this client MAC, when it has one (issue 24). */
  device_name: string | null;
}

export interface ListInput {
  status?: string | undefined;
  user_id?: number | undefined;
  network_id?: number | undefined;
  ap_mac?: string | undefined;
  client_mac?: string | undefined;
  /** ISO 8601 or Unix seconds. */
  since?: string | undefined;
}

const MAC =
  /^([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})$/i;

function mac(field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const m = MAC.exec(value.trim());
  if (!m) throw ValidationError.field(field, "must be a MAC address like aa:bb:cc:dd:ee:ff");
  return m.slice(1).join(":").toLowerCase();
}

function sinceSeconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d{1,10}$/.test(value)) return Number(value);
  const ms = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(ms))
    throw ValidationError.field("since", "must be an ISO 8601 date or time, or Unix seconds");
  return Math.floor(ms / 1000);
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

function seconds(value: number | Date | null): number | null {
  if (value === null) return null;
  return value instanceof Date ? Math.floor(value.getTime() / 1000) : Number(value);
}

function present(row: NamedSessionRow): Session {
  const time = (v: number | Date | null) => {
    const s = seconds(v);
    return s === null ? null : iso(s);
  };
  return {
    id: Number(row.radacctid),
    status: row.acctstoptime === null ? "active" : "closed",
    username: row.username ?? "",
    user_id: row.user_id,
    network_id: row.network_id,
    acct_session_id: row.acctsessionid,
    nas_ip: String(row.nasipaddress ?? ""),
    ap_mac: row.ap_mac,
    client_mac: row.client_mac,
    ssid: row.ssid,
    framed_ip: row.framedipaddress ? String(row.framedipaddress) : null,
    start: time(row.acctstarttime),
    update: time(row.acctupdatetime),
    stop: time(row.acctstoptime),
    duration: Number(row.acctsessiontime ?? 0),
    input_bytes: Number(row.acctinputoctets ?? 0),
    output_bytes: Number(row.acctoutputoctets ?? 0),
    terminate_cause: row.acctterminatecause || null,
    disconnect: row.disconnect_result
      ? { result: row.disconnect_result, cause: row.disconnect_cause ?? null, at: row.disconnect_at ?? "" }
      : null,
    coa: row.coa_result
      ? {
          result: row.coa_result,
          cause: row.coa_cause ?? null,
          at: row.coa_at ?? "",
          fallback: row.coa_fallback_result
            ? { result: row.coa_fallback_result, cause: row.coa_fallback_cause ?? null }
            : null,
        }
      : null,
    device_name: row.device_name ?? null,
  };
}

/**
 * RFC 5176 section 3: the attributes that identify the session to the NAS. Message-Authenticator
 * (RFC 3579 section 3.2) and the Request Authenticator (RFC 5176 section 2.3) are the door's.
 * Event-Timestamp (section 3.5) lets the NAS refuse replays.
 */
export function identifyingAttributes(row: SessionRow, now: number): DasAttribute[] {
  const attributes: DasAttribute[] = [];
  if (row.username) attributes.push(["User-Name", row.username]);
  if (row.acctsessionid) attributes.push(["Acct-Session-Id", row.acctsessionid]);
  if (row.callingstationid) attributes.push(["Calling-Station-Id", row.callingstationid]);
  const framed = row.framedipaddress ? String(row.framedipaddress) : "";
  if (framed && !framed.includes(":")) attributes.push(["Framed-IP-Address", framed]);
  const nas = String(row.nasipaddress ?? "");
  if (nas) attributes.push([nas.includes(":") ? "NAS-IPv6-Address" : "NAS-IP-Address", nas]);
  attributes.push(["Event-Timestamp", now]);
  return attributes;
}

/** A session's network as dynamic authorization needs it. */
type NasTarget = NonNullable<Awaited<ReturnType<SessionsRepo["network"]>>>;

export interface DisconnectReport {
  session: Session;
  disconnect: SessionDisconnect;
}

export class SessionsService {
  /** The door that sends Disconnect/CoA-Requests; unset in processes that cannot (then 409). */
  das: DynamicAuthorization | undefined;
  /** The RadSec listener: requests to a NAS connected over RadSec go down its connection. */
  connected: ConnectedDas | undefined;
  /** Where failures off any request's path go (the quota check after an Interim-Update). */
  log: { warn(object: object, message: string): void } | undefined;
  /**
   * What a login with a session's facts would get now (for CoA-Requests). One function, so the lead
   * can put policies and plans in it; set by createSessions.
   */
  replyOf: ReplyOf | undefined;
  /** Paces CoA-Requests per NAS across every job of this process. */
  private readonly pacer = new Pacer();

  constructor(private readonly repo: SessionsRepo) {}

  async list(accountId: number, input: ListInput, page: PageRequest, sort?: string): Promise<Page<Session>> {
    const order = parseSort(sort, SESSION_SORT_FIELDS);
    if (input.status !== undefined && input.status !== "active" && input.status !== "closed") {
      throw ValidationError.field("status", "must be one of active, closed");
    }
    const filter: SessionFilter = {
      status: input.status,
      userId: input.user_id,
      networkId: input.network_id,
      apMac: mac("ap_mac", input.ap_mac),
      clientMac: mac("client_mac", input.client_mac),
      since: sinceSeconds(input.since),
    };
    const { rows, total } = await this.repo.list(accountId, filter, page, order);
    return { data: rows.map(present), page: page.page, total, limit: page.limit };
  }

  async get(accountId: number, id: number): Promise<Session> {
    const row = await this.repo.get(accountId, id);
    if (!row) throw new NotFoundError(`session ${id} not found`);
    return present(row);
  }

  /** The account of session `id`, for operators' doors that address sessions by id alone (CLI). */
  async locate(id: number, accountId?: number): Promise<number> {
    const owner = await this.repo.accountOf(id);
    if (owner === undefined || (accountId !== undefined && owner !== accountId)) {
      throw new NotFoundError(`session ${id} not found${accountId === undefined ? "" : " in that account"}`);
    }
    return owner;
  }

  /** Open sessions per network and access point ("Online now"). */
  online(accountId: number): Promise<OnlineCount[]> {
    return this.repo.onlineCounts(accountId);
  }

  /**
   * Sends a Disconnect-Request for an open session and records the outcome (ACK, NAK with its
   * Error-Cause, or no answer) on it. 409 when the session is closed or its network does not allow
   * dynamic authorization.
   */
  async disconnect(accountId: number, id: number, reason = "operator"): Promise<DisconnectReport> {
    const row = await this.repo.get(accountId, id);
    if (!row) throw new NotFoundError(`session ${id} not found`);
    if (row.acctstoptime !== null) throw new ConflictError(`session ${id} is already closed`);
    const network = await this.repo.network(accountId, row.network_id);
    if (!network) throw new ConflictError(`session ${id} has no network to send a disconnect to`);
    if (!network.coa_enabled) {
      throw new ConflictError(
        `dynamic authorization (CoA) is off for network ${network.id}; turn coa_enabled on to disconnect its sessions`,
      );
    }
    if (!this.das && !this.connected) throw new ConflictError("this process cannot send RADIUS disconnects");
    const now = Math.floor(Date.now() / 1000);
    const answer = await this.sendDas("disconnect", row, network, identifyingAttributes(row, now));
    const disconnect: SessionDisconnect = {
      result: answer.result,
      cause: answer.result === "nak" ? answer.errorCause : answer.result === "error" ? answer.cause : null,
      at: isoNow(),
    };
    const events: NewEvent[] = [];
    if (answer.result === "ack") {
      events.push({
        accountId,
        kind: "session.disconnected",
        data: {
          session_id: Number(row.radacctid),
          username: row.username,
          user_id: row.user_id,
          network_id: row.network_id,
          client_mac: row.client_mac,
          ap_mac: row.ap_mac,
          reason,
        },
      });
    }
    await this.repo.recordDisconnect(accountId, Number(row.radacctid), disconnect, events);
    return {
      session: present({
        ...row,
        disconnect_result: disconnect.result,
        disconnect_cause: disconnect.cause,
        disconnect_at: disconnect.at,
      }),
      disconnect,
    };
  }

  /**
   * A Disconnect/CoA-Request to the session's NAS: down its RadSec connection when one is open in
   * this process, else over UDP to its DAS port when the network has an address; otherwise the
   * outcome says why nothing was sent.
   */
  private async sendDas(
    kind: "disconnect" | "coa",
    row: SessionRow,
    network: NasTarget,
    attributes: readonly DasAttribute[],
  ): Promise<DasOutcome> {
    const viaRadsec = this.connected?.send(network.account_id, network.id, kind, attributes);
    if (viaRadsec) return viaRadsec;
    if (!network.nasname) {
      return {
        result: "error",
        cause: "the NAS is not connected over RadSec now (the network has no address for UDP)",
      };
    }
    const host = targetAddress(String(row.nasipaddress ?? ""), network.nasname);
    if (host === null) {
      return { result: "error", cause: `NAS address ${row.nasipaddress} is outside network ${network.id}` };
    }
    if (!this.das) return { result: "error", cause: "this process cannot send RADIUS disconnects over UDP" };
    return this.das.send(kind, { host, port: network.coa_port, secret: network.secret }, attributes);
  }

  /** The open sessions of these usernames, disconnected one after the other (the job's work). */
  async disconnectUsernames(accountId: number, usernames: string[], reason: string): Promise<string[]> {
    const done: string[] = [];
    for (const row of await this.repo.openOfUsernames(accountId, usernames)) {
      done.push(await this.disconnectQuietly(accountId, Number(row.radacctid), reason));
    }
    return done;
  }

  /** The open sessions of these devices (by client MAC), disconnected one after the other. */
  async disconnectMacs(accountId: number, macs: string[], reason: string): Promise<string[]> {
    const done: string[] = [];
    for (const row of await this.repo.openOfMacs(accountId, macs)) {
      done.push(await this.disconnectQuietly(accountId, Number(row.radacctid), reason));
    }
    return done;
  }

  /**
   * One chunk of a reauthorization job: each open session of the target gets a CoA-Request (RFC 5176
   * section 2.2: its identification plus what a login would get now, COA_ATTRIBUTES only), paced per
   * NAS; a NAK or no answer is followed by a Disconnect-Request when the network says so. `next`:
   * the cursor of the following chunk, when this one was full.
   */
  async reauthorize(
    accountId: number,
    payload: ReauthorizationPayload,
  ): Promise<{ summary: string; next?: number }> {
    const rows = await this.repo.openForReauthorization(
      accountId,
      payload.target,
      payload.after ?? 0,
      REAUTHORIZATION_CHUNK,
    );
    const networks = new Map<number, Promise<NasTarget | undefined>>();
    const networkOf = (id: number | null) => {
      if (id === null) return Promise.resolve(undefined);
      if (!networks.has(id)) networks.set(id, this.repo.network(accountId, id));
      return networks.get(id)!;
    };
    const outcomes = await Promise.all(
      rows.map(async (row) => {
        const network = await networkOf(row.network_id);
        return network ? this.reauthorizeOne(accountId, row, network, payload.reason) : "no network";
      }),
    );
    const counts = new Map<string, number>();
    for (const outcome of outcomes) counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    const summary =
      rows.length === 0 ? "no open sessions" : [...counts].map(([k, n]) => `${k}: ${n}`).join(", ");
    const last = rows.at(-1);
    return rows.length === REAUTHORIZATION_CHUNK && last
      ? { summary, next: Number(last.radacctid) }
      : { summary };
  }

  /** What a login with the session's facts would get now, as a CoA-Request may carry it. */
  private async coaReply(accountId: number, row: SessionRow): Promise<Pair[]> {
    if (!this.replyOf) return [];
    const login = await this.repo.lastLogin(accountId, row);
    const reply = await this.replyOf({
      accountId,
      sessionId: Number(row.radacctid),
      username: row.username ?? "",
      networkId: row.network_id,
      calledStationId: row.calledstationid ?? login?.calledstationid ?? null,
      nasIdentifier: login?.nas_identifier ?? null,
      callingStationId: row.callingstationid,
      authMethod: login?.method ?? null,
    });
    return reply.filter((p) => isCoaAttribute(p.attribute));
  }

  /** One session's CoA-Request, its fallback and their record; returns the outcome's name. */
  private async reauthorizeOne(accountId: number, row: SessionRow, network: NasTarget, reason: string) {
    const id = Number(row.radacctid);
    const reply = await this.coaReply(accountId, row);
    if (reply.length === 0) return "nothing to change";
    const nas = `${network.id}/${row.nasipaddress ?? ""}`;
    await this.pacer.wait(nas, network.coa_rate);
    const answer = await this.sendDas("coa", row, network, [
      ...identifyingAttributes(row, Math.floor(Date.now() / 1000)),
      ...reply.map((p) => [p.attribute, p.value] as const),
    ]);
    const cause =
      answer.result === "nak" ? answer.errorCause : answer.result === "error" ? answer.cause : null;
    let fallback: { result: string; cause: string | null } | null = null;
    if ((answer.result === "nak" || answer.result === "timeout") && network.coa_fallback === "disconnect") {
      await this.pacer.wait(nas, network.coa_rate);
      fallback = await this.disconnect(accountId, id, `change not applied live (CoA ${answer.result})`).then(
        ({ disconnect }) => ({ result: disconnect.result, cause: disconnect.cause }),
        (error: Error) => ({ result: "error", cause: error.message }),
      );
    }
    const event: NewEvent = {
      accountId,
      kind: "session.coa",
      data: {
        session_id: id,
        username: row.username,
        user_id: row.user_id,
        network_id: row.network_id,
        reason,
        result: answer.result,
        cause,
        attributes: reply.map((p) => p.attribute),
        fallback,
      },
    };
    await this.repo.recordCoa(accountId, id, { result: answer.result, cause, at: isoNow(), fallback }, [
      event,
    ]);
    return fallback ? `${answer.result}, fallback disconnect ${fallback.result}` : answer.result;
  }

  /** One disconnect for a job: a refusal (CoA off, closed) is the job's result, not its failure. */
  async disconnectQuietly(accountId: number, id: number, reason: string): Promise<string> {
    try {
      const { disconnect } = await this.disconnect(accountId, id, reason);
      return `session ${id}: ${disconnect.result}${disconnect.cause ? ` (${disconnect.cause})` : ""}`;
    } catch (error) {
      if (error instanceof ConflictError || error instanceof NotFoundError) {
        // A queued disconnect that cannot be sent (CoA off) says so on the open session, and one
        // marked "pending" does not stay so.
        const row = await this.repo.get(accountId, id);
        if (row && (row.acctstoptime === null || row.disconnect_result === "pending")) {
          await this.repo.recordDisconnect(
            accountId,
            id,
            { result: "error", cause: error.message, at: isoNow() },
            [],
          );
        }
        return `session ${id}: ${error.message}`;
      }
      throw error;
    }
  }

  /** Queues a disconnect for a session unless one was tried lately (sweeps, quota checks). */
  async queueDisconnect(
    accountId: number,
    row: Pick<SessionRow, "radacctid" | "disconnect_at">,
    reason: string,
  ) {
    if (row.disconnect_at && Date.parse(row.disconnect_at) > Date.now() - DISCONNECT_RETRY_AFTER_S * 1000) {
      return false;
    }
    const id = Number(row.radacctid);
    await this.repo.transaction(async (repo) => {
      await repo.db
        .updateTable("radacct")
        .set({
          disconnect_result: "pending",
          disconnect_cause: reason.slice(0, 200),
          disconnect_at: isoNow(),
        })
        .where("account_id", "=", accountId)
        .where("radacctid", "=", id)
        .execute();
      await queueDisconnect(repo.db, repo.dialect, accountId, { session_id: id, reason });
      await repo.audit({ accountId, resource: "session", id, action: "queue_disconnect", after: { reason } });
    });
    return true;
  }

  /** Makes sure the recurring sweep job exists (one per installation). */
  async ensureSweep(): Promise<void> {
    await new JobQueue(this.repo.db, this.repo.dialect).ensureRecurring(SWEEP_JOB);
  }

  /** Whether this sweep job should stand down for an older one (two were queued at once). */
  isDuplicateSweep(jobId: number): Promise<boolean> {
    return olderJobQueued(this.repo.db, SWEEP_JOB, jobId);
  }

  /**
   * The worker's sweep: closes sessions their NAS stopped reporting (no accounting for three interim
   * intervals or the network's stale_after) with Acct-Terminate-Cause Lost-Carrier, stopped at their
   * last accounting; queues disconnects for the open sessions of users whose Expiration passed.
   */
  async sweep(now = Math.floor(Date.now() / 1000)): Promise<{ closed: number; queued: number }> {
    let closed = 0;
    for (const row of await this.repo.staleSessions(now, 500)) {
      const start = seconds(row.acctstarttime) ?? now;
      const last = seconds(row.acctupdatetime) ?? start;
      const sessionTime = Math.max(Number(row.acctsessiontime ?? 0), last - start);
      const event: NewEvent = {
        accountId: row.account_id ?? 0,
        kind: "session.stopped",
        data: {
          session_id: Number(row.radacctid),
          username: row.username,
          user_id: row.user_id,
          network_id: row.network_id,
          ap_mac: row.ap_mac,
          client_mac: row.client_mac,
          ssid: row.ssid,
          start: iso(start),
          stop: iso(last),
          duration: sessionTime,
          input_bytes: Number(row.acctinputoctets ?? 0),
          output_bytes: Number(row.acctoutputoctets ?? 0),
          terminate_cause: "Lost-Carrier",
        },
      };
      if (
        await this.repo.close(row.account_id ?? 0, Number(row.radacctid), last, sessionTime, "Lost-Carrier", [
          event,
        ])
      )
        closed++;
    }
    let queued = 0;
    for (const row of await this.repo.openWithExpiration(500)) {
      const at = /^\d+$/.test(row.expiration) ? Number(row.expiration) : Number.NaN;
      if (!(at <= now) || row.account_id === null) continue;
      if (await this.queueDisconnect(row.account_id, row, "user expired")) queued++;
    }
    return { closed, queued };
  }
}

/**
 * Where the Disconnect-Request goes: the session's NAS-IP-Address when it lies in its network (a
 * packet's claim is not trusted beyond the network's own addresses), else the network's address when
 * it is a single one; null when neither.
 */
export function targetAddress(nasIp: string, nasname: string): string | null {
  // A network reached over RadSec only has no address to send UDP to (and a NAS behind NAT
  // could not be reached there anyway): the RadSec door sends over the NAS's TLS connection.
  if (nasname === "") return null;
  if (nasIp && containingNetworks(nasIp).includes(nasname)) return nasIp;
  return nasname.includes("/") ? null : nasname;
}

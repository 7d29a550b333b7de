// The RADIUS server's core: decides logins (FreeRADIUS semantics, then Wisp's own rules for
// disabled users and vouchers), keeps radacct as accounting arrives, and records every attempt
// and session change with its events. Every door that authenticates (the UDP server, FreeRADIUS
// in front) goes through here.
import type { Kysely, Transaction } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { TransactionBatcher } from "../../db/transaction-batcher.ts";
import { insertEvents, type NewEvent } from "../events/repo.ts";
import { type GatewayVendor, gatewayVendorOf } from "../networks/rules.ts";
import type { PolicyRequest, PolicyVerdict } from "../policies/engine.ts";
import { unixNow } from "../shared/clock.ts";
import { acctStatus, type SessionValues, sessionValues } from "./accounting.ts";
import { type Authorization, authorize } from "./authorize.ts";
import { type Credentials, decideLogin, wireReply } from "./decide.ts";
import { firstValue, type Pair } from "./pairs.ts";
import { type AttemptRecord, type AuthMethod, RecordingRepo, type SessionContext } from "./recording.ts";
import { LoginRepo } from "./repo.ts";
import { normalizeMac, parseCalledStation } from "./stations.ts";

/**
 * The account's policies, applied to a login the credential check accepted (src/core/policies):
 * the first matching rule's outcome (accept with its attributes, or reject with its reason).
 */
export type PolicyHook = (input: PolicyRequest, reply: Pair[]) => Promise<PolicyVerdict>;

/** A voucher's verdict for a pre-check: nothing written; null when no voucher has the code. */
export type VoucherCheck = (input: {
  accountId: number;
  code: string;
  credentials: Credentials;
  clientMac: string | null;
  now: number;
}) => Promise<{ voucherId: number; accepted: boolean; reason: string | null } | null>;

/** The RADIUS client a packet came from: a Wisp network. */
export interface Client {
  id: number;
  account_id: number;
  /** Seconds sent as Acct-Interim-Interval in Access-Accepts (RFC 2869 section 5.16); 0: none. */
  interim_interval?: number;
  /** MAC authentication: off, devices, guests; and the MAB password its gateways send (migration 025). */
  mab_mode?: string;
  mab_password?: string;
  mab_secret?: string;
  /** The gateway's vendor (migration 031): which attributes carry a plan's bandwidth. */
  vendor?: string;
}

/** A MAC authentication's verdict (src/core/devices/mab.ts). */
export interface MacVerdict {
  accepted: boolean;
  reply: Pair[];
  reason: string | null;
  deviceId: number | null;
  userId: number | null;
  voucherId: number | null;
  /** Write the device's last_seen with the attempt. */
  touch: boolean;
}

/**
 * MAC authentication, asked when the User-Name is no user's (a user always wins): null when the
 * request is not one (no MAC in User-Name, or MAB off and not asked for).
 */
export type MacLogin = (input: {
  network: Client;
  request: readonly Pair[];
  credentials: Credentials;
  now: number;
  run: TransactionBatcher["run"];
}) => Promise<MacVerdict | null>;

/** A directory's verdict on a login: proven (the shadow user to go on with) or refused, and why. */
export type DirectoryVerdict =
  /** written: the shadow user's row (or its groups) was written by this login. */
  | { proven: true; userId: number; username: string; written: boolean }
  | { proven: false; userId: number | null; reason: string };

/**
 * A login for a directory's user (src/core/directories/login.ts): asked for a shadow user, and for
 * a name no local user, voucher or device has; null when no directory has the name.
 */
export type DirectoryLogin = (input: {
  accountId: number;
  username: string;
  credentials: Credentials;
  /** The shadow user's directory; null for a name unknown here. */
  shadowOf: number | null;
}) => Promise<DirectoryVerdict | null>;

/** Told of every Interim-Update once stored (the quota check on the accounting path). */
export type UsageHook = (usage: { accountId: number; username: string; sessionId: number }) => void;

export interface LoginResult {
  accepted: boolean;
  /** Reply items of an Access-Accept. */
  reply: Pair[];
  /** Why an Access-Reject, in words (sent as Reply-Message). */
  reason: string | null;
  /** More about the reason, for the auth log only (which hash scheme, which limit). */
  detail?: string | undefined;
}

export interface LoginOutcome {
  result: LoginResult;
  attempt: AttemptRecord;
}

/** A voucher login, when the username is no user's: null when it is no voucher's code either. */
export type VoucherLogin = (input: {
  accountId: number;
  code: string;
  credentials: Credentials;
  clientMac: string | null;
  now: number;
  /** The network's gateway vendor: the attributes of the batch's plan bandwidth. */
  vendor?: GatewayVendor | undefined;
  /** Writes the voucher's state change and events in the caller's transaction. */
  run: TransactionBatcher["run"];
}) => Promise<{ voucherId: number; accepted: boolean; reply: Pair[]; reason: string | null } | null>;

interface Where {
  clientMac: string | null;
  apMac: string | null;
  ssid: string | null;
}

function where(request: readonly Pair[]): Where {
  const called = parseCalledStation(firstValue(request, "Called-Station-Id"));
  return {
    clientMac: normalizeMac(firstValue(request, "Calling-Station-Id")),
    apMac: called.apMac,
    ssid: called.ssid,
  };
}

/** How the credentials prove the user (the door says more when it knows it: PEAP, TTLS). */
function methodOf(credentials: Credentials): AuthMethod | null {
  if (credentials.method) return credentials.method;
  if (credentials.certificate) return "TLS";
  if (credentials.password !== undefined) return "PAP";
  if (credentials.chap) return "CHAP";
  if (credentials.mschapv2) return "MSCHAPv2";
  return null;
}

function attemptOf(
  client: Client,
  request: readonly Pair[],
  result: LoginResult,
  userId: number | null,
  voucherId: number | null,
  now: number,
  method: AuthMethod | null,
): AttemptRecord {
  return {
    accountId: client.account_id,
    username: firstValue(request, "User-Name") ?? "",
    accepted: result.accepted,
    reason: result.detail ? `${result.reason} (${result.detail})` : result.reason,
    userId,
    voucherId,
    networkId: client.id,
    calledStationId: firstValue(request, "Called-Station-Id") ?? "",
    callingStationId: firstValue(request, "Calling-Station-Id") ?? "",
    ...where(request),
    nasIp: firstValue(request, "NAS-IP-Address") ?? null,
    nasIdentifier: firstValue(request, "NAS-Identifier") ?? null,
    method,
    outerIdentity: null,
    at: now,
  };
}

export class AaaService {
  private readonly logins: LoginRepo;
  private readonly recording: RecordingRepo;
  readonly writes: TransactionBatcher;
  private readonly attempts: AttemptQueue;
  voucherLogin: VoucherLogin | undefined;
  macLogin: MacLogin | undefined;
  directoryLogin: DirectoryLogin | undefined;
  /** The voucher rules without writing (a portal's pre-check). */
  voucherCheck: VoucherCheck | undefined;
  onUsage: UsageHook | undefined;
  policies: PolicyHook | undefined;
  /**
   * Unix seconds a login is decided at (time-of-day rules, Login-Time, Expiration). Tests of those
   * rules set it (WISP_TEST_CLOCK_FILE for a server process, see src/core/shared/clock.ts).
   */
  clock: () => number = unixNow;

  constructor(db: Kysely<Schema>, dialect: DialectName) {
    this.logins = new LoginRepo(db, dialect);
    this.recording = new RecordingRepo(dialect);
    this.writes = new TransactionBatcher(db);
    // store(): while another process holds SQLite's lock the verdict goes out at once; the
    // attempts stay queued in the batcher until they are written (drain() waits for them).
    this.attempts = new AttemptQueue((attempts, events) =>
      this.writes.store((trx) => this.recording.recordAttempts(trx, attempts, events)),
    );
  }

  /** Waits until every attempt and write queued so far is stored. */
  async drain(): Promise<void> {
    await this.attempts.flush();
    await this.writes.drain();
  }

  /** Decides and records in one step (the door can also decide, build its answer, then record). */
  async authenticate(client: Client, request: Pair[], credentials: Credentials, now?: number) {
    const outcome = await this.decide(client, request, credentials, now);
    await this.record(outcome);
    return outcome.result;
  }

  /** Decides a login; nothing about the attempt is recorded until record(). */
  async decide(
    client: Client,
    request: Pair[],
    credentials: Credentials,
    now = this.clock(),
  ): Promise<LoginOutcome> {
    const accountId = client.account_id;
    const place = where(request);
    const voucherLogin = this.voucherLogin;
    const macLogin = this.macLogin;
    const run: TransactionBatcher["run"] = (w) => this.writes.run(w);
    const vendor = gatewayVendorOf(client.vendor);
    const { result, user, voucherId, mab } = await this.judge(
      accountId,
      request,
      credentials,
      now,
      (code) =>
        voucherLogin
          ? voucherLogin({ accountId, code, credentials, clientMac: place.clientMac, now, vendor, run })
          : Promise.resolve(null),
      macLogin && (() => macLogin({ network: client, request, credentials, now, run })),
      vendor,
    );
    const method = mab ? "MAB" : methodOf(credentials);
    const userId = mab ? mab.userId : (user?.id ?? null);
    let policy: PolicyVerdict["policy"] | undefined;
    if (result.accepted && this.policies) {
      const verdict = await this.policies(
        {
          network: client,
          ssid: place.ssid,
          nasIdentifier: firstValue(request, "NAS-Identifier") ?? null,
          clientMac: place.clientMac,
          method,
          username: firstValue(request, "User-Name") ?? "",
          userId,
          now,
        },
        result.reply,
      );
      policy = verdict.policy;
      result.accepted = verdict.accepted;
      result.reply = verdict.reply;
      result.reason = verdict.reason;
    }
    const interval = client.interim_interval ?? 0;
    if (result.accepted && interval > 0 && firstValue(result.reply, "Acct-Interim-Interval") === undefined) {
      result.reply = [
        ...result.reply,
        { attribute: "Acct-Interim-Interval", op: "=", value: String(interval) },
      ];
    }
    const attempt = attemptOf(client, request, result, userId, mab ? mab.voucherId : voucherId, now, method);
    if (policy) attempt.policy = policy;
    if (mab?.deviceId) attempt.device = { id: mab.deviceId, touch: mab.touch };
    return { result, attempt };
  }

  /**
   * What a new login with this request would be given now, credentials aside: the user's and
   * groups' items with their plan in the network's vendor, then the policies. A live session's new
   * authorization (CoA, RFC 5176 section 3.1). Empty when the user is gone or a policy would reject.
   */
  async replyFor(client: Client, request: Pair[], method: AuthMethod | null, now = this.clock()) {
    const accountId = client.account_id;
    const username = firstValue(request, "User-Name") ?? "";
    const items = await this.logins.userItems(accountId, username);
    const authz = authorize(request, items, gatewayVendorOf(client.vendor));
    if (!authz.found) return [];
    const reply = wireReply(authz.reply);
    if (!this.policies) return reply;
    const place = where(request);
    const user = await this.logins.findUser(accountId, username);
    const verdict = await this.policies(
      {
        network: client,
        ssid: place.ssid,
        nasIdentifier: firstValue(request, "NAS-Identifier") ?? null,
        clientMac: place.clientMac,
        method,
        username,
        userId: user?.id ?? null,
        now,
      },
      reply,
    );
    return verdict.accepted ? verdict.reply : [];
  }

  /**
   * The same decision as a RADIUS login of `username`, made for a captive portal before it hands
   * the guest to the gateway: nothing is recorded and no voucher is activated (the gateway's own
   * Access-Request does that). The request is what the gateway will send: User-Name and the
   * client's MAC as Calling-Station-Id.
   */
  async precheck(
    accountId: number,
    input: { username: string; password: string; clientMac: string | null },
    now = this.clock(),
  ): Promise<{ accepted: boolean; reason: string | null; voucher: boolean }> {
    const request: Pair[] = [{ attribute: "User-Name", op: "=", value: input.username }];
    if (input.clientMac) request.push({ attribute: "Calling-Station-Id", op: "=", value: input.clientMac });
    // The bytes the gateway will send: the form's text as UTF-8.
    const credentials: Credentials = { password: Buffer.from(input.password, "utf8") };
    const check = this.voucherCheck;
    const { result, voucherId } = await this.judge(accountId, request, credentials, now, (code) =>
      check
        ? check({ accountId, code, credentials, clientMac: input.clientMac, now })
        : Promise.resolve(null),
    );
    return { accepted: result.accepted, reason: result.reason, voucher: voucherId !== null };
  }

  /** FreeRADIUS's decision, then Wisp's rules for disabled users and vouchers (`voucher` decides a code). */
  private async judge(
    accountId: number,
    request: Pair[],
    credentials: Credentials,
    now: number,
    voucherStep: (
      code: string,
    ) => Promise<{ voucherId: number; accepted: boolean; reply?: Pair[]; reason: string | null } | null>,
    macStep?: () => Promise<MacVerdict | null>,
    vendor: GatewayVendor = "generic",
  ): Promise<{
    result: LoginResult;
    user: { id: number } | undefined;
    voucherId: number | null;
    mab?: MacVerdict | undefined;
  }> {
    const username = firstValue(request, "User-Name") ?? "";
    const user = await this.logins.findUser(accountId, username);
    let result: LoginResult;
    let voucherId: number | null = null;
    if (user?.status === "disabled") {
      result = { accepted: false, reply: [], reason: "user disabled" };
    } else {
      const authz = authorize(request, await this.logins.userItems(accountId, username), vendor);
      // A User-Name that is a MAC but a user's (or has FreeRADIUS rows) is that user's login.
      const mab = authz.found || user || !macStep ? null : await macStep();
      if (mab)
        return {
          result: { accepted: mab.accepted, reply: mab.reply, reason: mab.reason },
          user,
          voucherId,
          mab,
        };
      const shadowOf = user?.directory_id ?? null;
      const voucher = authz.found || shadowOf !== null ? null : await voucherStep(username);
      // Last: a directory that is down never holds up vouchers, devices or local users.
      const directory =
        voucher || !this.directoryLogin || (shadowOf === null && (user || authz.found))
          ? null
          : await this.directoryLogin({ accountId, username, credentials, shadowOf });
      if (voucher) {
        voucherId = voucher.voucherId;
        result = { accepted: voucher.accepted, reply: voucher.reply ?? [], reason: voucher.reason };
      } else if (directory) {
        const shadow = directory.userId === null ? user : { id: directory.userId };
        // The items read above are the shadow's when it existed under this very name and the
        // login wrote nothing (the steady case): not read a second time.
        const unchanged =
          directory.proven && !directory.written && shadowOf !== null && directory.username === username;
        return {
          result: await this.decideShadow(
            accountId,
            request,
            directory,
            now,
            vendor,
            unchanged ? authz : null,
          ),
          user: shadow,
          voucherId,
        };
      } else {
        const decision = await decideLogin(
          authz,
          credentials,
          this.logins.counters(accountId, username),
          now,
        );
        result = decision.accepted
          ? { accepted: true, reply: decision.reply, reason: null }
          : { accepted: false, reply: [], reason: decision.reason, detail: decision.detail };
      }
    }
    return { result, user, voucherId };
  }

  /** A directory's verdict; once proven, the shadow user's rules as for a local user (no password item). */
  private async decideShadow(
    accountId: number,
    request: Pair[],
    verdict: DirectoryVerdict,
    now: number,
    vendor: GatewayVendor,
    known: Authorization | null,
  ): Promise<LoginResult> {
    if (!verdict.proven) return { accepted: false, reply: [], reason: verdict.reason };
    const name = verdict.username;
    const authz = known ?? authorize(request, await this.logins.userItems(accountId, name), vendor);
    const counters = this.logins.counters(accountId, name);
    const decision = await decideLogin({ ...authz, found: true }, { directory: true }, counters, now);
    return decision.accepted
      ? { accepted: true, reply: decision.reply, reason: null }
      : { accepted: false, reply: [], reason: decision.reason, detail: decision.detail };
  }

  /**
   * A login that ended before any decision (an EAP conversation that failed: TLS, certificate,
   * protocol): recorded as a reject with `reason`, like a decided one.
   */
  async refuse(
    client: Client,
    request: Pair[],
    reason: string,
    method: AuthMethod | null,
    now = Math.floor(Date.now() / 1000),
  ): Promise<LoginOutcome> {
    const username = firstValue(request, "User-Name") ?? "";
    const user = username === "" ? undefined : await this.logins.findUser(client.account_id, username);
    const result: LoginResult = { accepted: false, reply: [], reason };
    return { result, attempt: attemptOf(client, request, result, user?.id ?? null, null, now, method) };
  }

  /** The same attempt answered with a reject instead (the door could not send the accept). */
  rejectInstead(outcome: LoginOutcome, reason: string): LoginOutcome {
    return {
      result: { accepted: false, reply: [], reason },
      attempt: { ...outcome.attempt, accepted: false, reason },
    };
  }

  /**
   * Records the attempt in radpostauth with its user.authenticated / user.rejected event. Resolves
   * once stored, or once queued when the database is busy (it is written when the lock is free).
   */
  async record({ attempt }: LoginOutcome): Promise<void> {
    const data = {
      user_id: attempt.userId,
      username: attempt.username,
      ap_mac: attempt.apMac,
      client_mac: attempt.clientMac,
      ssid: attempt.ssid,
      network_id: attempt.networkId,
      ...(attempt.voucherId === null ? {} : { voucher_id: attempt.voucherId }),
      ...(attempt.accepted ? {} : { reason: attempt.reason }),
      ...(attempt.method === null ? {} : { method: attempt.method }),
      ...(attempt.outerIdentity === null ? {} : { outer_identity: attempt.outerIdentity }),
    };
    const event: NewEvent = {
      accountId: attempt.accountId,
      kind: attempt.accepted ? "user.authenticated" : "user.rejected",
      data,
    };
    await this.attempts.add(attempt, event);
  }

  /** Applies one Accounting-Request; resolves once it is stored. */
  async account(
    client: Client,
    request: Pair[],
    sourceAddress: string,
    now = Math.floor(Date.now() / 1000),
  ): Promise<void> {
    const status = acctStatus(request);
    if (status === null) return;
    const accountId = client.account_id;
    const values = sessionValues(request, accountId, sourceAddress, now);
    if (status === "accounting-on" || status === "accounting-off") {
      await this.writes.run((trx) => this.closeNasSessions(trx, accountId, values));
      return;
    }
    const user = await this.logins.findUser(accountId, values.username);
    const place = where(request);
    const context: SessionContext = {
      accountId,
      networkId: client.id,
      userId: user?.id ?? null,
      voucherId: null,
      ...place,
    };
    let sessionId: number | undefined;
    await this.writes.run(async (trx) => {
      const r = this.recording;
      await r.lockSession(trx, values.acctuniqueid);
      const existing = await r.findSession(trx, accountId, values.acctuniqueid, values.formerAcctuniqueid);
      const events: NewEvent[] = [];
      const stopped = status === "stop";
      if (!existing) {
        const start = status === "start" ? values.eventTime : values.eventTime - values.sessionTime;
        const id = await r.insertSession(trx, values, context, start, stopped ? values.eventTime : null);
        sessionId = id;
        events.push(sessionEvent("session.started", id, values, context, start));
        if (stopped) events.push(sessionEvent("session.stopped", id, values, context, start));
      } else if (status === "start") {
        // A retransmitted or late Start: FreeRADIUS's alternative query refreshes the start.
        await r.updateSession(trx, accountId, existing.radacctid, {
          acctstarttime: r.time(values.eventTime),
          acctupdatetime: r.time(values.eventTime),
          connectinfo_start: values.connectinfo,
        });
      } else {
        sessionId = existing.radacctid;
        const lastUpdate = r.seconds(existing.acctupdatetime);
        // In order, the packet's counters replace the row's (as FreeRADIUS's queries do). A packet
        // older than the last one applied (it arrived late, after a newer one or the Stop) never
        // takes time or octets back: quotas would otherwise see usage shrink.
        const newer = lastUpdate === null || values.eventTime >= lastUpdate;
        const counter = (reported: number, stored: number | null) =>
          newer ? reported : Math.max(reported, Number(stored ?? 0));
        await r.updateSession(trx, accountId, existing.radacctid, {
          ...(newer ? { acctupdatetime: r.time(values.eventTime) } : {}),
          ...(lastUpdate === null || stopped || !newer
            ? {}
            : { acctinterval: values.eventTime - lastUpdate }),
          acctsessiontime: counter(values.sessionTime, existing.acctsessiontime),
          acctinputoctets: counter(values.inputOctets, existing.acctinputoctets),
          acctoutputoctets: counter(values.outputOctets, existing.acctoutputoctets),
          ...(stopped
            ? {
                acctstoptime: r.time(values.eventTime),
                acctterminatecause: values.terminateCause,
                connectinfo_stop: values.connectinfo,
              }
            : {}),
        });
        if (stopped && existing.acctstoptime === null) {
          const start = r.seconds(existing.acctstarttime) ?? values.eventTime - values.sessionTime;
          events.push(sessionEvent("session.stopped", existing.radacctid, values, context, start));
        }
      }
      await insertEvents(trx, events);
    });
    // The login checked the quotas; each Interim-Update checks them again (a Stop ends the session).
    if (sessionId !== undefined && status === "interim-update" && values.username) {
      this.onUsage?.({ accountId, username: values.username, sessionId });
    }
  }

  private async closeNasSessions(trx: Transaction<Schema>, accountId: number, values: SessionValues) {
    const r = this.recording;
    const open = await r.openSessionsOfNas(trx, accountId, values.nasipaddress, values.eventTime);
    const events: NewEvent[] = [];
    for (const row of open) {
      const start = r.seconds(row.acctstarttime) ?? values.eventTime;
      await r.updateSession(trx, accountId, row.radacctid, {
        acctstoptime: r.time(values.eventTime),
        acctupdatetime: r.time(values.eventTime),
        acctsessiontime: values.eventTime - start,
        acctterminatecause: values.terminateCause || "NAS-Reboot",
      });
      const context: SessionContext = {
        accountId: row.account_id ?? accountId,
        networkId: row.network_id ?? 0,
        userId: row.user_id,
        voucherId: row.voucher_id,
        clientMac: row.client_mac,
        apMac: row.ap_mac,
        ssid: row.ssid,
      };
      const closed = {
        ...values,
        username: row.username ?? "",
        sessionTime: values.eventTime - start,
        inputOctets: Number(row.acctinputoctets ?? 0),
        outputOctets: Number(row.acctoutputoctets ?? 0),
        terminateCause: values.terminateCause || "NAS-Reboot",
      };
      events.push(sessionEvent("session.stopped", row.radacctid, closed, context, start));
    }
    await insertEvents(trx, events);
  }
}

function sessionEvent(
  kind: "session.started" | "session.stopped",
  sessionId: number,
  values: SessionValues,
  context: SessionContext,
  start: number,
): NewEvent {
  const base = {
    session_id: sessionId,
    username: values.username,
    user_id: context.userId,
    network_id: context.networkId,
    ap_mac: context.apMac,
    client_mac: context.clientMac,
    ssid: context.ssid,
    start: new Date(start * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
  };
  const data =
    kind === "session.started"
      ? base
      : {
          ...base,
          stop: new Date(values.eventTime * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
          duration: values.sessionTime,
          input_bytes: values.inputOctets,
          output_bytes: values.outputOctets,
          terminate_cause: values.terminateCause,
        };
  return { accountId: context.accountId, kind, data };
}

/**
 * Attempts waiting to be written: the first one of a burst schedules a flush on the next tick,
 * and every attempt queued until then goes into the same two INSERTs.
 */
class AttemptQueue {
  private attempts: AttemptRecord[] = [];
  private events: NewEvent[] = [];
  private waiting: { resolve(): void; reject(error: unknown): void }[] = [];
  private scheduled = false;

  constructor(private readonly write: (attempts: AttemptRecord[], events: NewEvent[]) => Promise<void>) {}

  add(attempt: AttemptRecord, event: NewEvent): Promise<void> {
    this.attempts.push(attempt);
    this.events.push(event);
    const done = new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
    return done;
  }

  async flush(): Promise<void> {
    this.scheduled = false;
    const attempts = this.attempts;
    const events = this.events;
    const waiting = this.waiting;
    if (attempts.length === 0) return;
    this.attempts = [];
    this.events = [];
    this.waiting = [];
    try {
      await this.write(attempts, events);
      for (const w of waiting) w.resolve();
    } catch (error) {
      for (const w of waiting) w.reject(error);
    }
  }
}

// Changes reach live sessions (RFC 5176 CoA): a change of what a login would get (a user's or a
// group's reply items, a group membership, and for the lead's hooks a plan or a policy) queues a
// reauthorization job. The job works through the target's open sessions on networks that allow
// CoA, a chunk per job (each chunk queues the next, so progress is visible and the worker is never
// held for minutes), sending each session what a new login would get now (replyOf) filtered to what
// a CoA-Request may change, paced per NAS (the network's coa_rate).
import type { Kysely } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import type { Pair } from "../aaa/pairs.ts";
import { JobQueue } from "../jobs/queue.ts";
import { COA_JOB } from "./jobs.ts";

/** Whose sessions a change reaches: some users, a group's members, or the whole account. */
export type ReauthorizationTarget = { usernames: string[] } | { group: string } | { account: true };

export interface ReauthorizationPayload {
  target: ReauthorizationTarget;
  /** Why, for the job's result and the session.coa event. */
  reason: string;
  /** The chunk's cursor: sessions with a larger radacctid are left. */
  after?: number;
}

/** Sessions per job: at the default 20/s to one NAS a job lasts about 5 s plus the last answers. */
export const REAUTHORIZATION_CHUNK = 100;

/**
 * Queues CoA-Requests for the open sessions of `target`, in the caller's transaction (`db` may be
 * one) so the change and its push commit together. The hook for every change of what a login gets.
 */
export async function queueReauthorization(
  db: Kysely<Schema>,
  dialect: DialectName,
  accountId: number,
  target: ReauthorizationTarget,
  reason = "authorization changed",
  after?: number,
): Promise<void> {
  if ("usernames" in target && target.usernames.length === 0) return;
  const payload: ReauthorizationPayload = { target, reason, ...(after === undefined ? {} : { after }) };
  await new JobQueue(db, dialect).enqueue(db, [{ kind: COA_JOB, accountId, payload }]);
}

/** A session's facts as its login had them: what decides the reply a login would get now. */
export interface SessionFacts {
  accountId: number;
  sessionId: number;
  username: string;
  networkId: number | null;
  calledStationId: string | null;
  nasIdentifier: string | null;
  callingStationId: string | null;
  /** PAP, CHAP, MSCHAPv2, PEAP, TTLS, TLS, MAB...: the method of the login that opened it, if known. */
  authMethod: string | null;
}

/** The reply items a login with these facts would get now (before the CoA filter). */
export type ReplyOf = (facts: SessionFacts) => Promise<Pair[]>;

/**
 * The reply attributes a CoA-Request may change on a live session (RFC 5176 section 3.1: the
 * authorization attributes the NAS supports changing): its time limits, bandwidth in the forms
 * CoovaChilli, MikroTik and WISPr gateways read, and the filter or role a firewall applies (Filter-Id,
 * RFC 2865 section 5.11; Aruba-User-Role and Airespace-ACL-Name, which Aruba and Cisco WLCs take in
 * CoA). A VLAN (RFC 3580 Tunnel-* attributes) is left out: the client keeps its address from the old
 * VLAN, so NASes either refuse the change or need the session restarted; a Disconnect does that.
 */
export const COA_ATTRIBUTES = [
  "Session-Timeout",
  "Idle-Timeout",
  "Filter-Id",
  "WISPr-Bandwidth-Max-Up",
  "WISPr-Bandwidth-Max-Down",
  "ChilliSpot-Bandwidth-Max-Up",
  "ChilliSpot-Bandwidth-Max-Down",
  "Mikrotik-Rate-Limit",
  "Airespace-Data-Bandwidth-Average-Contract",
  "Airespace-Data-Bandwidth-Average-Contract-Upstream",
  "Aruba-User-Role",
  "Airespace-ACL-Name",
] as const;

export const isCoaAttribute = (name: string) =>
  COA_ATTRIBUTES.some((a) => a.toLowerCase() === name.toLowerCase());

/**
 * Spaces requests to each NAS at its rate. One per process, shared by all jobs, so two batches to the
 * same NAS do not add up. Requests to a NAS take turns: each goes 1/rate after the previous one
 * actually went, so a stalled event loop delays the ones after it instead of letting a burst
 * catch up (slots booked ahead on the clock would all fire at once after a stall).
 */
export class Pacer {
  private readonly queues = new Map<string, { tail: Promise<void>; last: number }>();

  wait(nas: string, perSecond: number): Promise<void> {
    const queue = this.queues.get(nas) ?? { tail: Promise.resolve(), last: 0 };
    const turn = queue.tail.then(async () => {
      const delay = queue.last + 1000 / perSecond - Date.now();
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      queue.last = Date.now();
    });
    queue.tail = turn;
    this.queues.set(nas, queue);
    // A NAS with nothing waiting is forgotten once its interval has passed.
    void turn.then(() =>
      setTimeout(() => {
        if (this.queues.get(nas)?.tail === turn) this.queues.delete(nas);
      }, 1000 / perSecond).unref(),
    );
    return turn;
  }
}

// The durable jobs of the sessions area. A disconnect is queued in the same transaction as the
// change that calls for it (a user disabled or deleted, a voucher disabled), so a crash or restart
// between the change and the Disconnect-Request loses nothing: the worker sends it when it runs.
import type { Kysely } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { JobQueue } from "../jobs/queue.ts";

/** Disconnects one session, or every open session of some usernames (found when the job runs). */
export const DISCONNECT_JOB = "sessions.disconnect";
/** Pushes a live user's changed reply attributes to their open sessions (CoA-Request). */
export const COA_JOB = "sessions.coa";
/** Recurring: closes stale sessions, disconnects those of expired users. */
export const SWEEP_JOB = "sessions.sweep";

export interface DisconnectPayload {
  session_id?: number;
  /** A voucher's sessions may carry its code as typed: every spelling to look for. */
  usernames?: string[];
  /** A device's sessions, by its MAC (lower-case, colon-separated): whatever username they carry. */
  client_macs?: string[];
  reason: string;
}

export async function queueDisconnect(
  db: Kysely<Schema>,
  dialect: DialectName,
  accountId: number,
  payload: DisconnectPayload,
): Promise<void> {
  await new JobQueue(db, dialect).enqueue(db, [{ kind: DISCONNECT_JOB, accountId, payload }]);
}

/**
 * The reply attributes a gateway applies to a live session when a CoA-Request carries them (RFC 5176
 * section 3.1): the session's time limits and bandwidth, in the forms CoovaChilli, MikroTik and
 * WISPr gateways read. A change of one of these on a user (radreply) is pushed to their open sessions.
 */
export const COA_ATTRIBUTES = [
  "Session-Timeout",
  "Idle-Timeout",
  "WISPr-Bandwidth-Max-Up",
  "WISPr-Bandwidth-Max-Down",
  "ChilliSpot-Bandwidth-Max-Up",
  "ChilliSpot-Bandwidth-Max-Down",
  "Mikrotik-Rate-Limit",
] as const;

export const isCoaAttribute = (name: string) =>
  COA_ATTRIBUTES.some((a) => a.toLowerCase() === name.toLowerCase());

export async function queueCoa(
  db: Kysely<Schema>,
  dialect: DialectName,
  accountId: number,
  usernames: string[],
): Promise<void> {
  await new JobQueue(db, dialect).enqueue(db, [{ kind: COA_JOB, accountId, payload: { usernames } }]);
}

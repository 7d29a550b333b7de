// The durable jobs of the sessions area. A disconnect is queued in the same transaction as the
// change that calls for it (a user disabled or deleted, a voucher disabled), so a crash or restart
// between the change and the Disconnect-Request loses nothing: the worker sends it when it runs.
import type { Kysely } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { JobQueue } from "../jobs/queue.ts";

/** Disconnects one session, or every open session of some usernames (found when the job runs). */
export const DISCONNECT_JOB = "sessions.disconnect";
/** Pushes what a login would get now to open sessions (CoA-Request): see reauthorize.ts. */
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

export { COA_ATTRIBUTES, isCoaAttribute } from "./reauthorize.ts";

// The worker's session jobs: disconnects queued by changes (a user disabled or deleted, a voucher
// disabled, a quota used up, an Expiration passed), and the recurring sweep (stale sessions closed
// with Lost-Carrier, expired users' sessions disconnected). See src/core/sessions/.
import type { Core } from "../core/index.ts";
import { COA_JOB, DISCONNECT_JOB, type DisconnectPayload, SWEEP_JOB } from "../core/sessions/jobs.ts";
import { queueReauthorization, type ReauthorizationPayload } from "../core/sessions/reauthorize.ts";
import { RetryLater, type Worker } from "./worker.ts";

/** How often the sweep runs. */
export const SWEEP_INTERVAL_MS = 30_000;

/**
 * Session jobs run in slots of their own: a disconnect to a NAS that never answers waits for its
 * retries (6 s by default), and must not hold up webhook deliveries or report files.
 */
export const SESSIONS_POOL = "sessions";

export function registerSessionJobs(worker: Worker, core: Core, sweepIntervalMs = SWEEP_INTERVAL_MS): void {
  worker.pool(SESSIONS_POOL, { concurrency: 8 });
  worker.handle(
    DISCONNECT_JOB,
    async (job) => {
      const payload = JSON.parse(job.payload) as DisconnectPayload;
      const accountId = job.account_id!;
      if (payload.session_id !== undefined) {
        return core.sessions.disconnectQuietly(accountId, payload.session_id, payload.reason);
      }
      const done = [
        ...(await core.sessions.disconnectUsernames(accountId, payload.usernames ?? [], payload.reason)),
        ...(await core.sessions.disconnectMacs(accountId, payload.client_macs ?? [], payload.reason)),
      ];
      return done.length === 0 ? "no open sessions" : done.join("; ");
    },
    SESSIONS_POOL,
  );

  worker.handle(
    COA_JOB,
    async (job) => {
      const parsed = JSON.parse(job.payload) as ReauthorizationPayload & { usernames?: string[] };
      // Jobs queued before issue 25 name their users only.
      const payload: ReauthorizationPayload = parsed.target
        ? parsed
        : { target: { usernames: parsed.usernames ?? [] }, reason: "reply items changed" };
      const accountId = job.account_id!;
      const { summary, next } = await core.sessions.reauthorize(accountId, payload);
      if (next === undefined) return summary;
      // The next chunk is a job of its own: progress is recorded, and other jobs get their turn.
      const { db, dialect } = core.database;
      await queueReauthorization(db, dialect, accountId, payload.target, payload.reason, next);
      return `${summary}; sessions after ${next} queued`;
    },
    SESSIONS_POOL,
  );

  worker.handle(
    SWEEP_JOB,
    async (job) => {
      if (await core.sessions.isDuplicateSweep(job.id)) return "an older sweep runs";
      try {
        await core.sessions.sweep();
      } catch (error) {
        throw new RetryLater(
          `sweep failed: ${(error as Error)?.message ?? error}`,
          Date.now() + sweepIntervalMs,
        );
      }
      // Never done: it runs again after the interval, from whichever worker claims it.
      throw new RetryLater("next sweep", Date.now() + sweepIntervalMs);
    },
    SESSIONS_POOL,
  );

  core.sessions.ensureSweep().catch(() => {});
}

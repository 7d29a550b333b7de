// The worker's partition job (PostgreSQL): a recurring job that makes the monthly partitions of
// radpostauth and radacct ahead of time (src/db/partitions.ts), so inserts never land in the
// DEFAULT partition. Start-up makes them too; this keeps a server that runs for months covered.
import type { Core } from "../core/index.ts";
import { ensurePartitions } from "../db/partitions.ts";
import { RetryLater, type Worker } from "./worker.ts";

export const PARTITIONS_JOB = "db.partitions";

/** How often it runs: partitions are made 3 months ahead, so a day missed costs nothing. */
export const PARTITIONS_INTERVAL_MS = 6 * 3_600_000;

/** After a failure (a lock not granted within its timeout), sooner. */
const RETRY_MS = 10 * 60_000;

export function registerPartitionJobs(worker: Worker, core: Core, intervalMs = PARTITIONS_INTERVAL_MS): void {
  if (core.database.dialect !== "postgres") return;
  worker.handle(PARTITIONS_JOB, async (job) => {
    if (await core.jobs.isDuplicate(PARTITIONS_JOB, job.id)) return "an older partition job runs";
    let made: string[];
    try {
      made = await ensurePartitions(core.database.db, new Date());
    } catch (error) {
      throw new RetryLater(`partitions: ${(error as Error)?.message ?? error}`, Date.now() + RETRY_MS);
    }
    // Never done: it runs again after the interval, from whichever worker claims it.
    throw new RetryLater(
      made.length > 0 ? `made ${made.join(", ")}` : "partitions ahead exist",
      Date.now() + intervalMs,
    );
  });
  core.jobs.ensureRecurring(PARTITIONS_JOB).catch(() => {});
}

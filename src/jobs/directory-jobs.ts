// The worker's directory sync job: recurring, one per installation; every SYNC_CHECK_MS it syncs
// the enabled directories whose sync_interval has passed (core/directories/service.ts syncDue),
// logging what each changed.
import { DIRECTORY_SYNC_JOB, SYNC_CHECK_MS } from "../core/directories/rules.ts";
import type { Core } from "../core/index.ts";
import { RetryLater, type Worker } from "./worker.ts";

/** Syncs have a slot of their own: a long directory never holds up deliveries or report files. */
export const DIRECTORY_POOL = "directories";

export function registerDirectoryJobs(worker: Worker, core: Core, checkMs = SYNC_CHECK_MS): void {
  worker.pool(DIRECTORY_POOL, { concurrency: 1 });
  worker.handle(
    DIRECTORY_SYNC_JOB,
    async (job) => {
      if (await core.jobs.isDuplicate(DIRECTORY_SYNC_JOB, job.id)) return "an older directory sync job runs";
      try {
        for (const report of await core.directories.syncDue()) {
          const log = report.ok ? worker.log.info?.bind(worker.log) : worker.log.warn.bind(worker.log);
          log?.(
            { directory: report.directory, seen: report.seen, counts: report.counts, error: report.error },
            `directory sync: ${report.directory} ${report.ok ? "done" : "failed"}`,
          );
        }
      } catch (error) {
        worker.log.warn({ err: error }, "directory sync: could not run");
      }
      // Never done: it looks again after the interval, from whichever worker claims it.
      throw new RetryLater("next directory sync check", Date.now() + checkMs);
    },
    DIRECTORY_POOL,
  );
  core.jobs.ensureRecurring(DIRECTORY_SYNC_JOB).catch(() => {});
}

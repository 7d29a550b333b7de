// The report jobs: building a task's CSV file, and deleting results once they expire. They run in
// a pool of their own, so report files never take the slots webhook deliveries run in; and no
// account has more than its share of files built at once (REPORT_RUNNING_PER_ACCOUNT).
import type { Core } from "../core/index.ts";
import { REPORT_EXPIRE_JOB, REPORT_JOB } from "../core/reports/service.ts";
import { RetryLater, type Worker } from "./worker.ts";

export const REPORT_POOL = "reports";
/** Report files one worker builds at once: each reads the database flat out while it runs. */
export const REPORT_SLOTS = 4;

export function registerReportJobs(worker: Worker, core: Core): void {
  worker.pool(REPORT_POOL, { concurrency: REPORT_SLOTS, perAccount: core.reports.limits.runningPerAccount });
  worker.handle(
    REPORT_JOB,
    (job, context) => core.reports.runTask(job, (value) => context.progress(value)),
    REPORT_POOL,
  );
  worker.handle(
    REPORT_EXPIRE_JOB,
    async (job) => {
      const { task } = JSON.parse(job.payload) as { task: string };
      const outcome = await core.reports.expire(job.account_id ?? 0, task);
      // The task finished later than planned: its result is kept 24 hours from then.
      if ("retryAt" in outcome) throw new RetryLater(`task ${task} expires later`, outcome.retryAt);
      return outcome;
    },
    REPORT_POOL,
  );
}

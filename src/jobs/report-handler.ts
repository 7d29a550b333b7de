// The report jobs: building a task's CSV file, and deleting results once they expire.
import type { Core } from "../core/index.ts";
import { REPORT_EXPIRE_JOB, REPORT_JOB } from "../core/reports/service.ts";
import { RetryLater, type Worker } from "./worker.ts";

export function registerReportJobs(worker: Worker, core: Core): void {
  worker.handle(REPORT_JOB, (job, context) => core.reports.runTask(job, (value) => context.progress(value)));
  worker.handle(REPORT_EXPIRE_JOB, async (job) => {
    const { task } = JSON.parse(job.payload) as { task: string };
    const outcome = await core.reports.expire(task);
    // The task finished later than planned: its result is kept 24 hours from then.
    if ("retryAt" in outcome) throw new RetryLater(`task ${task} expires later`, outcome.retryAt);
    return outcome;
  });
}

// Which handler runs each kind of job. Every process that runs a worker (the server by default,
// `wisp worker`) registers the same set.
import type { Core } from "../core/index.ts";
import { registerDirectoryJobs } from "./directory-jobs.ts";
import { registerGuestJobs } from "./guest-jobs.ts";
import { registerPartitionJobs } from "./partition-jobs.ts";
import { registerReportJobs } from "./report-handler.ts";
import { registerRetentionJobs } from "./retention-jobs.ts";
import { registerSessionJobs } from "./session-jobs.ts";
import { registerWebhookJobs } from "./webhook-jobs.ts";
import type { Worker } from "./worker.ts";

export function registerJobHandlers(worker: Worker, core: Core): void {
  void core;
  void worker;
  // (job handlers of further areas are registered below, one line each)
  registerWebhookJobs(worker, core);
  registerReportJobs(worker, core);
  registerSessionJobs(worker, core);
  registerPartitionJobs(worker, core);
  registerRetentionJobs(worker, core);
  registerGuestJobs(worker, core);
  registerDirectoryJobs(worker, core);
}

// The worker's retention job: recurring, one per installation, pruning every table (see
// src/core/retention/service.ts) and logging the rows pruned per table as it goes.
import type { Core } from "../core/index.ts";
import { RETENTION_JOB, type TableOutcome } from "../core/retention/service.ts";
import { RetryLater, type Worker } from "./worker.ts";

/** How often retention runs: rows are kept for days, an hour late is nothing. */
export const RETENTION_INTERVAL_MS = 3_600_000;
/** A run that failed (a busy database) is tried again this soon. */
const RETRY_MS = 60_000;
/** Progress lines while a table is being pruned, at most this often. */
const PROGRESS_LOG_MS = 5_000;

/** Retention has a slot of its own: a long prune never holds up deliveries or report files. */
export const RETENTION_POOL = "retention";

export function registerRetentionJobs(worker: Worker, core: Core, intervalMs = RETENTION_INTERVAL_MS): void {
  worker.pool(RETENTION_POOL, { concurrency: 1 });
  worker.handle(
    RETENTION_JOB,
    async (job, context) => {
      if (await core.retention.isDuplicateJob(job.id)) return "an older retention job runs";
      let logged = Date.now();
      let outcomes: TableOutcome[];
      try {
        outcomes = await core.retention.prune({
          onProgress: async (p) => {
            if (p.done || Date.now() - logged < PROGRESS_LOG_MS) return;
            logged = Date.now();
            worker.log.info?.({ table: p.table, rows: p.rows, batches: p.batches }, "retention: pruning");
            await context.progress({ table: p.table, rows: p.rows });
          },
        });
      } catch (error) {
        const message = (error as Error)?.message ?? String(error);
        worker.log.warn({ err: error }, "retention: prune failed, trying again in a minute");
        throw new RetryLater(`retention failed: ${message}`, Date.now() + RETRY_MS);
      }
      for (const o of outcomes) {
        if (o.rows === 0 && o.partitions.length === 0) continue;
        worker.log.info?.(
          { table: o.table, rows: o.rows, batches: o.batches, partitions: o.partitions, days: o.days },
          `retention: pruned ${o.rows} rows of ${o.table}`,
        );
      }
      // Never done: it runs again after the interval, from whichever worker claims it.
      throw new RetryLater("next retention run", Date.now() + intervalMs);
    },
    RETENTION_POOL,
  );
  core.retention.ensureJob().catch(() => {});
}

// The worker's webhook jobs: the dispatcher (one recurring job that fans new events out to
// deliveries) and deliver jobs, each making sure one endpoint's due deliveries are sent. See
// src/core/webhooks/delivery.ts.
import type { Core } from "../core/index.ts";
import { DELIVER_JOB, DISPATCH_BATCH, DISPATCH_JOB, type RunResult } from "../core/webhooks/delivery.ts";
import { RetryLater, type Worker } from "./worker.ts";

/** Pause between dispatch passes when the outbox is drained. */
const DISPATCH_INTERVAL_MS = 100;
/** One dispatch run stops after this long, so its lease and other jobs get their turn. */
const DISPATCH_RUN_MS = 2_000;

export function registerWebhookJobs(worker: Worker, core: Core): void {
  const webhooks = core.webhooks;

  worker.handle(DISPATCH_JOB, async (job, context) => {
    try {
      if (await webhooks.isDuplicateDispatcher(job.id)) return "an older dispatcher runs";
      const started = Date.now();
      let events = 0;
      for (;;) {
        const pass = await webhooks.engine.dispatchOnce();
        events += pass.events;
        if (pass.deliveries > 0) worker.poke();
        if (pass.events < DISPATCH_BATCH || Date.now() - started > DISPATCH_RUN_MS) break;
        await context.progress({ events });
      }
      // The last endpoint was deleted: stop until one is created (which starts a dispatcher again).
      if (!(await webhooks.hasEndpoints())) return "no webhook endpoints";
    } catch (error) {
      // Never fail for good: a failed dispatcher would stop every webhook.
      throw new RetryLater(`dispatch failed: ${(error as Error)?.message ?? error}`, Date.now() + 1000);
    }
    throw new RetryLater("waiting for events", Date.now() + DISPATCH_INTERVAL_MS);
  });

  worker.handle(DELIVER_JOB, async (job) => {
    const { endpoint } = JSON.parse(job.payload) as { endpoint: number };
    const token = `${worker.id}/${job.id}`;
    let run: RunResult;
    try {
      run = await webhooks.engine.runEndpoint(job.account_id!, endpoint, job.id, token);
    } catch (error) {
      // The delivery's state is in its row; a failed job could leave the endpoint without a driver.
      throw new RetryLater(`delivery job failed: ${(error as Error)?.message ?? error}`, Date.now() + 5000);
    }
    if (run.retryAt !== undefined) throw new RetryLater(run.result, run.retryAt);
    return run.result;
  });

  // Endpoints may exist from before this process started: make sure their dispatcher runs.
  webhooks.ensureDispatcher().catch(() => {});
}

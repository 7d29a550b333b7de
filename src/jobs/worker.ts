// Runs jobs from the queue: in the server process by default, or alone (`wisp worker`). Handlers
// are registered per kind; a handler that throws RetryLater is queued again for that time, any
// other error fails the job. Long jobs keep their lease alive while they run.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Job, JobQueue } from "../core/jobs/queue.ts";

export class RetryLater extends Error {
  constructor(
    message: string,
    /** Epoch milliseconds. */
    readonly runAt: number,
  ) {
    super(message);
  }
}

export interface JobContext {
  /** Reports progress (kept on the job, readable while it runs) and renews the lease. */
  progress(value: unknown): Promise<void>;
}

export type JobHandler = (job: Job, context: JobContext) => Promise<unknown>;

export interface WorkerLog {
  error(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface WorkerOptions {
  concurrency?: number;
  pollMs?: number;
  leaseMs?: number;
  log: WorkerLog;
}

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private polling = false;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly leaseMs: number;

  constructor(
    private readonly queue: JobQueue,
    private readonly options: WorkerOptions,
  ) {
    this.concurrency = options.concurrency ?? 8;
    this.pollMs = options.pollMs ?? 500;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  handle(kind: string, handler: JobHandler): this {
    this.handlers.set(kind, handler);
    return this;
  }

  start(): void {
    this.stopped = false;
    this.poke();
  }

  /** Looks for work now (after an enqueue in this process) instead of at the next poll. */
  poke(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), 0);
  }

  /** Stops claiming and waits for the jobs in hand. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.running]);
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    try {
      const free = this.concurrency - this.running.size;
      const jobs =
        free > 0 ? await this.queue.claim(this.id, [...this.handlers.keys()], free, this.leaseMs) : [];
      for (const job of jobs) {
        const run = this.run(job).finally(() => {
          this.running.delete(run);
          this.poke();
        });
        this.running.add(run);
      }
    } catch (error) {
      this.options.log.error({ err: error }, "job queue poll failed");
    } finally {
      this.polling = false;
      if (!this.stopped) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.poll(), this.pollMs);
      }
    }
  }

  private async run(job: Job): Promise<void> {
    const handler = this.handlers.get(job.kind);
    if (!handler) return;
    const renew = setInterval(
      () => void this.queue.renew(job.id, this.id, this.leaseMs).catch(() => {}),
      this.leaseMs / 3,
    );
    const context: JobContext = {
      progress: async (value) => {
        await this.queue.renew(job.id, this.id, this.leaseMs, value);
      },
    };
    try {
      const result = await handler(job, context);
      await this.queue.complete(job.id, this.id, result);
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      try {
        if (error instanceof RetryLater) await this.queue.retry(job.id, this.id, message, error.runAt);
        else {
          this.options.log.warn({ job: job.id, kind: job.kind, err: error }, "job failed");
          await this.queue.fail(job.id, this.id, message);
        }
      } catch (storeError) {
        this.options.log.error({ err: storeError, job: job.id }, "could not record the job's outcome");
      }
    } finally {
      clearInterval(renew);
    }
  }
}

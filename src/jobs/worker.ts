// Runs jobs from the queue: in the server process by default, or alone (`wisp worker`). Handlers
// are registered per kind; a handler that throws RetryLater is queued again for that time, any
// other error fails the job. Long jobs keep their lease alive while they run. Kinds run in pools,
// each with slots of its own: jobs of one pool (report files) never take another's (webhooks).

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { runAs, WORKER } from "../core/audit/context.ts";
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
  info?(object: object, message: string): void;
}

/** A pool's slots: how many of its jobs run at once, and how many of one account's. */
export interface PoolOptions {
  concurrency: number;
  /** At most this many of the pool's jobs of one account run at once, over every worker. */
  perAccount?: number | undefined;
}

interface Pool extends PoolOptions {
  kinds: string[];
  running: Set<Promise<void>>;
}

/** The pool of kinds registered without one. */
export const DEFAULT_POOL = "default";

export interface WorkerOptions {
  /** Slots of the default pool. */
  concurrency?: number;
  pollMs?: number;
  leaseMs?: number;
  log: WorkerLog;
}

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly pools = new Map<string, Pool>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private polling = false;
  private readonly pollMs: number;
  private readonly leaseMs: number;

  constructor(
    private readonly queue: JobQueue,
    private readonly options: WorkerOptions,
  ) {
    this.pool(DEFAULT_POOL, { concurrency: options.concurrency ?? 8 });
    this.pollMs = options.pollMs ?? 500;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  /** The log handlers write progress to. */
  get log(): WorkerLog {
    return this.options.log;
  }

  /** Creates a pool (or changes its slots); its kinds are given to handle(). */
  pool(name: string, options: PoolOptions): this {
    const existing = this.pools.get(name);
    if (existing) Object.assign(existing, options);
    else this.pools.set(name, { ...options, kinds: [], running: new Set() });
    return this;
  }

  handle(kind: string, handler: JobHandler, poolName = DEFAULT_POOL): this {
    const pool = this.pools.get(poolName);
    if (!pool) throw new Error(`no worker pool "${poolName}"`);
    for (const other of this.pools.values()) other.kinds = other.kinds.filter((k) => k !== kind);
    pool.kinds.push(kind);
    this.handlers.set(kind, handler);
    return this;
  }

  /** The kinds this worker runs (the audit walk checks each is accounted for). */
  kinds(): string[] {
    return [...this.handlers.keys()];
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
    await Promise.allSettled([...this.pools.values()].flatMap((pool) => [...pool.running]));
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    try {
      for (const pool of this.pools.values()) {
        const free = pool.concurrency - pool.running.size;
        if (free <= 0 || pool.kinds.length === 0 || this.stopped) continue;
        try {
          const jobs = await this.queue.claim(this.id, pool.kinds, free, this.leaseMs, pool.perAccount);
          for (const job of jobs) {
            const run = this.run(job).finally(() => {
              pool.running.delete(run);
              this.poke();
            });
            pool.running.add(run);
          }
        } catch (error) {
          this.options.log.error({ err: error }, "job queue poll failed");
        }
      }
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
    let outcome: () => Promise<void>;
    try {
      // A job's changes (a disconnect, a report) are the worker's in the audit log.
      const result = await runAs(WORKER, () => handler(job, context));
      outcome = () => this.queue.complete(job.id, this.id, result);
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      if (error instanceof RetryLater) {
        outcome = () => this.queue.retry(job.id, this.id, message, error.runAt);
      } else {
        this.options.log.warn({ job: job.id, kind: job.kind, err: error }, "job failed");
        outcome = () => this.queue.fail(job.id, this.id, message);
      }
    }
    try {
      await this.record(outcome);
    } catch (storeError) {
      this.options.log.error({ err: storeError, job: job.id }, "could not record the job's outcome");
    } finally {
      clearInterval(renew);
    }
  }

  /**
   * Writes a job's outcome, again after growing pauses while that fails (a dropped database
   * connection): unrecorded, the job would stay "running" until its lease ran out, and a
   * recurring job (the webhook dispatcher) would stall that long. Gives up when the lease would
   * have ended, or when the worker stops; the lease then hands the job on.
   */
  private async record(write: () => Promise<void>): Promise<void> {
    const until = Date.now() + this.leaseMs;
    for (let failures = 0; ; failures++) {
      try {
        return await write();
      } catch (error) {
        const pause = Math.min(2000, 50 * 2 ** failures);
        if (this.stopped || Date.now() + pause >= until) throw error;
        this.options.log.warn({ err: error }, "could not record a job's outcome yet; trying again");
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
}

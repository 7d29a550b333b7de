// Group commit: writes queued in the same turn of the event loop (every packet read from the
// sockets in that turn), or while the batch before them commits, share one transaction. The
// RADIUS server records every authentication and accounting packet; one transaction per packet
// would cap it at the database's commit rate. Each caller still awaits its own write, so nothing
// is answered before it is stored (store() lets a caller go on while the write waits). No timer
// is waited on: a 2 ms one added 2-3 ms to every login's last answer, 4% of an 802.1X client's
// logins/s when logins follow each other (bench/eap.ts, BENCH_EAP_PER_PROCESS).
//
// A database whose lock another process holds (SQLite) never makes a write wait in line or get
// lost: the batch fails at once (withoutWaiting), stays at the head of the queue, and is tried
// again after a growing pause until it is stored.
import type { Kysely, Transaction } from "kysely";
import { withoutWaiting } from "./database.ts";
import type { Schema } from "./schema.ts";
import { backoffMs, DatabaseBusyError, isDatabaseBusy } from "./sqlite-writer.ts";

type Work<R> = (trx: Transaction<Schema>) => Promise<R>;

interface Pending {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** store(): the caller was already told to go on; a failure now is reported, not thrown at it. */
  early: boolean;
  released: boolean;
}

/** While the database is busy, batches are tried again after pauses growing from 5 ms to this. */
const MAX_RETRY_PAUSE_MS = 250;

export interface BatcherOptions {
  /** How long a write may wait for others to join its batch; 0 (default): to the next turn. */
  maxDelayMs?: number;
  maxBatch?: number;
  /** Writes held in memory at most while the database is busy; past it new ones are refused. */
  maxQueued?: number;
  /** A write whose caller already went on (store()) failed for good. */
  onLateFailure?: (error: unknown) => void;
}

export class TransactionBatcher {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** A flush is due at the next turn of the event loop. */
  private immediate: NodeJS.Immediate | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** Batches in flight (taken from `pending`, not yet settled). */
  private active = 0;
  private idle: (() => void)[] = [];
  /** Busy attempts in a row, and when the next may start (epoch ms); 0 when the last one stored. */
  private failures = 0;
  private retryAt = 0;
  private readonly writer: Kysely<Schema>;
  private readonly maxDelayMs: number;
  private readonly maxBatch: number;
  private readonly maxQueued: number;
  private readonly onLateFailure: (error: unknown) => void;

  constructor(db: Kysely<Schema>, options: BatcherOptions = {}) {
    this.writer = withoutWaiting(db);
    this.maxDelayMs = options.maxDelayMs ?? 0;
    this.maxBatch = options.maxBatch ?? 500;
    this.maxQueued = options.maxQueued ?? 100_000;
    this.onLateFailure =
      options.onLateFailure ??
      ((error) =>
        process.emitWarning(`a queued database write failed: ${(error as Error)?.message ?? error}`));
  }

  /** Runs `work` inside a transaction shared with other writes queued at about the same time. */
  run<R>(work: Work<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.enqueue({
        work,
        resolve: resolve as (value: unknown) => void,
        reject,
        early: false,
        released: false,
      });
    });
  }

  /**
   * The same, for a record the caller need not wait for when the database is busy: resolves once
   * stored, or as soon as the database turns out busy (the write then stays queued and is retried
   * until stored; drain() waits for it). Rejects when the write itself fails.
   */
  store(work: Work<unknown>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const item: Pending = { work, resolve: () => resolve(), reject, early: true, released: false };
      this.enqueue(item);
      if (this.failures > 0) this.release(item);
    });
  }

  /** Writes everything queued; resolves when it is committed. */
  drain(): Promise<void> {
    if (this.pending.length === 0 && this.active === 0) return this.flushing;
    return new Promise<void>((resolve) => {
      this.idle.push(resolve);
      this.schedule(0);
    });
  }

  private enqueue(item: Pending): void {
    if (this.pending.length >= this.maxQueued) {
      item.reject(new DatabaseBusyError());
      return;
    }
    this.pending.push(item);
    if (this.pending.length >= this.maxBatch) this.schedule(0);
    else this.schedule(this.maxDelayMs);
  }

  private schedule(delayMs: number): void {
    const wait = Math.max(delayMs, this.retryAt - Date.now());
    // A flush is already due: at the next turn, or later and not asked sooner.
    if (this.immediate || (this.timer && wait > 0)) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const fire = () => {
      this.timer = undefined;
      this.immediate = undefined;
      // One batch at a time: the next waits for the previous commit.
      this.flushing = this.flushing.then(() => this.flush());
    };
    if (wait > 0) this.timer = setTimeout(fire, wait);
    else this.immediate = setImmediate(fire);
  }

  private async flush(): Promise<void> {
    if (this.pending.length > 0 && Date.now() < this.retryAt) return this.schedule(0);
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return this.wake();
    if (this.pending.length > 0) this.schedule(0);
    this.active++;
    try {
      await this.write(batch);
    } finally {
      this.active--;
      this.wake();
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      const results = await this.writer.transaction().execute(async (trx) => {
        const out: unknown[] = [];
        for (const item of batch) out.push(await item.work(trx));
        return out;
      });
      this.stored();
      for (const [i, item] of batch.entries()) item.resolve(results[i]);
    } catch (error) {
      if (isDatabaseBusy(error)) return this.hold(batch);
      // One bad write must not sink the others: replay each in a transaction of its own.
      for (const [i, item] of batch.entries()) {
        try {
          item.resolve(await this.writer.transaction().execute((trx) => item.work(trx)));
          this.stored();
        } catch (error) {
          if (isDatabaseBusy(error)) return this.hold(batch.slice(i));
          if (item.released) this.onLateFailure(error);
          else item.reject(error);
        }
      }
    }
  }

  private stored(): void {
    this.failures = 0;
    this.retryAt = 0;
  }

  /** Busy: the writes go back to the head of the queue, to be tried again after a pause. */
  private hold(items: Pending[]): void {
    this.pending.unshift(...items);
    for (const item of items) this.release(item);
    this.retryAt = Date.now() + backoffMs(this.failures++, 5, MAX_RETRY_PAUSE_MS);
    this.schedule(0);
  }

  private release(item: Pending): void {
    if (!item.early || item.released) return;
    item.released = true;
    item.resolve(undefined);
  }

  private wake(): void {
    if (this.pending.length > 0 || this.active > 0) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}

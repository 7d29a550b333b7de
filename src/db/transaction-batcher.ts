// Group commit: writes that arrive within a few milliseconds of each other share one transaction.
// The RADIUS server records every authentication and accounting packet; one transaction per
// packet would cap it at the database's commit rate. Each caller still awaits its own write, so
// nothing is answered before it is stored.
import type { Kysely, Transaction } from "kysely";
import type { Schema } from "./schema.ts";

type Work<R> = (trx: Transaction<Schema>) => Promise<R>;

interface Pending {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class TransactionBatcher {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly maxDelayMs = 2,
    private readonly maxBatch = 500,
  ) {}

  /** Runs `work` inside a transaction shared with other writes queued at about the same time. */
  run<R>(work: Work<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.length >= this.maxBatch) this.schedule(0);
      else this.schedule(this.maxDelayMs);
    });
  }

  /** Writes everything queued; resolves when it is committed. */
  async drain(): Promise<void> {
    this.schedule(0);
    await this.flushing;
    if (this.pending.length > 0) await this.drain();
  }

  private schedule(delayMs: number): void {
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // One batch at a time: the next waits for the previous commit.
      this.flushing = this.flushing.then(() => this.flush());
    }, delayMs);
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    if (this.pending.length > 0) this.schedule(0);
    try {
      const results = await this.db.transaction().execute(async (trx) => {
        const out: unknown[] = [];
        for (const item of batch) out.push(await item.work(trx));
        return out;
      });
      for (const [i, item] of batch.entries()) item.resolve(results[i]);
    } catch {
      // One bad write must not sink the others: replay each in a transaction of its own.
      for (const item of batch) {
        try {
          item.resolve(await this.db.transaction().execute((trx) => item.work(trx)));
        } catch (error) {
          item.reject(error);
        }
      }
    }
  }
}

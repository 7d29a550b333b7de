// How much password work (scrypt: 128 MiB and a few hundred milliseconds each) one process does at
// once. At most `concurrency` pieces run; up to `queueLimit` more wait, and one client (the door
// names it: an address group) has at most `perClient` running or waiting. Anything past that is
// refused at once with a 429 (TooManyRequestsError, with a Retry-After estimate), so a burst of
// logins costs at most concurrency x 128 MiB, however many arrive. A free slot goes to the waiting
// client with the fewest pieces running (the earliest of them on a tie), so one client's burst does
// not stand between another client and the next free slot.
import { TooManyRequestsError } from "../shared/errors.ts";

export interface PasswordWorkLimits {
  /** Pieces of work running at once (each holds scrypt's 128 MiB while it runs). */
  concurrency: number;
  /** Pieces waiting for a slot, from all clients together. */
  queueLimit: number;
  /** Pieces one client may have running or waiting. */
  perClient: number;
}

/**
 * Two at once: 256 MiB, both cores of a small machine. A client may have 10 in progress (a burst
 * of one email's whole failure limit is still checked); 16 may wait, a few seconds' work.
 */
export const PASSWORD_WORK_LIMITS: PasswordWorkLimits = { concurrency: 2, queueLimit: 16, perClient: 10 };

interface Waiter {
  client: string;
  start: () => void;
}

export class PasswordWork {
  private running = 0;
  /** Waiting pieces in arrival order. */
  private readonly waiting: Waiter[] = [];
  /** Per client: pieces running, and pieces running or waiting. */
  private readonly runningOf = new Map<string, number>();
  private readonly inProgressOf = new Map<string, number>();
  /** A moving average of how long a piece runs, for Retry-After. */
  private averageMs = 500;

  constructor(private readonly limits: PasswordWorkLimits = PASSWORD_WORK_LIMITS) {}

  /** Runs `work` when a slot is free; refuses at once (429) when the queue or the client is full. */
  async run<T>(client: string, work: () => Promise<T>): Promise<T> {
    const { concurrency, queueLimit, perClient } = this.limits;
    const inProgress = this.inProgressOf.get(client) ?? 0;
    const mustWait = this.running >= concurrency;
    if (inProgress >= perClient || (mustWait && this.waiting.length >= queueLimit)) throw this.busy();
    this.inProgressOf.set(client, inProgress + 1);
    try {
      if (mustWait) await new Promise<void>((start) => this.waiting.push({ client, start }));
      else {
        this.running++;
        this.add(this.runningOf, client, 1);
      }
      const started = performance.now();
      try {
        return await work();
      } finally {
        this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started);
        this.add(this.runningOf, client, -1);
        this.handOn();
      }
    } finally {
      this.add(this.inProgressOf, client, -1);
    }
  }

  /** Gives the slot just freed to the waiting client with the fewest pieces running, or frees it. */
  private handOn(): void {
    let chosen = -1;
    let fewest = Number.POSITIVE_INFINITY;
    for (const [i, waiter] of this.waiting.entries()) {
      const running = this.runningOf.get(waiter.client) ?? 0;
      if (running < fewest) [chosen, fewest] = [i, running];
      if (running === 0) break;
    }
    if (chosen < 0) {
      this.running--;
      return;
    }
    const [next] = this.waiting.splice(chosen, 1);
    if (!next) return;
    // The slot passes on: `running` stays as it is.
    this.add(this.runningOf, next.client, 1);
    next.start();
  }

  private add(counts: Map<string, number>, client: string, delta: number): void {
    const value = (counts.get(client) ?? 0) + delta;
    if (value > 0) counts.set(client, value);
    else counts.delete(client);
  }

  private busy(): TooManyRequestsError {
    const rounds = this.waiting.length / this.limits.concurrency + 1;
    const seconds = Math.max(1, Math.ceil((rounds * this.averageMs) / 1000));
    return new TooManyRequestsError(
      `the server is checking many passwords at the moment; try again in ${seconds} s`,
      seconds,
    );
  }
}

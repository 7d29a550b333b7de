// Fixed-window request counters: in memory for one process, in Redis when several processes
// must share them (REDIS_URL).
import { Redis } from "ioredis";

export interface WindowCount {
  count: number;
  /** When the current window ends, epoch milliseconds. */
  resetAt: number;
}

export interface CounterStore {
  /** Adds one to the counter and returns the new count. */
  hit(name: string, windowMs: number): Promise<WindowCount>;
  /** Reads the counter without adding to it. */
  peek(name: string, windowMs: number): Promise<WindowCount>;
  /** The same, answered at once, for stores that need no I/O (memory): every request uses them. */
  hitSync?(name: string, windowMs: number): WindowCount;
  peekSync?(name: string, windowMs: number): WindowCount;
  /** Shared stores only (Redis): rejects when the store cannot be reached. */
  ping?(): Promise<void>;
  close(): Promise<void>;
}

function windowOf(windowMs: number, now = Date.now()) {
  const index = Math.floor(now / windowMs);
  return { index, resetAt: (index + 1) * windowMs };
}

export class MemoryCounterStore implements CounterStore {
  private readonly counts = new Map<string, WindowCount>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  async hit(name: string, windowMs: number): Promise<WindowCount> {
    return this.hitSync(name, windowMs);
  }

  /** Counters are kept per name; a count from an ended window starts again at 1. */
  hitSync(name: string, windowMs: number): WindowCount {
    const now = Date.now();
    const entry = this.counts.get(name);
    if (entry && entry.resetAt > now) {
      entry.count++;
      return { count: entry.count, resetAt: entry.resetAt };
    }
    const fresh = { count: 1, resetAt: windowOf(windowMs, now).resetAt };
    this.counts.set(name, fresh);
    return { count: 1, resetAt: fresh.resetAt };
  }

  async peek(name: string, windowMs: number): Promise<WindowCount> {
    return this.peekSync(name, windowMs);
  }

  peekSync(name: string, windowMs: number): WindowCount {
    const now = Date.now();
    const entry = this.counts.get(name);
    if (entry && entry.resetAt > now) return { count: entry.count, resetAt: entry.resetAt };
    return { count: 0, resetAt: windowOf(windowMs, now).resetAt };
  }

  private sweep(): void {
    const now = Date.now();
    for (const [name, entry] of this.counts) if (entry.resetAt <= now) this.counts.delete(name);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

export class RedisCounterStore implements CounterStore {
  private readonly redis: Redis;
  private readonly connected: Promise<void>;

  constructor(
    url: string,
    private readonly prefix = "wisp:rl:",
  ) {
    // No offline queue: while Redis is unreachable a command fails at once (the request goes
    // uncounted) instead of waiting through reconnect back-offs. Reconnection goes on behind.
    this.redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
    });
    // Connection errors surface per command; the default handler would print every retry.
    this.redis.on("error", () => {});
    this.connected = this.redis.connect().catch(() => {});
  }

  async hit(name: string, windowMs: number): Promise<WindowCount> {
    await this.connected;
    const { index, resetAt } = windowOf(windowMs);
    const key = `${this.prefix}${name}:${index}`;
    const results = await this.redis
      .multi()
      .incr(key)
      .pexpire(key, windowMs + 1000, "NX")
      .exec();
    const [error, count] = results?.[0] ?? [new Error("no reply from Redis")];
    if (error) throw error;
    return { count: Number(count), resetAt };
  }

  async peek(name: string, windowMs: number): Promise<WindowCount> {
    await this.connected;
    const { index, resetAt } = windowOf(windowMs);
    const count = await this.redis.get(`${this.prefix}${name}:${index}`);
    return { count: Number(count ?? 0), resetAt };
  }

  async ping(): Promise<void> {
    await this.connected;
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export function createCounterStore(redisUrl: string | undefined, prefix?: string): CounterStore {
  return redisUrl ? new RedisCounterStore(redisUrl, prefix) : new MemoryCounterStore();
}

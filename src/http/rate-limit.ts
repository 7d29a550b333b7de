// Fixed-window request counters: in memory for one process, in Redis when several processes
// must share them (REDIS_URL). A hit adds one and answers the new count in one atomic step, so a
// burst of N concurrent hits sees the counts 1..N, each once: a limit lets exactly its number
// through, however many arrive together. Windows are read from the store's clock (Date.now unless
// a test gives its own, so that no test depends on where a window of the wall clock ends).
import { createRequire } from "node:module";
import type { Redis } from "ioredis";
import { formatCidr, formatIp, networkAddress, parseIp, unmapped } from "../core/shared/ip.ts";

export interface WindowCount {
  count: number;
  /** When the current window ends, epoch milliseconds. */
  resetAt: number;
}

/** Epoch milliseconds. */
export type Clock = () => number;

export interface CounterStore {
  /** The clock the windows are measured by: `resetAt` minus now() is how long a window has left. */
  now(): number;
  /** Adds one to the counter and returns the new count, atomically. */
  hit(name: string, windowMs: number): Promise<WindowCount>;
  /** Takes back one hit of the window that ends at `resetAt` (an attempt that turned out fine). */
  release(name: string, windowMs: number, resetAt: number): Promise<void>;
  /** The same, answered at once, for stores that need no I/O (memory): every request uses them. */
  hitSync?(name: string, windowMs: number): WindowCount;
  releaseSync?(name: string, windowMs: number, resetAt: number): void;
  /** Shared stores only (Redis): rejects when the store cannot be reached. */
  ping?(): Promise<void>;
  close(): Promise<void>;
}

function windowOf(windowMs: number, now: number) {
  const index = Math.floor(now / windowMs);
  return { index, resetAt: (index + 1) * windowMs };
}

/**
 * The part of a client address that limits count against: an IPv4 address, or the /64 network of
 * an IPv6 one (one subscriber's allocation: a host choosing a new address in it is still the same
 * client). IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function addressGroup(ip: string): string {
  const parsed = parseIp(ip);
  if (!parsed) return ip;
  const address = unmapped(parsed);
  if (address.kind() === "ipv4") return formatIp(address);
  return formatCidr({ address: networkAddress({ address, prefix: 64 }), prefix: 64 });
}

export class MemoryCounterStore implements CounterStore {
  private readonly counts = new Map<string, WindowCount>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();
  readonly now: Clock;

  constructor(options: { now?: Clock } = {}) {
    this.now = options.now ?? Date.now;
  }

  async hit(name: string, windowMs: number): Promise<WindowCount> {
    return this.hitSync(name, windowMs);
  }

  /** Counters are kept per name; a count from an ended window starts again at 1. */
  hitSync(name: string, windowMs: number): WindowCount {
    const now = this.now();
    const entry = this.counts.get(name);
    if (entry && entry.resetAt > now) {
      entry.count++;
      return { count: entry.count, resetAt: entry.resetAt };
    }
    const fresh = { count: 1, resetAt: windowOf(windowMs, now).resetAt };
    this.counts.set(name, fresh);
    return { count: 1, resetAt: fresh.resetAt };
  }

  async release(name: string, windowMs: number, resetAt: number): Promise<void> {
    this.releaseSync(name, windowMs, resetAt);
  }

  releaseSync(name: string, _windowMs: number, resetAt: number): void {
    const entry = this.counts.get(name);
    if (entry && entry.resetAt === resetAt && entry.count > 0) entry.count--;
  }

  private sweep(): void {
    const now = this.now();
    for (const [name, entry] of this.counts) if (entry.resetAt <= now) this.counts.delete(name);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

/**
 * The Lua scripts the Redis store runs (EVALSHA, EVAL the first time on a connection). They use
 * only commands Redis has had since 2.6 (INCR, PEXPIRE without options, EXISTS, DECR): they work
 * on Redis 6.2 as on 7. `PEXPIRE ... NX` would be simpler and is Redis 7 only.
 */
export const REDIS_SCRIPTS = {
  /** INCR, and on the first hit of a window its expiry, in one atomic step. */
  hit: `local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`,
  /** DECR of a window that still exists (one that expired stays gone, never goes negative). */
  release: `if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0`,
} as const;

/** Where the Redis store reports that Redis fails, and that it answers again (pino's shape). */
export interface CounterLog {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

export interface RedisCounterOptions {
  /**
   * The deployment identity of the database (src/core/deployment): in every key, so that two Wisp
   * databases sharing one Redis never share a counter (their key ids both start at 1).
   */
  identity: string;
  /** Before the identity; tests set their own. */
  prefix?: string;
  log?: CounterLog;
  /** How often a failing Redis is logged at most. */
  logEveryMs?: number;
  /** The clock windows are measured by (tests give a fixed one). */
  now?: Clock;
}

interface ScriptedRedis extends Redis {
  wispHit(key: string, expireMs: number): Promise<number>;
  wispRelease(key: string): Promise<number>;
}

/**
 * Counters shared through Redis. While Redis cannot be reached (or answers errors) each process
 * counts in its own memory instead, so every limit still holds per process; the failure is logged
 * once a minute at most, and once when Redis answers again.
 */
export class RedisCounterStore implements CounterStore {
  private readonly redis: ScriptedRedis;
  private readonly connected: Promise<void>;
  private readonly keyPrefix: string;
  private readonly fallback: MemoryCounterStore;
  readonly now: Clock;
  private readonly log: CounterLog | undefined;
  private readonly logEveryMs: number;
  private failing = false;
  private lastLogged = Number.NEGATIVE_INFINITY;

  constructor(url: string, options: RedisCounterOptions) {
    this.keyPrefix = `${options.prefix ?? "wisp:rl:"}${options.identity}:`;
    this.log = options.log;
    this.logEveryMs = options.logEveryMs ?? 60_000;
    this.now = options.now ?? Date.now;
    this.fallback = new MemoryCounterStore({ now: this.now });
    // No offline queue: while Redis is unreachable a command fails at once (the request is counted
    // in memory) instead of waiting through reconnect back-offs. Reconnection goes on behind.
    // ioredis is loaded only here: a process without REDIS_URL never pays its start-up time and memory.
    const { Redis: RedisClient } = createRequire(import.meta.url)("ioredis") as typeof import("ioredis");
    const redis = new RedisClient(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
    });
    redis.defineCommand("wispHit", { lua: REDIS_SCRIPTS.hit, numberOfKeys: 1 });
    redis.defineCommand("wispRelease", { lua: REDIS_SCRIPTS.release, numberOfKeys: 1 });
    this.redis = redis as ScriptedRedis;
    // Connection errors surface per command (see failed); the default handler prints every retry.
    this.redis.on("error", () => {});
    this.connected = this.redis.connect().catch(() => {});
  }

  async hit(name: string, windowMs: number): Promise<WindowCount> {
    await this.connected;
    const { index, resetAt } = windowOf(windowMs, this.now());
    try {
      const count = await this.redis.wispHit(`${this.keyPrefix}${name}:${index}`, windowMs + 1000);
      this.answered();
      return { count: Number(count), resetAt };
    } catch (error) {
      this.failed(error);
      return this.fallback.hitSync(name, windowMs);
    }
  }

  async release(name: string, windowMs: number, resetAt: number): Promise<void> {
    await this.connected;
    const index = resetAt / windowMs - 1;
    try {
      await this.redis.wispRelease(`${this.keyPrefix}${name}:${index}`);
      this.answered();
    } catch (error) {
      this.failed(error);
      this.fallback.releaseSync(name, windowMs, resetAt);
    }
  }

  private failed(error: unknown): void {
    this.failing = true;
    const now = Date.now();
    if (now - this.lastLogged < this.logEveryMs) return;
    this.lastLogged = now;
    this.log?.warn(
      { err: error },
      "Redis fails for rate-limit counters: each process counts in its own memory until it answers " +
        `(logged at most every ${Math.round(this.logEveryMs / 1000)} s)`,
    );
  }

  private answered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.lastLogged = Number.NEGATIVE_INFINITY;
    this.log?.info({}, "Redis answers again: rate-limit counters are shared again");
  }

  async ping(): Promise<void> {
    await this.connected;
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.fallback.close();
  }
}

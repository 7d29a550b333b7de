// Typed configuration read from the environment, in one place for every door (server, CLI, worker).
import path from "node:path";
import { decodeKey } from "./core/webhooks/crypto.ts";
import { DEFAULT_RETRY_SCHEDULE_MS } from "./core/webhooks/rules.ts";

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  logLevel: string;
  /** Addresses/CIDRs of reverse proxies whose X-Forwarded-For is believed. Empty: use the socket address. */
  trustedProxies: string[];
  /** Requests per minute for keys that carry no limit of their own. */
  defaultRateLimit: number;
  /** Failed authentications per minute from one address before it gets 429s. */
  authFailureLimit: number;
  /** Milliseconds to let in-flight requests finish after SIGTERM. */
  shutdownTimeoutMs: number;
  /** Whether this process runs the background worker (webhooks, report files). */
  runWorker: boolean;
  /** UDP ports of the embedded RADIUS server; 0 turns one off. */
  radiusAuthPort: number;
  radiusAcctPort: number;
  /** Address the RADIUS ports bind to (default: HOST). */
  radiusHost: string;
  /** Wisp's address as guests and devices reach it (captive portal login URLs); no trailing slash. */
  publicUrl: string;
  /** WEBHOOK_ALLOW_PRIVATE=1: webhooks may go to private addresses and plain http:// (labs, tests). */
  webhookAllowPrivate: boolean;
  /** WEBHOOK_RETRY_SCHEDULE ("5s,5m,30m,2h,5h,10h,10h"): milliseconds before each retry. */
  webhookRetrySchedule: number[];
  /** WEBHOOK_SECRET_KEY: base64 of 32 bytes encrypting webhook secrets; unset: DATA_DIR/secret.key. */
  webhookSecretKey: string | undefined;
}

export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}`);
  return value;
}

/** PUBLIC_URL: an http(s) URL, maybe with a path; no credentials, trailing slash, query or fragment. */
function publicUrl(env: NodeJS.ProcessEnv): string {
  const raw = env.PUBLIC_URL || `http://localhost:${integer(env, "PORT", 8080, 0, 65535)}`;
  const problem =
    "PUBLIC_URL must be an http:// or https:// URL without credentials, trailing slash, query or fragment " +
    `(like https://wifi.example.com), got "${raw}"`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(problem);
  }
  const bad = !/^https?:\/\/[^/?#\s]/i.test(raw) || /[\s?#]/.test(raw) || raw.endsWith("/");
  if (bad || url.username || url.password) throw new ConfigError(problem);
  return raw;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** WEBHOOK_RETRY_SCHEDULE: comma-separated durations like 500ms, 5s, 5m, 2h (each at most 7 days). */
function retrySchedule(env: NodeJS.ProcessEnv): number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE;
  if (raw === undefined || raw.trim() === "") return [...DEFAULT_RETRY_SCHEDULE_MS];
  const steps = raw.split(",").map((part) => /^\s*(\d{1,9})(ms|s|m|h)\s*$/.exec(part));
  const delays = steps.map((m) => (m ? Number(m[1]) * DURATION_UNITS[m[2]!]! : Number.NaN));
  if (delays.length > 20 || delays.some((d) => !(d > 0 && d <= 7 * 24 * 3_600_000))) {
    throw new ConfigError(
      `WEBHOOK_RETRY_SCHEDULE must be 1-20 comma-separated durations like 5s,5m,30m,2h (units ms, s, m, h; ` +
        `each above 0 and at most 7 days), got "${raw}"`,
    );
  }
  return delays;
}

function webhookSecretKey(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.WEBHOOK_SECRET_KEY;
  if (raw === undefined || raw === "") return undefined;
  if (!decodeKey(raw)) {
    throw new ConfigError("WEBHOOK_SECRET_KEY must be base64 of 32 bytes (openssl rand -base64 32)");
  }
  return raw.trim();
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL must start with postgres:// (leave it unset for SQLite in DATA_DIR)");
  }
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl))
    throw new ConfigError("REDIS_URL must start with redis://");
  return {
    host: env.HOST || "0.0.0.0",
    port: integer(env, "PORT", 8080, 0, 65535),
    dataDir: path.resolve(env.DATA_DIR || "data"),
    databaseUrl,
    redisUrl,
    logLevel: env.LOG_LEVEL || "info",
    trustedProxies: (env.TRUSTED_PROXIES || "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    defaultRateLimit: integer(env, "RATE_LIMIT_PER_MINUTE", 100, 1, 1_000_000),
    authFailureLimit: integer(env, "AUTH_FAILURE_LIMIT_PER_MINUTE", 30, 1, 1_000_000),
    shutdownTimeoutMs: integer(env, "SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
    publicUrl: publicUrl(env),
    runWorker: env.WORKER !== "0",
    radiusAuthPort: integer(env, "RADIUS_AUTH_PORT", 1812, 0, 65535),
    radiusAcctPort: integer(env, "RADIUS_ACCT_PORT", 1813, 0, 65535),
    radiusHost: env.RADIUS_HOST || env.HOST || "0.0.0.0",
    webhookAllowPrivate: env.WEBHOOK_ALLOW_PRIVATE === "1",
    webhookRetrySchedule: retrySchedule(env),
    webhookSecretKey: webhookSecretKey(env),
  };
}

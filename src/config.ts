// Typed configuration read from the environment, in one place for every door (server, CLI, worker).
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { EapFileError, type EapFiles, loadEapFiles } from "./core/certs/files.ts";
import { isServerName } from "./core/certs/rules.ts";
import { DEFAULT_ACCOUNT_SENDS_PER_HOUR, SMTP_SECURITY, type SmtpSettings } from "./core/guests/rules.ts";
import { DEFAULT_MIN_PREFIX, type NetworkPrefixLimits } from "./core/networks/rules.ts";
import { DEFAULT_RETENTION_DAYS, MAX_RETENTION_DAYS, type RetentionDays } from "./core/retention/rules.ts";
import { parseCidr } from "./core/shared/ip.ts";
import { hasControlCharacters } from "./core/shared/text.ts";
import { decodeKey } from "./core/webhooks/crypto.ts";
import { DEFAULT_RETRY_SCHEDULE_MS } from "./core/webhooks/rules.ts";
import { openSslAddon } from "./radius/eap/native-addon.ts";
import { DEFAULT_EAP_LIMITS, DEFAULT_FRAGMENT_SIZE, type EapLimits } from "./radius/eap/types.ts";

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
  /** IDP_ALLOW_HTTP=1: identity providers' issuers and metadata may be plain http:// (labs, tests). */
  idpAllowHttp: boolean;
  /**
   * DIRECTORY_WORKER=0: directories' LDAP clients in the main thread instead of on a worker thread
   * (bench/ldap.ts, 2 cores: 5,551 against 5,163 directory logins/s, 183 against 179 µs of CPU).
   */
  directoryWorker: boolean;
  /** WISP_TEST_CLOCK_FILE: tests only; logins are decided at the Unix seconds this file holds. */
  testClockFile: string | undefined;
  /** WEBHOOK_RETRY_SCHEDULE ("5s,5m,30m,2h,5h,10h,10h"): milliseconds before each retry. */
  webhookRetrySchedule: number[];
  /** WEBHOOK_SECRET_KEY: base64 of 32 bytes encrypting webhook secrets; unset: DATA_DIR/secret.key. */
  webhookSecretKey: string | undefined;
  /** Report files of one account queued or being built at once; past it requests get 429. */
  reportTasksPerAccount: number;
  /** Report files of one account built at the same time, over every worker. */
  reportRunningPerAccount: number;
  /**
   * Captive-portal sign-in attempts per minute from one client address (a venue's guests may share
   * one public address behind its gateway) and from one device (the gateway's MAC parameter).
   */
  portalAttemptsPerAddress: number;
  portalAttemptsPerDevice: number;
  /**
   * NETWORK_MIN_PREFIX_IPV4 / _IPV6: the widest range a network may claim (networks of different
   * accounts cannot overlap, so one very wide range would lock every other account out); 0: any.
   */
  networkMinPrefix: NetworkPrefixLimits;
  /** EAP conversations kept between round trips: idle timeout, caps and byte budgets (EAP_IDLE_TIMEOUT, ...). */
  eapLimits: EapLimits;
  /** EAP_FRAGMENT_SIZE: TLS data per EAP packet (RFC 5216 section 2.1.5). */
  eapFragmentSize: number;
  /** EAP_CERT_FILE, EAP_KEY_FILE, EAP_CA_FILE, EAP_CA_KEY_FILE, read and checked; unset: Wisp's own CA. */
  eapFiles: EapFiles | undefined;
  /** EAP_SERVER_NAME: the DNS name clients match; unset: the files' first name or PUBLIC_URL's host. */
  eapServerName: string | undefined;
  /** RETENTION_*_DAYS: how long each kind of record is kept before the worker prunes it; 0 = for ever. */
  retention: RetentionDays;
  /** METRICS_TOKEN: bearer token for GET /metrics on the HTTP port; unset: no /metrics there. */
  metricsToken: string | undefined;
  /** METRICS_LISTEN (host:port): a listener of its own serving /metrics without a token. */
  metricsListen: { host: string; port: number } | undefined;
  /** SMTP_HOST, SMTP_PORT, SMTP_SECURITY, SMTP_USER, SMTP_PASSWORD, SMTP_FROM, SMTP_TIMEOUT_MS, SMTP_CA_FILE; unset host: no mail. */
  smtp: SmtpSettings | undefined;
  /** GUEST_SENDS_PER_ACCOUNT_HOUR: verification messages (email, SMS) one account may send per hour. */
  guestSendsPerAccountHour: number;
  /** CONSOLE_SESSION_IDLE_MINUTES (default 720) and CONSOLE_SESSION_MAX_HOURS (default 168), as ms. */
  consoleSessions: { idleMs: number; maxMs: number };
  /** RADSEC_*: the RadSec (RADIUS over TLS) listener; port 0 (the default): off. */
  radsec: RadsecConfig;
}

export interface RadsecConfig {
  /** RADSEC_PORT: 2083 is RadSec's registered port (RFC 6614 section 2.1); 0: no listener. */
  port: number;
  /** RADSEC_HOST (default: RADIUS_HOST). */
  host: string;
  /** RADSEC_CERT_FILE + RADSEC_KEY_FILE (PEM; the chain may follow the certificate); unset: the EAP server certificate. */
  identity: { cert: string; key: string } | undefined;
  /** RADSEC_IDLE_TIMEOUT (seconds): a connection with no packet this long is closed. */
  idleTimeoutMs: number;
  /** RADSEC_HANDSHAKE_TIMEOUT (seconds): a TLS handshake not done by then is closed. */
  handshakeTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  handshakesPerSecond: number;
  handshakesPerSecondPerAddress: number;
  /** RADSEC_RADIUS11: RADIUS/1.1 (RFC 9765) forbid, allow (default) or require. */
  radius11: "forbid" | "allow" | "require";
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

/**
 * EAP_IDLE_TIMEOUT (seconds), EAP_CONVERSATIONS_PER_NETWORK, EAP_CONVERSATIONS, and the bytes they
 * may hold, EAP_MEMORY_PER_NETWORK_MB and EAP_MEMORY_MB (MiB): bounds on EAP state; EAP_TLS_WORKERS:
 * worker threads for the conversations' TLS (0: in the main thread); EAP_TLS_ENGINE: auto, openssl
 * (Wisp's OpenSSL addon, which `npm run build` compiles) or node (node's TLS sockets).
 */
function eapLimits(env: NodeJS.ProcessEnv): EapLimits {
  const MiB = 1024 * 1024;
  const mebibytes = (name: string, fallback: number) =>
    integer(env, name, fallback / MiB, 1, 1_000_000) * MiB;
  const limits: EapLimits = {
    idleTimeoutSeconds: integer(env, "EAP_IDLE_TIMEOUT", DEFAULT_EAP_LIMITS.idleTimeoutSeconds, 1, 600),
    perNetwork: integer(env, "EAP_CONVERSATIONS_PER_NETWORK", DEFAULT_EAP_LIMITS.perNetwork, 1, 1_000_000),
    total: integer(env, "EAP_CONVERSATIONS", DEFAULT_EAP_LIMITS.total, 1, 10_000_000),
    perNetworkBytes: mebibytes("EAP_MEMORY_PER_NETWORK_MB", DEFAULT_EAP_LIMITS.perNetworkBytes),
    totalBytes: mebibytes("EAP_MEMORY_MB", DEFAULT_EAP_LIMITS.totalBytes),
    tlsWorkers: integer(env, "EAP_TLS_WORKERS", DEFAULT_EAP_LIMITS.tlsWorkers ?? 0, 0, 256),
    tlsEngine: oneOf(env, "EAP_TLS_ENGINE", DEFAULT_EAP_LIMITS.tlsEngine ?? "auto", [
      "auto",
      "openssl",
      "node",
    ]) as EapLimits["tlsEngine"],
  };
  const addon = limits.tlsEngine === "openssl" ? openSslAddon() : undefined;
  if (addon && "error" in addon) {
    throw new ConfigError(
      `EAP_TLS_ENGINE is openssl, but its addon does not load (${addon.error}): npm run build`,
    );
  }
  if (limits.perNetwork > limits.total) {
    throw new ConfigError("EAP_CONVERSATIONS_PER_NETWORK must not be more than EAP_CONVERSATIONS");
  }
  if (limits.perNetworkBytes > limits.totalBytes) {
    throw new ConfigError("EAP_MEMORY_PER_NETWORK_MB must not be more than EAP_MEMORY_MB");
  }
  return limits;
}

/** RETENTION_*_DAYS: whole days from 0 (keep for ever) to MAX_RETENTION_DAYS. */
function retentionDays(env: NodeJS.ProcessEnv): RetentionDays {
  const days = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > MAX_RETENTION_DAYS) {
      throw new ConfigError(
        `${name} must be a whole number of days from 0 (keep for ever) to ${MAX_RETENTION_DAYS}, got "${raw}"`,
      );
    }
    return Number(raw);
  };
  const d = DEFAULT_RETENTION_DAYS;
  return {
    auth: days("RETENTION_AUTH_DAYS", d.auth),
    sessions: days("RETENTION_SESSIONS_DAYS", d.sessions),
    events: days("RETENTION_EVENTS_DAYS", d.events),
    jobs: days("RETENTION_JOBS_DAYS", d.jobs),
    reports: days("RETENTION_REPORTS_DAYS", d.reports),
    audit: days("RETENTION_AUDIT_DAYS", d.audit),
  };
}

/**
 * Where the server is reached when PUBLIC_URL is unset: PORT, on HOST when that is one IP address
 * (the only address it answers on; guests cannot reach "localhost"), else on localhost. A host name
 * in HOST is left out: it would also become the EAP server name (certs/rules.ts defaultServerName).
 * IPv6 literals go in brackets (RFC 3986 section 3.2.2).
 */
function defaultPublicUrl(env: NodeJS.ProcessEnv, host: string): string {
  const port = integer(env, "PORT", 8080, 0, 65535);
  const family = net.isIP(host);
  // Every address (0.0.0.0, ::), or a zoned link-local one, which no browser address bar takes.
  const local = family === 0 || host.includes("%") || /^(0\.0\.0\.0|[:0]+)$/.test(host);
  const name = local ? "localhost" : family === 6 ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** PUBLIC_URL: an http(s) URL, maybe with a path; no credentials, trailing slash, query or fragment. */
function publicUrl(env: NodeJS.ProcessEnv, host: string): string {
  const raw = env.PUBLIC_URL || defaultPublicUrl(env, host);
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

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function oneOf(env: NodeJS.ProcessEnv, name: string, fallback: string, allowed: readonly string[]): string {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!allowed.includes(raw))
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
  return raw;
}

/** A switch: unset, 0 or 1. */
function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  return oneOf(env, name, fallback ? "1" : "0", ["0", "1"]) === "1";
}

/** HOST / RADIUS_HOST: an IP address or a host name of this machine. */
function listenHost(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (
    net.isIP(raw) ||
    /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(
      raw,
    )
  ) {
    return raw;
  }
  throw new ConfigError(`${name} must be an IP address (like 0.0.0.0 or ::) or a host name, got "${raw}"`);
}

/** proxy-addr's names for address ranges, accepted in TRUSTED_PROXIES as fastify accepts them. */
const PROXY_RANGE_NAMES = ["loopback", "linklocal", "uniquelocal"];

/** TRUSTED_PROXIES: addresses or CIDRs (IPv4 or IPv6), or proxy-addr's range names. */
function trustedProxies(env: NodeJS.ProcessEnv): string[] {
  const entries = (env.TRUSTED_PROXIES || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (PROXY_RANGE_NAMES.includes(entry)) continue;
    try {
      parseCidr(entry);
    } catch (error) {
      throw new ConfigError(
        `TRUSTED_PROXIES must be comma-separated IP addresses or CIDRs (like 10.0.0.1,192.168.0.0/16) ` +
          `or ${PROXY_RANGE_NAMES.join(", ")}: ${(error as Error).message}`,
      );
    }
  }
  return entries;
}

function serviceUrl(
  env: NodeJS.ProcessEnv,
  name: string,
  schemes: RegExp,
  example: string,
): string | undefined {
  const raw = env[name] || undefined;
  if (raw === undefined) return undefined;
  let valid = schemes.test(raw);
  try {
    new URL(raw);
  } catch {
    valid = false;
  }
  // The value may hold a password: it is never repeated in the message.
  if (!valid) throw new ConfigError(`${name} must be a URL like ${example}`);
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

/** The EAP server identity from files, checked now: a bad file stops the process with one line. */
function eapFiles(env: NodeJS.ProcessEnv): EapFiles | undefined {
  try {
    return loadEapFiles({
      certFile: env.EAP_CERT_FILE || undefined,
      keyFile: env.EAP_KEY_FILE || undefined,
      caFile: env.EAP_CA_FILE || undefined,
      caKeyFile: env.EAP_CA_KEY_FILE || undefined,
    });
  } catch (error) {
    if (error instanceof EapFileError) throw new ConfigError(error.message);
    throw error;
  }
}

function eapServerName(env: NodeJS.ProcessEnv, files: EapFiles | undefined): string | undefined {
  const raw = env.EAP_SERVER_NAME;
  if (raw === undefined || raw === "") return undefined;
  if (!isServerName(raw)) {
    throw new ConfigError(
      `EAP_SERVER_NAME must be a DNS name with a dot (like radius.example.com), got "${raw}"`,
    );
  }
  const name = raw.toLowerCase();
  if (files && !files.serverNames.some((known) => known.toLowerCase() === name)) {
    throw new ConfigError(
      `EAP_SERVER_NAME ${raw} is not a name of the certificate in EAP_CERT_FILE (${files.serverNames.join(", ") || "none"})`,
    );
  }
  return name;
}

/** METRICS_TOKEN: 16-256 printable ASCII characters; the value is never repeated in a message. */
function metricsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === "") return undefined;
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) {
    throw new ConfigError(
      `METRICS_TOKEN must be 16-256 printable ASCII characters without spaces (openssl rand -hex 24); got ${raw.length} characters`,
    );
  }
  return raw;
}

/** METRICS_LISTEN: host:port or [ipv6]:port, port 1-65535. */
function metricsListen(env: NodeJS.ProcessEnv): { host: string; port: number } | undefined {
  const raw = env.METRICS_LISTEN;
  if (raw === undefined || raw === "") return undefined;
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  const problem = `METRICS_LISTEN must be host:port (like 127.0.0.1:9464 or [::1]:9464, port 1-65535), got "${raw}"`;
  if (!match || host === undefined || !(port >= 1 && port <= 65535)) throw new ConfigError(problem);
  if (match[1] !== undefined && net.isIPv6(host)) return { host, port };
  try {
    return { host: listenHost({ METRICS_LISTEN: host }, "METRICS_LISTEN", host), port };
  } catch {
    throw new ConfigError(problem);
  }
}

/** A display name and address, or an address: `Wi-Fi <wifi@example.com>`; no line breaks. */
const FROM = /^(?:[^<>"]{0,100} ?<[^\s<>@]{1,64}@[^\s<>@]{1,253}>|[^\s<>@]{1,64}@[^\s<>@]{1,253})$/;

/** The SMTP settings, or undefined when SMTP_HOST is unset (verification by email is then refused). */
function smtpSettings(env: NodeJS.ProcessEnv): SmtpSettings | undefined {
  const host = env.SMTP_HOST;
  if (host === undefined || host === "") return undefined;
  listenHost({ SMTP_HOST: host }, "SMTP_HOST", host);
  const security = oneOf(env, "SMTP_SECURITY", "starttls", SMTP_SECURITY) as SmtpSettings["security"];
  const from = env.SMTP_FROM ?? "";
  if (!FROM.test(from) || hasControlCharacters(from)) {
    throw new ConfigError(`SMTP_FROM must be an address like wifi@example.com or "Wi-Fi <wifi@example.com>"`);
  }
  const user = env.SMTP_USER || undefined;
  const password = env.SMTP_PASSWORD || undefined;
  if ((user === undefined) !== (password === undefined)) {
    throw new ConfigError("SMTP_USER and SMTP_PASSWORD go together (both set, or neither)");
  }
  return {
    host,
    port: integer(env, "SMTP_PORT", security === "tls" ? 465 : 587, 1, 65535),
    security,
    user,
    password,
    from,
    timeoutMs: integer(env, "SMTP_TIMEOUT_MS", 10_000, 100, 120_000),
    caFile: env.SMTP_CA_FILE || undefined,
  };
}

/** RADSEC_CERT_FILE and RADSEC_KEY_FILE together, read and checked now (one line when they are bad). */
function radsecIdentity(env: NodeJS.ProcessEnv): { cert: string; key: string } | undefined {
  const certFile = env.RADSEC_CERT_FILE || undefined;
  const keyFile = env.RADSEC_KEY_FILE || undefined;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new ConfigError("RADSEC_CERT_FILE and RADSEC_KEY_FILE go together");
  let cert: string;
  let key: string;
  try {
    cert = readFileSync(certFile, "utf8");
    key = readFileSync(keyFile, "utf8");
  } catch (error) {
    throw new ConfigError(`RADSEC_CERT_FILE/RADSEC_KEY_FILE cannot be read: ${(error as Error).message}`);
  }
  try {
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key)))
      throw new Error("they do not match");
  } catch (error) {
    throw new ConfigError(
      `RADSEC_CERT_FILE and RADSEC_KEY_FILE must be a PEM certificate and its private key: ${(error as Error).message}`,
    );
  }
  return { cert, key };
}

function radsecConfig(env: NodeJS.ProcessEnv, radiusHost: string): RadsecConfig {
  return {
    port: integer(env, "RADSEC_PORT", 0, 0, 65535),
    host: listenHost(env, "RADSEC_HOST", radiusHost),
    identity: radsecIdentity(env),
    idleTimeoutMs: integer(env, "RADSEC_IDLE_TIMEOUT", 300, 1, 86_400) * 1000,
    handshakeTimeoutMs: integer(env, "RADSEC_HANDSHAKE_TIMEOUT", 10, 1, 600) * 1000,
    maxConnections: integer(env, "RADSEC_MAX_CONNECTIONS", 2048, 1, 1_000_000),
    maxConnectionsPerAddress: integer(env, "RADSEC_MAX_CONNECTIONS_PER_ADDRESS", 64, 1, 1_000_000),
    handshakesPerSecond: integer(env, "RADSEC_HANDSHAKES_PER_SECOND", 200, 1, 1_000_000),
    handshakesPerSecondPerAddress: integer(env, "RADSEC_HANDSHAKES_PER_SECOND_PER_ADDRESS", 20, 1, 1_000_000),
    radius11: oneOf(env, "RADSEC_RADIUS11", "allow", [
      "forbid",
      "allow",
      "require",
    ]) as RadsecConfig["radius11"],
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = serviceUrl(
    env,
    "DATABASE_URL",
    /^postgres(ql)?:\/\//,
    "postgres://user@host:5432/db (leave it unset for SQLite in DATA_DIR)",
  );
  const redisUrl = serviceUrl(env, "REDIS_URL", /^rediss?:\/\//, "redis://host:6379");
  const host = listenHost(env, "HOST", "0.0.0.0");
  const files = eapFiles(env);
  return {
    host,
    port: integer(env, "PORT", 8080, 0, 65535),
    dataDir: path.resolve(env.DATA_DIR || "data"),
    databaseUrl,
    redisUrl,
    logLevel: oneOf(env, "LOG_LEVEL", "info", LOG_LEVELS),
    trustedProxies: trustedProxies(env),
    defaultRateLimit: integer(env, "RATE_LIMIT_PER_MINUTE", 100, 1, 1_000_000),
    authFailureLimit: integer(env, "AUTH_FAILURE_LIMIT_PER_MINUTE", 30, 1, 1_000_000),
    shutdownTimeoutMs: integer(env, "SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
    publicUrl: publicUrl(env, host),
    runWorker: flag(env, "WORKER", true),
    radiusAuthPort: integer(env, "RADIUS_AUTH_PORT", 1812, 0, 65535),
    radiusAcctPort: integer(env, "RADIUS_ACCT_PORT", 1813, 0, 65535),
    radiusHost: listenHost(env, "RADIUS_HOST", host),
    webhookAllowPrivate: flag(env, "WEBHOOK_ALLOW_PRIVATE", false),
    idpAllowHttp: flag(env, "IDP_ALLOW_HTTP", false),
    directoryWorker: flag(env, "DIRECTORY_WORKER", true),
    testClockFile: env.WISP_TEST_CLOCK_FILE || undefined,
    webhookRetrySchedule: retrySchedule(env),
    webhookSecretKey: webhookSecretKey(env),
    reportTasksPerAccount: integer(env, "REPORT_TASKS_PER_ACCOUNT", 10, 1, 100_000),
    reportRunningPerAccount: integer(env, "REPORT_RUNNING_PER_ACCOUNT", 3, 1, 100_000),
    portalAttemptsPerAddress: integer(env, "PORTAL_ATTEMPTS_PER_ADDRESS", 30, 1, 1_000_000),
    portalAttemptsPerDevice: integer(env, "PORTAL_ATTEMPTS_PER_DEVICE", 10, 1, 1_000_000),
    networkMinPrefix: {
      ipv4: integer(env, "NETWORK_MIN_PREFIX_IPV4", DEFAULT_MIN_PREFIX.ipv4, 0, 32),
      ipv6: integer(env, "NETWORK_MIN_PREFIX_IPV6", DEFAULT_MIN_PREFIX.ipv6, 0, 128),
    },
    eapLimits: eapLimits(env),
    eapFragmentSize: integer(env, "EAP_FRAGMENT_SIZE", DEFAULT_FRAGMENT_SIZE, 64, 4000),
    eapFiles: files,
    eapServerName: eapServerName(env, files),
    retention: retentionDays(env),
    metricsToken: metricsToken(env),
    metricsListen: metricsListen(env),
    smtp: smtpSettings(env),
    guestSendsPerAccountHour: integer(
      env,
      "GUEST_SENDS_PER_ACCOUNT_HOUR",
      DEFAULT_ACCOUNT_SENDS_PER_HOUR,
      1,
      1_000_000,
    ),
    consoleSessions: {
      // A console session ends after this long unused, and this long after login whatever its use.
      idleMs: integer(env, "CONSOLE_SESSION_IDLE_MINUTES", 720, 1, 525_600) * 60_000,
      maxMs: integer(env, "CONSOLE_SESSION_MAX_HOURS", 168, 1, 8_760) * 3_600_000,
    },
    radsec: radsecConfig(env, listenHost(env, "RADIUS_HOST", host)),
  };
}

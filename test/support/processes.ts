// Wisp as real processes: the `wisp` CLI and the server, spawned with a chosen environment, their
// output collected, the server awaited through its "wisp started" log line. They run the compiled
// build (dist/, made by `npm test` before the suites) when it is current, as `npm start` and
// bin/wisp.mjs do: what ships is what is tested, and a compiled process starts with a third of the
// CPU of tsx compiling ~1,000 modules, which kept CLI tests past their time on a busy machine. A
// checkout whose sources changed since the build (a single test file run by hand) runs src/ through
// the suites' own TypeScript loader (ts-loader.mjs: 0.45 s of CPU less per process than tsx).
import { type ChildProcess, type ChildProcessByStdio, spawn } from "node:child_process";
import http from "node:http";
import net from "node:net";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { DIST, distState } from "../../scripts/dist.mjs";
import type { TestDatabase } from "./databases.ts";

/** The repository root: the working directory of every spawned process. */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Variables of src/config.ts (and the test runner's own) never inherited from the outer shell. */
const SCRUBBED = [
  "HOST",
  "PORT",
  "DATA_DIR",
  "DATABASE_URL",
  "REDIS_URL",
  "LOG_LEVEL",
  "TRUSTED_PROXIES",
  "RATE_LIMIT_PER_MINUTE",
  "AUTH_FAILURE_LIMIT_PER_MINUTE",
  "SHUTDOWN_TIMEOUT_MS",
  "PUBLIC_URL",
  "RADIUS_AUTH_PORT",
  "RADIUS_ACCT_PORT",
  "RADIUS_HOST",
  "WORKER",
  "WEBHOOK_ALLOW_PRIVATE",
  "WEBHOOK_RETRY_SCHEDULE",
  "WEBHOOK_SECRET_KEY",
  "REPORT_TASKS_PER_ACCOUNT",
  "REPORT_RUNNING_PER_ACCOUNT",
  "EAP_IDLE_TIMEOUT",
  "EAP_CONVERSATIONS_PER_NETWORK",
  "EAP_CONVERSATIONS",
  "EAP_MEMORY_PER_NETWORK_MB",
  "EAP_MEMORY_MB",
  "EAP_FRAGMENT_SIZE",
  "EAP_CERT_FILE",
  "EAP_KEY_FILE",
  "EAP_CA_FILE",
  "EAP_CA_KEY_FILE",
  "EAP_SERVER_NAME",
  "RETENTION_AUTH_DAYS",
  "RETENTION_SESSIONS_DAYS",
  "RETENTION_EVENTS_DAYS",
  "RETENTION_JOBS_DAYS",
  "RETENTION_REPORTS_DAYS",
  "NODE_TEST_CONTEXT",
];

/** Test processes never take the standard RADIUS ports: parallel test files would collide. */
const RADIUS_OFF: Env = { RADIUS_AUTH_PORT: "0", RADIUS_ACCT_PORT: "0" };

/**
 * Nor do they prune (RETENTION_*_DAYS=0) unless a test asks: suites seed rows at fixed dates long
 * past (reports at 2025-06-15), which the worker's retention run at start would delete under them.
 */
export const RETENTION_OFF: Env = {
  RETENTION_AUTH_DAYS: "0",
  RETENTION_SESSIONS_DAYS: "0",
  RETENTION_EVENTS_DAYS: "0",
  RETENTION_JOBS_DAYS: "0",
};

export type Env = Record<string, string | undefined>;

/** The environment pointing a process at a test database: DATA_DIR, plus DATABASE_URL for PostgreSQL. */
export function databaseEnv(database: TestDatabase): Env {
  return { DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl };
}

function childEnv(env: Env): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRUBBED) delete result[name];
  for (const [name, value] of Object.entries({ ...RADIUS_OFF, ...RETENTION_OFF, ...env })) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

export interface ProcessResult {
  /** The exit code; null when the process was ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** `wisp` commands that change data: the database they named on stderr (taken out of stderr). */
  database?: string;
}

/** Generous: a loaded 2-core machine (load average 25 seen) stretches a 0.2 s command to many seconds. */
const RUN_TIMEOUT_MS = 90_000;

let compiled: boolean | undefined;
/** Whether spawned processes run dist/ (decided once per test process: dist/ does not change under a run). */
export function runsCompiled(): boolean {
  compiled ??= distState() === "current";
  return compiled;
}

/** The suites' TypeScript loader, by URL: a spawned process may run in another folder. */
const TS_LOADER = new URL("./ts-loader.mjs", import.meta.url).href;

/** The node arguments that run the server (`main`) or the CLI (`cli`): dist/ when current, else src/. */
export function entryArgs(entry: "main" | "cli"): string[] {
  if (runsCompiled()) return [`${DIST}/${entry}.js`];
  return ["--import", TS_LOADER, entry === "main" ? "src/main.ts" : "src/cli/main.ts"];
}

function run(command: string, args: string[], env: Env, input?: string, cwd = ROOT): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: childEnv(env),
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
    child.stdin?.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")} did not finish in ${RUN_TIMEOUT_MS} ms\n${stderr}`));
    }, RUN_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const DATABASE_LINE = /^wisp: database (.+)\n/;

/**
 * Runs `wisp <args>` (dist/cli.js, or src/cli/main.ts through ts-loader.mjs), with `input` on standard input.
 * The "wisp: database ..." line a changing command starts stderr with is moved to `database`.
 */
export async function wisp(args: string[], env: Env, input?: string): Promise<ProcessResult> {
  return withDatabaseLine(await run(process.execPath, [...entryArgs("cli"), ...args], env, input));
}

/** Runs `wisp <args>` as the package's bin runs it (node bin/wisp.mjs) in `dir`, an installed build. */
export async function builtWisp(
  dir: string,
  args: string[],
  env: Env,
  input?: string,
): Promise<ProcessResult> {
  return withDatabaseLine(await run(process.execPath, ["bin/wisp.mjs", ...args], env, input, dir));
}

function withDatabaseLine(result: ProcessResult): ProcessResult {
  const line = DATABASE_LINE.exec(result.stderr);
  if (!line) return result;
  return { ...result, stderr: result.stderr.slice(line[0].length), database: line[1] };
}

/** Runs `npm <args>` in the repository root, exactly as the README writes it. */
export function npm(args: string[], env: Env): Promise<ProcessResult> {
  return run(process.platform === "win32" ? "npm.cmd" : "npm", args, env);
}

/** Runs the server to its end (for configurations that must not start). */
export function runServerToExit(env: Env): Promise<ProcessResult> {
  return run(process.execPath, entryArgs("main"), env);
}

/** Runs `node dist/main.js` in `dir`, an installed build, to its end (for installations that must not start). */
export function runBuiltServerToExit(dir: string, env: Env): Promise<ProcessResult> {
  return run(process.execPath, ["dist/main.js"], env, undefined, dir);
}

/** A loopback port nobody listens on at the moment of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

// biome-ignore lint/suspicious/noExplicitAny: pino log lines carry whatever fields the logger adds
export type LogLine = Record<string, any>;

/** A long-running Wisp process (the server, or `wisp worker`) with its output collected. */
export interface WispProcess {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** The JSON log lines written to stdout so far. */
  log(): LogLine[];
  /** Resolves with the first log line that matches, or rejects after timeoutMs or when the process ends. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Resolves when the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (SIGKILL after 10 s) unless it has already ended; resolves when it has. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ServerProcess extends WispProcess {
  port: number;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
}

/** The start-up log line: "wisp <version> started: ..." (src/server.ts). */
export const STARTED = /^wisp \S+ started: /;

/** Starts the server on a free loopback port and waits for "wisp ... started". */
export function startServerProcess(env: Env, timeoutMs = 60_000): Promise<ServerProcess> {
  return startServerOn(entryArgs("main"), ROOT, env, timeoutMs);
}

/** Spawns the server and resolves at its first log line, while it is still starting. */
export function spawnStartingServer(env: Env, timeoutMs = 60_000): Promise<ServerProcess> {
  return startServerOn(entryArgs("main"), ROOT, env, timeoutMs, () => true);
}

/** Starts `node dist/main.js` in `dir`, an installed build (as npm start and the image run it), likewise. */
export function startBuiltServerProcess(dir: string, env: Env, timeoutMs = 60_000): Promise<ServerProcess> {
  return startServerOn(["dist/main.js"], dir, env, timeoutMs);
}

async function startServerOn(
  args: string[],
  cwd: string,
  env: Env,
  timeoutMs: number,
  ready: (line: LogLine) => boolean = (line) => STARTED.test(line.msg ?? ""),
): Promise<ServerProcess> {
  const port = await freePort();
  const server = await startProcess(
    args,
    { HOST: "127.0.0.1", PORT: String(port), ...env },
    ready,
    timeoutMs,
    cwd,
  );
  return { ...server, port, url: `http://127.0.0.1:${port}` };
}

/** Starts `wisp worker` and waits for "wisp worker started". */
export function startWorkerProcess(env: Env, timeoutMs = 60_000): Promise<WispProcess> {
  return startProcess(
    [...entryArgs("cli"), "worker"],
    env,
    (line) => line.msg === "wisp worker started",
    timeoutMs,
  );
}

async function startProcess(
  args: string[],
  env: Env,
  ready: (line: LogLine) => boolean,
  timeoutMs: number,
  cwd = ROOT,
): Promise<WispProcess> {
  const child = spawn(process.execPath, args, {
    cwd,
    env: childEnv({ LOG_LEVEL: "info", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  let ended = false;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    const start = stdout.lastIndexOf("\n") + 1;
    stdout += chunk;
    const complete = stdout.slice(start, stdout.lastIndexOf("\n") + 1);
    for (const text of complete.split("\n")) {
      if (!text.trim()) continue;
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        lines.push({ msg: text, unparsed: true });
      }
    }
    for (const wake of waiters) wake();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => {
      ended = true;
      for (const wake of waiters) wake();
      resolve({ code, signal });
    });
  });

  function waitForLog(match: (line: LogLine) => boolean, waitMs = 10_000): Promise<LogLine> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (found) return finish(() => resolve(found));
        if (ended) {
          const how = child.signalCode ? `by ${child.signalCode}` : `with exit code ${child.exitCode}`;
          return finish(() => reject(new Error(`the process ended first (${how})\n${stdout}\n${stderr}`)));
        }
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`log line not seen in ${waitMs} ms\n${stdout}\n${stderr}`))),
        waitMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });
  }

  const started: WispProcess = {
    child,
    pid: child.pid ?? 0,
    stdout: () => stdout,
    stderr: () => stderr,
    log: () => [...lines],
    waitForLog,
    exited,
    async stop() {
      if (!ended) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        const result = await exited;
        clearTimeout(timer);
        return result;
      }
      return exited;
    },
  };
  try {
    await waitForLog(ready, timeoutMs);
  } catch (error) {
    await started.stop();
    throw error;
  }
  return started;
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the server answered
  body: any;
}

/** One request on a new connection of its own (no keep-alive pool), so it sees the server as it is now. */
export function request(
  url: string,
  options: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { connection: "close", ...options.headers };
  if (options.key !== undefined) headers.authorization ??= `Bearer ${options.key}`;
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (payload !== undefined) {
    headers["content-type"] ??= "application/json";
    headers["content-length"] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => {
        const isJson = (res.headers["content-type"] ?? "").includes("application/json");
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          body: isJson ? JSON.parse(text) : text,
        });
      });
      res.on("error", reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${url} did not answer in 10 s`)));
    req.on("error", reject);
    req.end(payload);
  });
}

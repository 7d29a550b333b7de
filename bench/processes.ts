// What every benchmark needs around the servers it measures: child processes and temp folders
// that are always cleaned up (also on Ctrl-C), free ports, and a Wisp (or bare) server started
// in a child process and awaited through /healthz.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/support/processes.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

export class BenchError extends Error {}

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
const beforeCleanup: (() => void)[] = [];

/** Registers a child so that cleanup and the exit handler stop it. */
export function track<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.on("exit", () => children.delete(child));
  return child;
}

export function makeTempDir(label: string, parent = os.tmpdir()): string {
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, `wisp-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** SIGTERM, then SIGKILL if it is still there after 10 s; resolves when it has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Runs `fn` first whenever cleanup runs (closing a keep-alive agent, say). */
export function onCleanup(fn: () => void): void {
  beforeCleanup.push(fn);
}

export async function cleanup(): Promise<void> {
  for (const fn of beforeCleanup) fn();
  await Promise.all([...children].map(stopChild));
  for (const dir of [...tempDirs]) removeTempDir(dir);
}

let handlersInstalled = false;

/** Ctrl-C / SIGTERM stop the servers and remove the folders; "exit" is the synchronous last resort. */
export function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", () => {
    for (const child of children) child.kill("SIGKILL");
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping the servers`);
      cleanup().finally(() => process.exit(130));
    });
  }
}

/** Writes a script's figures to bench/results/<name>.json and says where. */
export function writeResults(name: string, report: unknown): void {
  const file = path.join(ROOT, "bench", "results", `${name}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results written to ${path.relative(ROOT, file)}`);
}

/** Runs a script's main: a failure prints (briefly if expected) and sets the exit code; clean-up runs always. */
export function runBench(main: () => Promise<void>): void {
  main()
    .catch((error) => {
      console.error(error instanceof BenchError ? `bench failed: ${error.message}` : error);
      process.exitCode = 1;
    })
    .finally(cleanup);
}

/** The environment without inherited settings that would change what is measured. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of [
    "DATABASE_URL",
    "REDIS_URL",
    "TRUSTED_PROXIES",
    "RATE_LIMIT_PER_MINUTE",
    "NODE_OPTIONS",
    "PUBLIC_URL",
  ]) {
    delete env[name];
  }
  return env;
}

export interface HttpChild {
  name: string;
  url: string;
  child: ChildProcess;
}

/** Starts `node --import tsx <script>` on a free loopback port and waits for its /healthz. */
/** npm run build, so a compiled server (dist/) is the code of this checkout. */
export function buildDist(): void {
  const { status } = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  if (status !== 0) throw new BenchError("npm run build failed");
}

/** Starts `script` (TypeScript through tsx, or compiled JavaScript as it is) and waits for /healthz. */
export async function startHttpChild(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
): Promise<HttpChild> {
  const port = await freePort();
  const child = track(
    spawn(process.execPath, [...nodeFlags, ...(script.endsWith(".ts") ? ["--import", "tsx"] : []), script], {
      cwd: ROOT,
      env: { ...cleanEnv(), ...env, HOST: "127.0.0.1", PORT: String(port) },
      stdio: ["ignore", "inherit", "inherit"],
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new BenchError(`${name} exited during start-up (code ${child.exitCode ?? child.signalCode})`);
    }
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { name, url, child };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new BenchError(`${name} did not answer ${url}/healthz within 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** USER_HZ: the unit of /proc/<pid>/stat times; 100 on every Linux build Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

/** A server process's CPU time so far (user + system), from /proc (Linux), in microseconds. */
export function cpuMicroseconds(server: HttpChild): number {
  const stat = fs.readFileSync(`/proc/${server.child.pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND) * 1e6;
}

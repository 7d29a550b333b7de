// The servers of the RADIUS benchmark, each in a process of its own: Wisp (node src/main.ts with its
// embedded RADIUS server) and FreeRADIUS 3.2 configured by deploy/freeradius/configure.sh --lab on
// the same SQLite database, with or without post-auth logging. Every child and temporary folder
// is registered here, so that an error, Ctrl-C or a plain exit stops and removes them.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freeUdpPort } from "../test/support/freeradius-lab.ts";
import { freePort } from "../test/support/processes.ts";
import {
  BenchError,
  cleanEnv,
  makeTempDir as makeBenchTempDir,
  ROOT,
  removeTempDir,
  stopChild,
  track,
} from "./processes.ts";

const STOCK_RADDB = "/etc/freeradius/3.0";
const CONFIGURE = path.join(ROOT, "deploy", "freeradius", "configure.sh");

export interface RadiusTarget {
  /** Short id used in results: "wisp", "freeradius-log", "freeradius-nolog". */
  id: string;
  name: string;
  authPort: number;
  acctPort: number;
  /** Whether this server writes a radpostauth row per attempt. */
  recordsAttempts: boolean;
  /** The server process (all its threads), for CPU accounting. */
  pid: number;
  /** Wisp's HTTP port (the API), when the target is Wisp. */
  httpPort?: number;
  stop(): Promise<void>;
}

export {
  BenchError,
  cleanup,
  installExitHandlers,
  ROOT,
  removeTempDir,
  runBench,
  stopChild,
  track,
  writeResults,
} from "./processes.ts";

export function makeTempDir(parent: string, label: string): string {
  return makeBenchTempDir(`radius-${label}`, parent);
}

// --- Wisp --------------------------------------------------------------------------------------

/** `script`: the entry (default src/main.ts); `env`: more settings for it. */
export async function startWisp(
  dataDir: string,
  cpuProfDir: string | undefined,
  options: { script?: string; env?: Record<string, string> } = {},
): Promise<RadiusTarget> {
  const port = await freePort();
  const authPort = await freeUdpPort();
  const acctPort = await freeUdpPort();
  const flags = cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] : [];
  // BENCH_NODE_FLAGS: node options for the server alone (e.g. --perf-basic-prof for `perf record`).
  if (process.env.BENCH_NODE_FLAGS) flags.push(...process.env.BENCH_NODE_FLAGS.split(" ").filter(Boolean));
  const script = options.script ?? "src/main.ts";
  const child = track(
    // TypeScript through tsx, or compiled JavaScript (dist/main.js) as it is.
    spawn(process.execPath, [...flags, ...(script.endsWith(".ts") ? ["--import", "tsx"] : []), script], {
      cwd: ROOT,
      env: {
        ...cleanEnv(),
        HOST: "127.0.0.1",
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(authPort),
        RADIUS_ACCT_PORT: String(acctPort),
        ...options.env,
      },
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  // Wisp logs JSON lines; show errors (level >= 50) only, so that start-up notices stay quiet.
  let pending = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    const end = pending.lastIndexOf("\n");
    if (end < 0) return;
    for (const line of pending.slice(0, end).split("\n")) {
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string };
        if ((entry.level ?? 0) >= 50) console.error(`[wisp] ${line}`);
      } catch {
        if (line.trim()) console.error(`[wisp] ${line}`);
      }
    }
    pending = pending.slice(end + 1);
  });
  const url = `http://127.0.0.1:${port}/healthz`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new BenchError(`Wisp exited during start-up (code ${child.exitCode ?? child.signalCode})`);
    }
    try {
      if ((await fetch(url)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new BenchError(`Wisp did not answer ${url} within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    id: "wisp",
    name: "Wisp (embedded)",
    authPort,
    acctPort,
    recordsAttempts: true,
    pid: child.pid ?? 0,
    httpPort: port,
    // SIGTERM lets Wisp drain its write batcher and, with --cpu-prof, write the profile.
    stop: () => stopChild(child),
  };
}

// --- FreeRADIUS --------------------------------------------------------------------------------

/** Removes the `sql` calls of the post-auth section (and its REJECT subsection) of the Wisp site. */
export function withoutPostAuthLogging(site: string): string {
  const lines = site.split("\n");
  const kept: string[] = [];
  let depth = 0;
  let removed = 0;
  for (const line of lines) {
    const trimmed = line.trim();
    if (depth === 0 && /^post-auth\s*\{$/.test(trimmed)) {
      depth = 1;
      kept.push(line);
      continue;
    }
    if (depth > 0) {
      if (trimmed.endsWith("{")) depth++;
      if (trimmed === "}") depth--;
      if (trimmed === "sql" || trimmed === "-sql") {
        removed++;
        continue;
      }
    }
    kept.push(line);
  }
  if (removed === 0) throw new BenchError("no sql call found in the post-auth section of the Wisp site");
  return kept.join("\n");
}

export interface FreeRadiusOptions {
  parentDir: string;
  databaseFile: string;
  postAuthLogging: boolean;
  /** configure.sh's variables (EAP_CERT_FILE... for the EAP benchmark). */
  env?: Record<string, string>;
  /** Result id and name instead of the post-auth-logging ones. */
  id?: string;
  name?: string;
  /** More files for sites-enabled/ (name -> text): a RadSec listener, say (bench/radsec.ts). */
  sites?: Record<string, string>;
}

export async function startFreeRadius(options: FreeRadiusOptions): Promise<RadiusTarget> {
  const label = options.postAuthLogging ? "fr-log" : "fr-nolog";
  const dir = makeTempDir(options.parentDir, label);
  const raddb = path.join(dir, "raddb");
  fs.cpSync(STOCK_RADDB, raddb, { recursive: true, dereference: false });
  const authPort = await freeUdpPort();
  const acctPort = await freeUdpPort();
  execFileSync(
    CONFIGURE,
    [raddb, options.databaseFile, String(authPort), String(acctPort), "127.0.0.1", "--lab"],
    { env: { ...process.env, ...options.env } },
  );
  // Stock FreeRADIUS holds every Access-Reject back for reject_delay = 1 s (against password
  // guessing). Wisp answers at once, and with 10% wrong passwords the delay alone would cap
  // FreeRADIUS at about parallel / (0.1 * 1 s) = 1,000 auth/s: throughput is compared without it
  // (configure.sh --lab sets it to 0; checked here).
  const radiusd = path.join(raddb, "radiusd.conf");
  if (!/^\s*reject_delay = 0\s*$/m.test(fs.readFileSync(radiusd, "utf8"))) {
    throw new BenchError("configure.sh --lab did not set reject_delay = 0 in radiusd.conf");
  }
  if (!options.postAuthLogging) {
    const site = path.join(raddb, "sites-available", "wisp");
    fs.writeFileSync(site, withoutPostAuthLogging(fs.readFileSync(site, "utf8")));
  }
  for (const [name, text] of Object.entries(options.sites ?? {}))
    fs.writeFileSync(path.join(raddb, "sites-enabled", name), text);
  const logFile = path.join(dir, "radius.log");
  const child = track(spawn("freeradius", ["-f", "-d", raddb, "-l", logFile], { stdio: "ignore" }));
  const deadline = Date.now() + 15_000;
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "");
  while (!log().includes("Ready to process requests")) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stopChild(child);
      throw new BenchError(`FreeRADIUS (${label}) did not start:\n${log().slice(-3000) || "(no log)"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    id: options.id ?? (options.postAuthLogging ? "freeradius-log" : "freeradius-nolog"),
    name:
      options.name ??
      (options.postAuthLogging ? "FreeRADIUS rlm_sql, post-auth logging" : "FreeRADIUS rlm_sql, no logging"),
    authPort,
    acctPort,
    recordsAttempts: options.postAuthLogging,
    pid: child.pid ?? 0,
    async stop() {
      await stopChild(child);
      removeTempDir(dir);
    },
  };
}

/** "FreeRADIUS Version 3.2.1" or similar. */
export function freeradiusVersion(): string {
  try {
    const out = execFileSync("freeradius", ["-v"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return /FreeRADIUS Version [^\s,]+/.exec(out)?.[0] ?? "FreeRADIUS (version unknown)";
  } catch (error) {
    const out = String((error as { stdout?: unknown }).stdout ?? "");
    return /FreeRADIUS Version [^\s,]+/.exec(out)?.[0] ?? "FreeRADIUS (version unknown)";
  }
}

// --- CPU accounting (Linux /proc) ----------------------------------------------------------------

/** Clock ticks per second of /proc times (USER_HZ; 100 on Linux). */
export const TICKS_PER_SECOND = 100;

/** User and system CPU ticks of a process, all threads included (throws once it is gone). */
export function processTimes(pid: number): { user: number; system: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]), system: Number(fields[12]) };
}

/** User + system CPU ticks of a process, all threads included; null once it is gone. */
export function processTicks(pid: number): number | null {
  try {
    const { user, system } = processTimes(pid);
    return user + system;
  } catch {
    return null;
  }
}

/** CPU ticks of this process's finished children (cutime + cstime): the eapol_test processes, say. */
export function childrenTicks(): number {
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[13]) + Number(fields[14]);
}

/** Busy and total CPU ticks of the whole machine, all cores together. */
export function machineTicks(): { busy: number; total: number } {
  try {
    const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = values.reduce((sum, v) => sum + v, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

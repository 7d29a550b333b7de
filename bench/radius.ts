// PAP Access-Requests and accounting Start/Stop packets per second, with radclient, against Wisp's
// embedded RADIUS server and against FreeRADIUS 3.2 reading the same SQLite database through
// rlm_sql (deploy/freeradius/configure.sh --lab), in the same run: FreeRADIUS once as configured
// (post-auth logging into radpostauth) and once with the post-auth `sql` calls removed (records
// nothing: the baseline Wisp's target refers to). Servers run one at a time, each in its own
// process; rounds alternate (the order rotates every round) and medians are reported.
//
//   node --import tsx bench/radius.ts [--rounds 3] [--requests 20000] [--file-packets 1000]
//     [--parallel 100] [--sessions 5000] [--warmup 2000] [--servers wisp,freeradius-log,freeradius-nolog]
//     [--only auth|acct] [--dir <parent of the temp folder>] [--cpu-prof <dir>] [--timeout 10]
//     [--quiet-wait 120] [--max-noise 0.2] [--retries 4]
//
// Load: radclient -p 100 -r 1 (no retransmissions: an unanswered packet is lost) with a file of
// 1,000 Access-Requests (every user once; 10% wrong passwords or unknown users) repeated with -c;
// accounting is one file of Starts then Stops with distinct session ids, no -c. FreeRADIUS runs
// with reject_delay = 0 (Wisp does not delay rejects either; see radius-servers.ts).
//
// Verdicts: every request has an expected answer in a radclient filter file (Access-Accept with the
// user's own reply items, or Access-Reject for wrong passwords and unknown users); radclient prints a
// line per reply that differs. After every run the database is read back: radpostauth rows written
// (Wisp must record every attempt), radacct rows and stop times (accounting must lose nothing).
//
// Noise: this machine is shared. Each run waits (--quiet-wait s) for an idle CPU first, and the CPU
// time of the server, of radclient and of everything else is taken from /proc during the run; a
// run during which other processes used more than --max-noise cores is done again (--retries). Its
// answers still count for verdicts and losses, its rate does not. --cpu-prof writes a V8 profile of
// the Wisp child (read it with bench/radius-profile.ts); bench/radius-sql.ts times Wisp's statements.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import SqliteDatabase from "better-sqlite3";
import { freeradiusUnavailable, radclient } from "../test/support/freeradius-lab.ts";
import { buildDist } from "./processes.ts";
import {
  acctFile,
  authFiles,
  GROUP,
  GROUP_REPLY,
  RADCLIENT_PRIORITY,
  type RadclientRun,
  radiusBenchUser,
  runRadclient,
  SECRET,
  seed,
  USERS,
} from "./radius-load.ts";
import {
  BenchError,
  freeradiusVersion,
  installExitHandlers,
  machineTicks,
  makeTempDir,
  processTicks,
  type RadiusTarget,
  runBench,
  startFreeRadius,
  startWisp,
  TICKS_PER_SECOND,
  writeResults,
} from "./radius-servers.ts";

const SERVER_IDS = ["wisp", "freeradius-log", "freeradius-nolog"] as const;
type ServerId = (typeof SERVER_IDS)[number];
/** Wisp auth/s over FreeRADIUS-without-logging auth/s. */
const TARGET_AUTH_RATIO = 1.0;
const TARGET_ACCT_RATE = 5000;

interface Settings {
  rounds: number;
  requests: number;
  filePackets: number;
  parallel: number;
  sessions: number;
  warmup: number;
  servers: ServerId[];
  only: "auth" | "acct" | undefined;
  dir: string;
  cpuProfDir: string | undefined;
  timeoutSeconds: number;
  /** Before each run, wait up to this long for other processes to leave the CPU. */
  quietWait: number;
  /** A run during which other processes used more cores than this is done again (up to `retries`). */
  maxNoise: number;
  retries: number;
}

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new BenchError(`--${name} must be a whole number >= 1`);
  return Number(raw);
}

function nonNegativeNumber(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new BenchError(`--${name} must be a number >= 0`);
  return Number(raw);
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string" },
      requests: { type: "string" },
      "file-packets": { type: "string" },
      parallel: { type: "string" },
      sessions: { type: "string" },
      warmup: { type: "string" },
      servers: { type: "string" },
      only: { type: "string" },
      dir: { type: "string" },
      "cpu-prof": { type: "string" },
      timeout: { type: "string" },
      "quiet-wait": { type: "string" },
      "max-noise": { type: "string" },
      retries: { type: "string" },
    },
    strict: true,
  });
  const servers = (values.servers ?? SERVER_IDS.join(",")).split(",").map((s) => s.trim());
  for (const server of servers) {
    if (!SERVER_IDS.includes(server as ServerId))
      throw new BenchError(`--servers takes a list of ${SERVER_IDS.join(", ")}; got "${server}"`);
  }
  const only = values.only;
  if (only !== undefined && only !== "auth" && only !== "acct")
    throw new BenchError("--only must be auth or acct");
  return {
    rounds: positiveInteger("rounds", values.rounds, 3),
    requests: positiveInteger("requests", values.requests, 20_000),
    filePackets: positiveInteger("file-packets", values["file-packets"], 1000),
    parallel: positiveInteger("parallel", values.parallel, 100),
    sessions: positiveInteger("sessions", values.sessions, 5000),
    warmup: positiveInteger("warmup", values.warmup, 2000),
    servers: SERVER_IDS.filter((id) => servers.includes(id)),
    only,
    dir: path.resolve(values.dir ?? os.tmpdir()),
    cpuProfDir: values["cpu-prof"] ? path.resolve(values["cpu-prof"]) : undefined,
    timeoutSeconds: positiveInteger("timeout", values.timeout, 10),
    quietWait: positiveInteger("quiet-wait", values["quiet-wait"], 120),
    maxNoise: nonNegativeNumber("max-noise", values["max-noise"], 0.2),
    retries: values.retries === "0" ? 0 : positiveInteger("retries", values.retries, 4),
  };
}

// --- the database, read between runs ---------------------------------------------------------

/** Row counts read between runs (never while a server is loaded). */
class Ledger {
  private readonly db: SqliteDatabase.Database;

  constructor(file: string) {
    this.db = new SqliteDatabase(file, { fileMustExist: true });
    this.db.pragma("busy_timeout = 5000");
  }

  private count(sql: string, ...params: unknown[]): number {
    const row = this.db.prepare(sql).get(...params) as { n: number };
    return row.n;
  }

  attempts(): number {
    return this.count("select count(*) as n from radpostauth");
  }

  events(): number {
    return this.count("select count(*) as n from events");
  }

  sessions(tag: string): { rows: number; stopped: number } {
    const row = this.db
      .prepare(
        "select count(*) as rows, count(acctstoptime) as stopped from radacct where acctsessionid like ?",
      )
      .get(`${tag}-%`) as { rows: number; stopped: number };
    return row;
  }

  close(): void {
    this.db.close();
  }
}

// --- measuring ---------------------------------------------------------------------------------

/** Where the CPU went during one run. */
interface CpuUse {
  /** CPU time of the server process (all threads) per request or packet, in microseconds. */
  serverUsPerRequest: number;
  /** Cores the server process kept busy on average. */
  serverCores: number;
  /** Cores radclient kept busy (it busy-loops while waiting). */
  radclientCores: number;
  /** Cores used by everything else on the machine (colleagues' tests, say): noise. */
  otherCores: number;
  /** Cores busy with other work just before the run, with every server idle. */
  busyBefore: number;
}

interface Run {
  rate: number;
  seconds: number;
  lost: number;
  samples: string[];
  cpu: CpuUse;
  /**
   * False for a run that other processes disturbed (more than --max-noise cores) and that was done
   * again: its answers still count (verdicts, losses, records), its rate does not.
   */
  counted: boolean;
}

interface AuthRound extends Run {
  requests: number;
  wrongVerdicts: number;
  wrongReplies: number;
  /** radpostauth rows written during the run. */
  recorded: number;
  /** events rows written during the run. */
  events: number;
}

interface AcctRound extends Run {
  packets: number;
  /** Sessions without a radacct row, plus sessions whose stop time was not recorded. */
  missing: number;
}

interface ServerResult {
  id: ServerId;
  name: string;
  auth: {
    median: number;
    cpuUsPerRequest: number;
    wrongVerdicts: number;
    wrongReplies: number;
    lost: number;
    rounds: AuthRound[];
  };
  acct: { median: number; cpuUsPerPacket: number; lost: number; missing: number; rounds: AcctRound[] } | null;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function rotate<T>(items: T[], by: number): T[] {
  const k = by % Math.max(1, items.length);
  return [...items.slice(k), ...items.slice(0, k)];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Cores busy on the machine over `ms` milliseconds. */
async function busyCores(ms: number): Promise<number> {
  const before = machineTicks();
  await pause(ms);
  const after = machineTicks();
  const total = after.total - before.total;
  return total > 0 ? ((after.busy - before.busy) / total) * os.cpus().length : 0;
}

/** Colleagues share this machine: wait (up to quietWait seconds) until the CPU is nearly idle. */
async function waitForQuiet(settings: Settings): Promise<number> {
  const deadline = Date.now() + settings.quietWait * 1000;
  let busy = await busyCores(1000);
  let told = false;
  while (busy > 0.25 && Date.now() < deadline) {
    if (!told) console.log(`  (waiting for the machine to quiet down: ${busy.toFixed(2)} cores busy)`);
    told = true;
    busy = await busyCores(2000);
  }
  return busy;
}

/** Runs `load` and accounts for the CPU the server, radclient and everything else used meanwhile. */
async function measured(
  target: RadiusTarget,
  units: number,
  settings: Settings,
  load: () => Promise<RadclientRun>,
): Promise<{ run: RadclientRun; cpu: CpuUse }> {
  const busyBefore = await waitForQuiet(settings);
  const machineBefore = machineTicks();
  const serverBefore = processTicks(target.pid) ?? 0;
  const selfBefore = process.cpuUsage();
  const run = await load();
  const selfUsed = process.cpuUsage(selfBefore);
  const serverTicks = (processTicks(target.pid) ?? serverBefore) - serverBefore;
  const machineAfter = machineTicks();
  const elapsedTicks = run.seconds * TICKS_PER_SECOND;
  const busyTicks = machineAfter.busy - machineBefore.busy;
  const selfTicks = ((selfUsed.user + selfUsed.system) / 1e6) * TICKS_PER_SECOND;
  const clientTicks = run.clientCpuSeconds * TICKS_PER_SECOND;
  return {
    run,
    cpu: {
      serverUsPerRequest: ((serverTicks / TICKS_PER_SECOND) * 1e6) / units,
      serverCores: serverTicks / elapsedTicks,
      radclientCores: clientTicks / elapsedTicks,
      otherCores: Math.max(0, (busyTicks - serverTicks - clientTicks - selfTicks) / elapsedTicks),
      busyBefore,
    },
  };
}

/**
 * Runs `once` until a run is not disturbed by other processes (at most 1 + retries times). Every
 * run is kept for the correctness counts; disturbed ones that were done again are not counted in
 * the rates.
 */
async function untilQuiet<R extends Run>(settings: Settings, once: (attempt: number) => Promise<R>) {
  for (let attempt = 1; ; attempt++) {
    const r = await once(attempt);
    if (r.cpu.otherCores <= settings.maxNoise || attempt > settings.retries) return;
    r.counted = false;
    console.log(
      `  (not counted: other processes used ${r.cpu.otherCores.toFixed(2)} cores during the run; again)`,
    );
  }
}

interface Workspace {
  dir: string;
  authRequests: string;
  filterFor: Map<string, string>;
  perFile: { packets: number; accepts: number; rejects: number };
}

/** One good and one bad login through radclient before any load: the verdicts and reply items. */
async function probe(target: RadiusTarget): Promise<boolean> {
  const user = radiusBenchUser(4);
  const send = (password: string) =>
    radclient(target.authPort, "auth", SECRET, [
      ["User-Name", user.username],
      ["User-Password", password],
      ["NAS-IP-Address", "127.0.0.1"],
    ]);
  const good = await send(user.password);
  const value = (name: string) => good.attributes.find(([n]) => n === name)?.[1];
  if (
    good.code !== "Access-Accept" ||
    value("Session-Timeout") !== String(user.sessionTimeout) ||
    value(GROUP_REPLY.attribute) !== GROUP_REPLY.value
  ) {
    throw new BenchError(
      `${target.name}: ${user.username} with the right password got ${good.code} ` +
        JSON.stringify(good.attributes),
    );
  }
  const bad = await send("not-the-password");
  if (bad.code !== "Access-Reject") throw new BenchError(`${target.name}: a wrong password got ${bad.code}`);
  return value("Message-Authenticator") !== undefined;
}

async function authRun(
  target: RadiusTarget,
  work: Workspace,
  ledger: Ledger,
  settings: Settings,
  repeat: number,
): Promise<AuthRound> {
  const requests = work.perFile.packets * repeat;
  const attemptsBefore = ledger.attempts();
  const eventsBefore = ledger.events();
  const { run, cpu } = await measured(target, requests, settings, () =>
    runRadclient({
      port: target.authPort,
      kind: "auth",
      file: work.authRequests,
      filter: work.filterFor.get(target.id),
      repeat,
      parallel: settings.parallel,
      expected: requests,
      timeoutSeconds: settings.timeoutSeconds,
    }),
  );
  return {
    rate: requests / run.seconds,
    seconds: run.seconds,
    requests,
    wrongVerdicts: run.wrongVerdicts,
    wrongReplies: run.wrongReplies,
    lost: run.lost,
    recorded: ledger.attempts() - attemptsBefore,
    events: ledger.events() - eventsBefore,
    samples: run.samples,
    cpu,
    counted: true,
  };
}

async function acctRun(
  target: RadiusTarget,
  tag: string,
  sessions: number,
  work: Workspace,
  ledger: Ledger,
  settings: Settings,
): Promise<AcctRound> {
  const file = path.join(work.dir, `acct-${tag}.txt`);
  fs.writeFileSync(file, acctFile(tag, USERS, sessions));
  const packets = sessions * 2;
  const { run, cpu } = await measured(target, packets, settings, () =>
    runRadclient({
      port: target.acctPort,
      kind: "acct",
      file,
      repeat: 1,
      parallel: settings.parallel,
      expected: packets,
      timeoutSeconds: settings.timeoutSeconds,
    }),
  );
  fs.rmSync(file);
  const stored = ledger.sessions(tag);
  return {
    rate: packets / run.seconds,
    seconds: run.seconds,
    packets,
    lost: run.lost,
    missing: sessions - stored.rows + (sessions - stored.stopped),
    samples: run.samples,
    cpu,
    counted: true,
  };
}

function describeCpu(cpu: CpuUse, unit: string): string {
  const noise = cpu.otherCores >= 0.1 ? `; other processes ${cpu.otherCores.toFixed(2)} cores` : "";
  return (
    `server CPU ${cpu.serverUsPerRequest.toFixed(0)} µs/${unit} (${cpu.serverCores.toFixed(2)} cores), ` +
    `radclient ${cpu.radclientCores.toFixed(2)} cores${noise}`
  );
}

function describeAuth(r: AuthRound, target: RadiusTarget): string {
  const recorded = target.recordsAttempts || r.recorded > 0 ? `, ${r.recorded} attempts recorded` : "";
  const events = target.id === "wisp" ? `, ${r.events} events` : "";
  const wrong = r.wrongVerdicts + r.wrongReplies + r.lost;
  const detail = wrong
    ? ` [${r.wrongVerdicts} wrong verdicts, ${r.wrongReplies} wrong replies, ${r.lost} lost; ` +
      `${r.samples[0] ?? ""}]`
    : "";
  return (
    `${r.rate.toFixed(0)} auth/s (${r.requests} in ${r.seconds.toFixed(2)} s${recorded}${events}; ` +
    `${describeCpu(r.cpu, "request")})${detail}`
  );
}

function describeAcct(r: AcctRound): string {
  const problems =
    r.lost + r.missing ? ` [${r.lost} lost, ${r.missing} rows missing; ${r.samples[0] ?? ""}]` : "";
  return (
    `${r.rate.toFixed(0)} acct packets/s (${r.packets} in ${r.seconds.toFixed(2)} s; ` +
    `${describeCpu(r.cpu, "packet")})${problems}`
  );
}

// --- output ------------------------------------------------------------------------------------

function machine() {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpu: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    freeradius: freeradiusVersion(),
  };
}

function printTable(results: ServerResult[]): string[] {
  const header = [
    "server",
    "auth/s",
    "CPU µs/req",
    "wrong verdicts",
    "auth lost",
    "recorded",
    "acct/s",
    "CPU µs/pkt",
    "acct lost",
  ];
  const rows = results.map((r) => {
    const requests = r.auth.rounds.reduce((sum, x) => sum + x.requests, 0);
    const recorded = r.auth.rounds.reduce((sum, x) => sum + x.recorded, 0);
    return [
      r.name,
      r.auth.rounds.length ? r.auth.median.toFixed(0) : "-",
      r.auth.rounds.length ? r.auth.cpuUsPerRequest.toFixed(0) : "-",
      r.auth.rounds.length ? String(r.auth.wrongVerdicts) : "-",
      r.auth.rounds.length ? String(r.auth.lost) : "-",
      r.auth.rounds.length ? `${recorded}/${requests}` : "-",
      r.acct?.rounds.length ? r.acct.median.toFixed(0) : "-",
      r.acct?.rounds.length ? r.acct.cpuUsPerPacket.toFixed(0) : "-",
      r.acct?.rounds.length ? String(r.acct.lost + r.acct.missing) : "-",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((l) => l[i]!.length)));
  const format = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ");
  return [format(header), widths.map((w) => "-".repeat(w)).join("-|-"), ...rows.map(format)];
}

async function main(): Promise<void> {
  const settings = readSettings();
  installExitHandlers();
  const wantsFreeRadius = settings.servers.some((s) => s !== "wisp");
  const unavailable = wantsFreeRadius ? freeradiusUnavailable() : null;
  if (unavailable) throw new BenchError(`${unavailable}; run with --servers wisp to measure Wisp alone`);
  if (settings.cpuProfDir) fs.mkdirSync(settings.cpuProfDir, { recursive: true });

  const dir = makeTempDir(settings.dir, "run");
  const dataDir = path.join(dir, "data");
  const databaseFile = path.join(dataDir, "wisp.db");
  console.log(`seeding ${USERS} users (every 4th in group ${GROUP}) and a network for 127.0.0.1 in ${dir}`);
  await seed(dataDir);

  const files = authFiles(USERS, settings.filePackets);
  const repeat = Math.max(1, Math.round(settings.requests / files.packets));
  const warmRepeat = Math.max(1, Math.round(settings.warmup / files.packets));
  const work: Workspace = {
    dir,
    authRequests: path.join(dir, "auth-requests.txt"),
    filterFor: new Map(),
    perFile: files,
  };
  fs.writeFileSync(work.authRequests, files.requests);

  const targets: RadiusTarget[] = [];
  const results = new Map<string, ServerResult>();
  // Wisp as `npm start` runs it: the compiled dist/main.js (tsx's wrappers cost CPU on every packet).
  if (settings.servers.includes("wisp")) buildDist();
  for (const id of settings.servers) {
    const target =
      id === "wisp"
        ? await startWisp(dataDir, settings.cpuProfDir, { script: "dist/main.js" })
        : await startFreeRadius({ parentDir: dir, databaseFile, postAuthLogging: id === "freeradius-log" });
    targets.push(target);
    const withMa = await probe(target);
    const filter = path.join(dir, `auth-filter-${id}.txt`);
    fs.writeFileSync(filter, files.filter(withMa));
    work.filterFor.set(id, filter);
    results.set(id, {
      id,
      name: target.name,
      auth: { median: 0, cpuUsPerRequest: 0, wrongVerdicts: 0, wrongReplies: 0, lost: 0, rounds: [] },
      // Accounting is the same configuration with and without post-auth logging: measured once.
      acct:
        id === "freeradius-nolog" ? null : { median: 0, cpuUsPerPacket: 0, lost: 0, missing: 0, rounds: [] },
    });
    console.log(`${target.name}: auth port ${target.authPort}, acct port ${target.acctPort}; probe passed`);
  }
  const acctTargets = targets.filter((t) => results.get(t.id)?.acct);

  const ledger = new Ledger(databaseFile);
  try {
    const doAuth = settings.only !== "acct";
    const doAcct = settings.only !== "auth";
    console.log(
      `warm-up: ${files.packets * warmRepeat} Access-Requests` +
        `${doAcct ? " and 200 accounting sessions" : ""} per server`,
    );
    for (const target of targets) {
      if (doAuth) await authRun(target, work, ledger, settings, warmRepeat);
      if (doAcct && results.get(target.id)?.acct) {
        await acctRun(target, `warm-${target.id}`, 200, work, ledger, settings);
      }
    }
    for (let round = 0; round < settings.rounds; round++) {
      const label = (target: RadiusTarget, attempt: number) =>
        `round ${round + 1}/${settings.rounds}${attempt > 1 ? ` (again, ${attempt})` : ""} ${target.name}`;
      if (doAuth) {
        for (const target of rotate(targets, round)) {
          const rounds = results.get(target.id)!.auth.rounds;
          await untilQuiet(settings, async (attempt) => {
            await pause(500);
            const r = await authRun(target, work, ledger, settings, repeat);
            rounds.push(r);
            console.log(`${label(target, attempt)}: ${describeAuth(r, target)}`);
            return r;
          });
        }
      }
      if (doAcct) {
        for (const target of rotate(acctTargets, round)) {
          const rounds = results.get(target.id)!.acct!.rounds;
          await untilQuiet(settings, async (attempt) => {
            await pause(500);
            const tag = `r${round + 1}-${attempt}-${target.id}`;
            const r = await acctRun(target, tag, settings.sessions, work, ledger, settings);
            rounds.push(r);
            console.log(`${label(target, attempt)}: ${describeAcct(r)}`);
            return r;
          });
        }
      }
    }
  } finally {
    ledger.close();
    for (const target of targets) await target.stop();
  }

  for (const result of results.values()) {
    const a = result.auth;
    const counted = a.rounds.filter((r) => r.counted);
    a.median = median(counted.map((r) => r.rate));
    a.cpuUsPerRequest = median(counted.map((r) => r.cpu.serverUsPerRequest));
    a.wrongVerdicts = a.rounds.reduce((sum, r) => sum + r.wrongVerdicts, 0);
    a.wrongReplies = a.rounds.reduce((sum, r) => sum + r.wrongReplies, 0);
    a.lost = a.rounds.reduce((sum, r) => sum + r.lost, 0);
    if (result.acct) {
      const c = result.acct;
      const countedAcct = c.rounds.filter((r) => r.counted);
      c.median = median(countedAcct.map((r) => r.rate));
      c.cpuUsPerPacket = median(countedAcct.map((r) => r.cpu.serverUsPerRequest));
      c.lost = c.rounds.reduce((sum, r) => sum + r.lost, 0);
      c.missing = c.rounds.reduce((sum, r) => sum + r.missing, 0);
    }
  }
  report([...results.values()], settings, files, repeat);
}

function report(
  results: ServerResult[],
  settings: Settings,
  files: { packets: number; accepts: number; rejects: number },
  repeat: number,
): void {
  const byId = (id: ServerId) => results.find((r) => r.id === id);
  const wisp = byId("wisp");
  const nolog = byId("freeradius-nolog");
  const logged = byId("freeradius-log");
  const ratio = (other: ServerResult | undefined) =>
    wisp?.auth.rounds.length && other?.auth.rounds.length ? wisp.auth.median / other.auth.median : null;
  const ratioNoLog = ratio(nolog);
  const ratioLog = ratio(logged);
  const lines = printTable(results);
  lines.push(
    "(medians of undisturbed runs; CPU: the server process's CPU time per request/packet, all threads;",
    " wrong verdicts, lost and recorded: every run, disturbed ones included)",
    "",
  );
  if (ratioNoLog !== null)
    lines.push(
      `Wisp / FreeRADIUS-without-logging: ${ratioNoLog.toFixed(2)}x (target >= ${TARGET_AUTH_RATIO}x)`,
    );
  if (ratioLog !== null) lines.push(`Wisp / FreeRADIUS-with-logging:    ${ratioLog.toFixed(2)}x`);

  const checks: { name: string; pass: boolean }[] = [];
  if (wisp?.auth.rounds.length) {
    const allRecorded = wisp.auth.rounds.every((r) => r.recorded === r.requests && r.events === r.requests);
    if (ratioNoLog !== null) {
      checks.push({
        name: `Wisp auth >= ${TARGET_AUTH_RATIO}x FreeRADIUS-without-logging`,
        pass: ratioNoLog >= TARGET_AUTH_RATIO,
      });
    }
    checks.push(
      { name: "Wisp: zero wrong verdicts, none lost", pass: wisp.auth.wrongVerdicts + wisp.auth.lost === 0 },
      { name: "Wisp: a radpostauth row and an event per attempt", pass: allRecorded },
    );
  }
  if (wisp?.acct?.rounds.length) {
    checks.push({
      name: `Wisp accounting >= ${TARGET_ACCT_RATE} packets/s, none lost`,
      pass: wisp.acct.median >= TARGET_ACCT_RATE && wisp.acct.lost + wisp.acct.missing === 0,
    });
  }
  for (const check of checks) lines.push(`target: ${check.name}: ${check.pass ? "PASS" : "BELOW"}`);

  const info = machine();
  lines.push(
    "",
    `node ${info.node} | CPU ${info.cpu} | ${info.cores} cores | ${info.freeradius} | ` +
      `radclient (${RADCLIENT_PRIORITY} priority) -p ${settings.parallel}` +
      ` -r 1 -t ${settings.timeoutSeconds}: auth ${files.packets}-request file x -c ${repeat}` +
      ` (${files.rejects} of ${files.packets} wrong password/unknown user), accounting ${settings.sessions}` +
      ` Starts then Stops; ${settings.rounds} alternating rounds, medians; ${USERS} users`,
  );
  console.log();
  for (const line of lines) console.log(line);

  const json = {
    date: new Date().toISOString(),
    ...info,
    settings: {
      rounds: settings.rounds,
      requestsPerRun: files.packets * repeat,
      filePackets: files.packets,
      repeat,
      wrongPerFile: files.rejects,
      parallel: settings.parallel,
      acctSessionsPerRun: settings.sessions,
      warmup: settings.warmup,
      users: USERS,
      timeoutSeconds: settings.timeoutSeconds,
      databaseDir: settings.dir,
    },
    results,
    ratios: { wispOverFreeradiusNoLogging: ratioNoLog, wispOverFreeradiusWithLogging: ratioLog },
    targets: checks,
    table: lines,
  };
  writeResults("radius", json);
}

runBench(main);

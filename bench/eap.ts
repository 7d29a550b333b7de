// EAP benchmark (issue 14 point 9, issue 32 points 1-2): full PEAP (inner EAP-MSCHAPv2), EAP-TTLS
// (inner PAP) and EAP-TLS (client certificates of the same CA, RSA 2048 or P-256 as the server's) logins per second with K parallel eapol_test processes, against Wisp's embedded
// server and two setups of FreeRADIUS 3.2's rlm_eap: on the same SQLite database with post-auth
// logging (deploy/freeradius/configure.sh with EAP_CERT_FILE...), and its fastest setup, the users
// in rlm_files and no logging modules (bench/freeradius-files.ts). Servers take turns within each
// round (the order rotates by round), at the same certificate, fragment size (1024), TLS version
// (1.2) and default method (PEAP). Prints logins/s, the server's CPU per login (utime+stime of its process from
// /proc; also its main thread alone), RADIUS round trips per login and wrong verdicts; per run also
// the eapol_test processes' and this process's CPU per login and the machine's idle share (the
// load generator takes most of the machine: see docs/notes-eap.md, session 6); writes
// bench/results/eap.json.
// Every 10th login carries a wrong password (EAP-TLS: an identity not the certificate's); a
// reject is its right verdict.
//   BENCH_EAP_METHODS (PEAP,TTLS,TLS)  the methods measured
//   BENCH_EAP_PARALLEL (16)  eapol_test processes at once
//   BENCH_EAP_LOGINS (160)   logins per method, server and round
//   BENCH_EAP_ROUNDS (4)     rounds; the server order alternates
//   BENCH_EAP_WARMUP (1000)  logins per method and server before the first round: V8 goes on
//                            compiling Wisp's hot code on its own threads through about the
//                            first 1,000 logins (8% of its CPU in the rounds after 400)
//   BENCH_EAP_KEY (rsa)      rsa (RSA 2048, as the reference figures) or ec (P-256)
//   BENCH_EAP_FREERADIUS (files,sql)  the FreeRADIUS setups to run beside Wisp
//   BENCH_EAP_TLS_WORKERS    e.g. 0,1: one Wisp per EAP_TLS_WORKERS value (wisp-tls0, wisp-tls1),
//                            measured in the same rounds; unset: one Wisp with its default
//   BENCH_EAP_TLS_ENGINES    e.g. node,openssl: one Wisp per EAP_TLS_ENGINE value (wisp-node,
//                            wisp-openssl), in the same rounds
//   BENCH_EAP_BASELINE_DIST  another build's dist/ (a copy inside this checkout, with its
//                            package.json beside it, so that it finds node_modules): one more
//                            Wisp, wisp-baseline, in the same rounds
//   BENCH_EAP_TASKSET        e.g. 0/0,1: one Wisp pinned to each CPU list (taskset), wisp-cpu0...
//   BENCH_EAP_NODE_OPTIONS   e.g. "|--max-semi-space-size=64": one Wisp per NODE_OPTIONS value,
//                            wisp-opt0, wisp-opt1... (an empty one: none), in the same rounds
//   BENCH_CPU_PROF=dir       write Wisp's --cpu-prof profile there
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fingerprint } from "../src/core/certs/pem.ts";
import { CertsRepo } from "../src/core/certs/repo.ts";
import { normalizeSerial } from "../src/core/certs/rules.ts";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { eapolTest, eapolTestUnavailable } from "../test/support/eapol.ts";
import { freeradiusUnavailable } from "../test/support/freeradius-lab.ts";
import { type Certificates, makeCertificates } from "./eap-certs.ts";
import { startFreeRadiusFiles } from "./freeradius-files.ts";
import { buildDist } from "./processes.ts";
import { median, radiusBenchUser, SECRET, seed } from "./radius-load.ts";
import {
  BenchError,
  childrenTicks,
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

type Method = "PEAP" | "TTLS" | "TLS";
const ALL_METHODS: Method[] = ["PEAP", "TTLS", "TLS"];
/** Bench users with a client certificate (EAP-TLS logins cycle through them). */
const TLS_USERS = 16;

/** BENCH_EAP_METHODS (PEAP,TTLS,TLS): the methods measured. */
function methods(): Method[] {
  const raw = process.env.BENCH_EAP_METHODS || ALL_METHODS.join(",");
  const chosen = raw.split(",").map((m) => m.trim().toUpperCase());
  for (const m of chosen) {
    if (!ALL_METHODS.includes(m as Method)) throw new BenchError("BENCH_EAP_METHODS lists PEAP, TTLS, TLS");
  }
  return chosen as Method[];
}

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new BenchError(`${name} must be a positive integer`);
  return value;
}

/**
 * Wisp logs in with a client certificate only when it issued it for the account (serial and
 * fingerprint in client_certificates, core/certs): the bench's openssl-made ones are entered as
 * if Wisp had issued them. FreeRADIUS only checks the chain and the CN (check_cert_cn).
 */
async function registerClientCertificates(dataDir: string, clients: { cert: string }[]): Promise<void> {
  const database = openDatabase({ dataDir });
  try {
    const core = createCore(database, { publicUrl: "http://localhost" });
    const account = await core.accounts.resolve(undefined);
    const repo = new CertsRepo(database.db);
    for (const [i, client] of clients.entries()) {
      const cert = new X509Certificate(fs.readFileSync(client.cert));
      await repo.insertClient({
        account_id: account.id,
        serial: normalizeSerial(cert.serialNumber)!,
        username: radiusBenchUser(i + 1).username,
        not_before: new Date(cert.validFrom).toISOString(),
        not_after: new Date(cert.validTo).toISOString(),
        fingerprint: fingerprint(cert.raw),
        created: new Date().toISOString(),
      });
    }
  } finally {
    await database.close();
  }
}

/** User + system CPU ticks of the process's main thread (the task whose id is the pid). */
function mainThreadTicks(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/**
 * eapol_test's network block for login k. PEAP and TTLS: user 1 + k % 1000, a wrong password when
 * not `good`. EAP-TLS: the certificate of user 1 + k % TLS_USERS; when not `good` the identity
 * is another user's than the certificate's (both servers reject it after the handshake, as for a
 * wrong password: FreeRADIUS's check_cert_cn, Wisp's identity check).
 */
function network(method: Method, k: number, good: boolean, certs: Certificates): Record<string, string> {
  if (method === "TLS") {
    const n = k % TLS_USERS;
    const client = certs.clients[n]!;
    const identity = radiusBenchUser(1 + (good ? n : (n + 1) % TLS_USERS)).username;
    return {
      identity,
      client_cert: client.cert,
      private_key: client.key,
      ca_cert: certs.ca,
      domain_match: "radius.test",
    };
  }
  const user = radiusBenchUser(1 + (k % 1000));
  return {
    identity: user.username,
    anonymous_identity: "anonymous@bench.test",
    password: good ? user.password : "not-the-password",
    phase2: method === "PEAP" ? "autheap=MSCHAPV2" : "auth=PAP",
    ca_cert: certs.ca,
    domain_match: "radius.test",
  };
}

/** User + system CPU ticks of every thread of the process, by thread id. */
function threadTicks(pid: number): Map<number, number> {
  const ticks = new Map<number, number>();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks.set(Number(tid), Number(fields[11]) + Number(fields[12]));
    }
  } catch {
    // The process or a thread ended meanwhile: what was read so far.
  }
  return ticks;
}

/**
 * The CPU ticks of the threads other than the main one during a run, split: the busiest
 * thread (for Wisp with one TLS worker, that worker: see the run's figures) and the rest (V8's
 * compiler and GC threads, libuv's pool; FreeRADIUS: its other threads).
 */
function otherThreads(pid: number, before: Map<number, number>, after: Map<number, number>) {
  const deltas = [...after]
    .filter(([tid]) => tid !== pid)
    .map(([tid, ticks]) => ticks - (before.get(tid) ?? 0))
    .sort((a, b) => b - a);
  const busiest = deltas[0] ?? 0;
  return { busiest, rest: deltas.slice(1).reduce((sum, d) => sum + d, 0) };
}

interface Run {
  server: string;
  method: Method;
  round: number;
  logins: number;
  seconds: number;
  loginsPerSecond: number;
  cpuMsPerLogin: number;
  /** Of cpuMsPerLogin, the part of the main thread (for Wisp the rest is V8's compiler and GC). */
  mainThreadCpuMsPerLogin: number;
  /** The busiest other thread (Wisp: its TLS worker when there is one). */
  busiestThreadCpuMsPerLogin: number;
  /** The remaining threads (Wisp: V8's compiler and GC threads, libuv's pool, other TLS workers). */
  otherThreadsCpuMsPerLogin: number;
  roundTripsPerLogin: number;
  /** Share of the machine's CPU time left idle during the run (0: the load generator is the limit). */
  machineIdle: number;
  /** CPU of the eapol_test processes per login: the rest of what one login costs the machine. */
  clientCpuMsPerLogin: number;
  /** CPU of this process per login (starting eapol_test, reading its output). */
  harnessCpuMsPerLogin: number;
  wrong: number;
  timeouts: number;
}

async function measure(
  target: RadiusTarget,
  method: Method,
  round: number,
  logins: number,
  parallel: number,
  certs: Certificates,
): Promise<Run> {
  let next = 0;
  let wrong = 0;
  let timeouts = 0;
  let requests = 0;
  const ticksBefore = processTicks(target.pid) ?? 0;
  const mainBefore = mainThreadTicks(target.pid) ?? 0;
  const threadsBefore = threadTicks(target.pid);
  const machineBefore = machineTicks();
  const clientBefore = childrenTicks();
  const harnessBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < logins) {
        const k = next++;
        const good = k % 10 !== 9;
        const result = await eapolTest({
          port: target.authPort,
          secret: SECRET,
          timeoutSeconds: 10,
          raw: { eap: method },
          network: network(method, k, good, certs),
        });
        requests += result.accessRequests;
        if (result.code !== 0 && result.code !== 252) timeouts++;
        const right = good ? result.success && result.mppeOk : result.code === 252;
        if (!right) wrong++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const ticks = (processTicks(target.pid) ?? ticksBefore) - ticksBefore;
  const mainTicks = (mainThreadTicks(target.pid) ?? mainBefore) - mainBefore;
  const threads = otherThreads(target.pid, threadsBefore, threadTicks(target.pid));
  const msPerLogin = (t: number) => Number(((t * 1000) / TICKS_PER_SECOND / logins).toFixed(2));
  const machineAfter = machineTicks();
  const harness = process.cpuUsage(harnessBefore);
  const machineTotal = machineAfter.total - machineBefore.total;
  return {
    server: target.id,
    method,
    round,
    logins,
    seconds: Number(seconds.toFixed(2)),
    loginsPerSecond: Number((logins / seconds).toFixed(1)),
    cpuMsPerLogin: Number(((ticks * 1000) / TICKS_PER_SECOND / logins).toFixed(2)),
    mainThreadCpuMsPerLogin: msPerLogin(mainTicks),
    busiestThreadCpuMsPerLogin: msPerLogin(threads.busiest),
    otherThreadsCpuMsPerLogin: msPerLogin(threads.rest),
    roundTripsPerLogin: Number((requests / logins).toFixed(2)),
    machineIdle: Number(
      (1 - (machineAfter.busy - machineBefore.busy) / Math.max(1, machineTotal)).toFixed(3),
    ),
    harnessCpuMsPerLogin: Number(((harness.user + harness.system) / 1000 / logins).toFixed(2)),
    clientCpuMsPerLogin: Number(
      (((childrenTicks() - clientBefore) * 1000) / TICKS_PER_SECOND / logins).toFixed(2),
    ),
    wrong,
    timeouts,
  };
}

/** The FreeRADIUS setups asked for in BENCH_EAP_FREERADIUS (files, sql, or both). */
function freeradiusSetups(): ("files" | "sql")[] {
  const raw = process.env.BENCH_EAP_FREERADIUS || "files,sql";
  const setups = raw.split(",").map((s) => s.trim());
  for (const s of setups) {
    if (s !== "files" && s !== "sql") throw new BenchError("BENCH_EAP_FREERADIUS lists files and/or sql");
  }
  return setups as ("files" | "sql")[];
}

/** One Wisp server of the run: its id's suffix, its settings, the CPUs it is pinned to. */
interface WispVariant {
  suffix: string;
  env: Record<string, string>;
  cpus?: string;
  /** Another build's main.js (BENCH_EAP_BASELINE_DIST); else this checkout's dist/main.js. */
  script?: string;
}

/** Each Wisp of `variants` once per value of a knob (the knob unset: as they are). */
function times(variants: WispVariant[], values: WispVariant[] | undefined): WispVariant[] {
  if (!values) return variants;
  return variants.flatMap((v) =>
    values.map((w) => ({ suffix: v.suffix + w.suffix, env: { ...v.env, ...w.env }, cpus: w.cpus ?? v.cpus })),
  );
}

/**
 * The Wisp servers measured in the same rounds, one per combination of the knobs set:
 * - BENCH_EAP_TLS_WORKERS: EAP_TLS_WORKERS values, comma-separated (ids wisp-tls<N>);
 * - BENCH_EAP_TLS_ENGINES: EAP_TLS_ENGINE values, comma-separated (ids wisp-openssl, wisp-node);
 * - BENCH_EAP_TASKSET: CPU lists separated by "/" (e.g. 0/0,1), one Wisp pinned to each (taskset,
 *   ids wisp-cpu<list>): logins/s against the cores Wisp may use;
 * - BENCH_EAP_NODE_OPTIONS: NODE_OPTIONS values separated by "|" (an empty one: none; ids
 *   wisp-opt<index>): an A/B of a V8 or node flag.
 * None set: one Wisp with its defaults.
 */
function wispVariants(): WispVariant[] {
  const list = (name: string, separator: string) => process.env[name]?.split(separator).map((v) => v.trim());
  const workers = list("BENCH_EAP_TLS_WORKERS", ",");
  if (workers?.some((v) => !/^\d+$/.test(v))) throw new BenchError("BENCH_EAP_TLS_WORKERS lists integers");
  const engines = list("BENCH_EAP_TLS_ENGINES", ",");
  if (engines?.some((v) => v !== "openssl" && v !== "node"))
    throw new BenchError("BENCH_EAP_TLS_ENGINES lists openssl and/or node");
  const cpus = list("BENCH_EAP_TASKSET", "/");
  if (cpus?.some((v) => !/^\d+([,-]\d+)*$/.test(v)))
    throw new BenchError("BENCH_EAP_TASKSET lists CPU lists, e.g. 0/0,1");
  const options = process.env.BENCH_EAP_NODE_OPTIONS?.split("|").map((v) => v.trim());
  let variants: WispVariant[] = [{ suffix: "", env: {} }];
  variants = times(
    variants,
    workers?.map((n) => ({ suffix: `-tls${n}`, env: { EAP_TLS_WORKERS: n } })),
  );
  variants = times(
    variants,
    engines?.map((e) => ({ suffix: `-${e}`, env: { EAP_TLS_ENGINE: e } })),
  );
  variants = times(
    variants,
    cpus?.map((c) => ({ suffix: `-cpu${c}`, env: {}, cpus: c })),
  );
  variants = times(
    variants,
    options?.map((o, index): WispVariant => ({ suffix: `-opt${index}`, env: o ? { NODE_OPTIONS: o } : {} })),
  );
  const baseline = process.env.BENCH_EAP_BASELINE_DIST;
  if (!baseline) return variants;
  const script = path.resolve(baseline, "main.js");
  if (!fs.existsSync(script)) throw new BenchError(`BENCH_EAP_BASELINE_DIST: no main.js in ${baseline}`);
  return [...variants, { suffix: "-baseline", env: {}, script }];
}

/** Totals of a server's runs of one method (sums over rounds: what the table quotes). */
function totals(list: Run[]) {
  const logins = list.reduce((s, r) => s + r.logins, 0);
  const seconds = list.reduce((s, r) => s + r.seconds, 0);
  const weighted = (f: (r: Run) => number) =>
    Number((list.reduce((s, r) => s + f(r) * r.logins, 0) / logins).toFixed(2));
  return {
    loginsPerSecond: Number((logins / seconds).toFixed(1)),
    cpuMsPerLogin: weighted((r) => r.cpuMsPerLogin),
    mainThreadCpuMsPerLogin: weighted((r) => r.mainThreadCpuMsPerLogin),
    busiestThreadCpuMsPerLogin: weighted((r) => r.busiestThreadCpuMsPerLogin),
    otherThreadsCpuMsPerLogin: weighted((r) => r.otherThreadsCpuMsPerLogin),
    roundTripsPerLogin: weighted((r) => r.roundTripsPerLogin),
    wrong: list.reduce((s, r) => s + r.wrong, 0),
  };
}

/**
 * Wisp against one FreeRADIUS setup: the ratio of the totals, and the ratio round by round (each
 * round's runs are minutes apart at most, so the machine's load moves less within a round than
 * across the whole bench): its median and range say how noisy the figure is.
 */
function compare(runs: Run[], method: Method, wisp: string, other: string) {
  const of = (server: string) => runs.filter((r) => r.method === method && r.server === server);
  const w = totals(of(wisp));
  const f = totals(of(other));
  const perRound = of(wisp).flatMap((mine) => {
    const theirs = of(other).find((r) => r.round === mine.round);
    return theirs
      ? [
          {
            cpu: mine.cpuMsPerLogin / theirs.cpuMsPerLogin,
            rate: mine.loginsPerSecond / theirs.loginsPerSecond,
          },
        ]
      : [];
  });
  const spread = (values: number[]) => ({
    median: Number(median(values).toFixed(2)),
    min: Number(Math.min(...values).toFixed(2)),
    max: Number(Math.max(...values).toFixed(2)),
  });
  return {
    wisp,
    against: other,
    freeradius: f,
    cpuRatio: Number((w.cpuMsPerLogin / f.cpuMsPerLogin).toFixed(2)),
    throughputRatio: Number((w.loginsPerSecond / f.loginsPerSecond).toFixed(2)),
    cpuRatioPerRound: spread(perRound.map((r) => r.cpu)),
    throughputRatioPerRound: spread(perRound.map((r) => r.rate)),
  };
}

async function startTargets(dir: string, certs: Certificates, dataDir: string) {
  const eapEnv = {
    EAP_CERT_FILE: certs.cert,
    EAP_KEY_FILE: certs.key,
    EAP_CA_FILE: certs.ca,
    EAP_FRAGMENT_SIZE: "1024",
  };
  // The compiled server, as `npm start` runs it (tsx's name-keeping wrappers cost CPU on every
  // packet); the EAP_* files are its certificate source (core/certs).
  buildDist();
  const targets: RadiusTarget[] = [];
  for (const variant of wispVariants()) {
    const wisp = await startWisp(dataDir, process.env.BENCH_CPU_PROF || undefined, {
      script: variant.script ?? "dist/main.js",
      env: { ...eapEnv, LOG_LEVEL: "error", ...variant.env },
    });
    // Every thread, and the TLS workers it starts later (they inherit the main thread's set).
    if (variant.cpus !== undefined)
      execFileSync("taskset", ["-a", "-p", "-c", variant.cpus, String(wisp.pid)], { stdio: "ignore" });
    targets.push({ ...wisp, id: wisp.id + variant.suffix });
  }
  for (const setup of freeradiusSetups()) {
    targets.push(
      setup === "files"
        ? await startFreeRadiusFiles(dir, { ...certs, fragmentSize: 1024 })
        : await startFreeRadius({
            parentDir: dir,
            databaseFile: path.join(dataDir, "wisp.db"),
            postAuthLogging: true,
            id: "fr-sql",
            name: "FreeRADIUS rlm_eap + rlm_sql, post-auth logging",
            env: eapEnv,
          }),
    );
  }
  return targets;
}

function printRun(run: Run): void {
  console.log(
    `round ${run.round} ${run.method.padEnd(4)} ${run.server.padEnd(8)} ${run.loginsPerSecond} logins/s, ` +
      `${run.cpuMsPerLogin} ms CPU/login (main thread ${run.mainThreadCpuMsPerLogin}, busiest other ${run.busiestThreadCpuMsPerLogin}, the rest ${run.otherThreadsCpuMsPerLogin}), ${run.roundTripsPerLogin} round trips/login, eapol_test ${run.clientCpuMsPerLogin} ms CPU/login, bench ${run.harnessCpuMsPerLogin} ms, machine ${Math.round(run.machineIdle * 100)}% idle, ${run.wrong} wrong`,
  );
}

async function main(): Promise<void> {
  const missing = freeradiusUnavailable() ?? eapolTestUnavailable();
  if (missing) throw new BenchError(missing);
  installExitHandlers();
  const parallel = setting("BENCH_EAP_PARALLEL", 16);
  const logins = setting("BENCH_EAP_LOGINS", 160);
  const rounds = setting("BENCH_EAP_ROUNDS", 4);
  const warmup = setting("BENCH_EAP_WARMUP", 1000);
  const keyKind = process.env.BENCH_EAP_KEY === "ec" ? "ec" : "rsa";
  const dir = makeTempDir(os.tmpdir(), "eap");
  const certs = makeCertificates(dir, keyKind, TLS_USERS);
  const dataDir = path.join(dir, "data");
  fs.mkdirSync(dataDir);
  console.log(`seeding 1000 users and a network for 127.0.0.1 in ${dataDir}`);
  await seed(dataDir);
  await registerClientCertificates(dataDir, certs.clients);
  const METHODS = methods();
  const targets = await startTargets(dir, certs, dataDir);
  const runs: Run[] = [];
  try {
    // Warm-up, every server alike: SQLite pages, and V8's JIT, which compiles Wisp's hot paths
    // over the first ~1,000 logins (measured per PEAP login: 20 ms of CPU over the first 32,
    // 7.7 ms over the next 160, then 4.5-5 ms; the JIT threads' share fell from 4 ms to 0.5 ms
    // per login; 2026-11-26). A RADIUS server runs warm for days.
    for (const target of targets)
      for (const method of METHODS) await measure(target, method, 0, warmup, parallel, certs);
    for (let round = 1; round <= rounds; round++) {
      // Each server goes first in turn, and Wisp's neighbours change: a load that comes and
      // goes during a round is spread over every server across the rounds.
      const shift = (round - 1) % targets.length;
      const order = [...targets.slice(shift), ...targets.slice(0, shift)];
      if (round % 2 === 0) order.reverse();
      for (const method of METHODS) {
        for (const target of order) {
          const run = await measure(target, method, round, logins, parallel, certs);
          runs.push(run);
          printRun(run);
        }
      }
    }
  } finally {
    for (const target of targets) await target.stop();
  }
  const wisps = targets.filter((t) => t.id.startsWith("wisp")).map((t) => t.id);
  const others = targets.filter((t) => !t.id.startsWith("wisp")).map((t) => t.id);
  const summary = METHODS.map((method) => ({
    method,
    servers: Object.fromEntries(
      targets.map((t) => [t.id, totals(runs.filter((r) => r.method === method && r.server === t.id))]),
    ),
    against: wisps.flatMap((wisp) => others.map((other) => compare(runs, method, wisp, other))),
  }));
  console.log("\nmethod  server      logins/s  CPU ms/login  round trips  wrong");
  for (const s of summary) {
    for (const [name, r] of Object.entries(s.servers)) {
      console.log(
        `${s.method.padEnd(7)} ${name.padEnd(11)} ${String(r.loginsPerSecond).padStart(8)} ${String(r.cpuMsPerLogin).padStart(13)} ${String(r.roundTripsPerLogin).padStart(12)} ${String(r.wrong).padStart(6)}`,
      );
    }
    for (const a of s.against) {
      const c = a.cpuRatioPerRound;
      const t = a.throughputRatioPerRound;
      console.log(
        `${s.method.padEnd(7)} ${a.wisp}/${a.against}: CPU per login ${a.cpuRatio}x (rounds: median ${c.median}x, ${c.min}-${c.max}), ` +
          `logins/s ${a.throughputRatio}x (rounds: median ${t.median}x, ${t.min}-${t.max})`,
      );
    }
  }
  writeResults("eap", {
    date: new Date().toISOString(),
    freeradius: freeradiusVersion(),
    loadAverage: os.loadavg(),
    settings: {
      parallel,
      logins,
      rounds,
      warmup,
      key: keyKind === "rsa" ? "RSA 2048" : "P-256",
      fragmentSize: 1024,
      defaultMethod: "PEAP",
      tls: "1.2",
      servers: targets.map((t) => ({ id: t.id, name: t.name })),
    },
    summary,
    runs,
  });
}

runBench(main);

// LDAP-backed PAP logins per second (issue 30 point 6), all in one run against one slapd:
//   - Wisp, local users (the baseline: no directory involved),
//   - Wisp, directory users with the group cache (group_cache_seconds 300),
//   - Wisp, directory users without it (group_cache_seconds 0: a group search per login),
//   - FreeRADIUS 3.2 rlm_ldap (user search + group search as the service, bind as the user), the anchor.
//
//   node --import tsx bench/ldap.ts [--rounds 3] [--users 500] [--requests 10000] [--parallel 100]
//     [--timeout 10] [--cpu-prof <dir>] [--dir <parent of the temp folder>]
//     [--only wisp-local,wisp-ldap-cache,wisp-ldap-nocache] (the anchor, freeradius-ldap, always runs)
//     [--baseline-dist <dir>] (one more scenario, wisp-baseline-ldap-cache: another build's main.js,
//     a copy of an earlier commit's dist/ with its package.json beside it, inside this checkout so
//     that it finds node_modules; on a copy of the same database: two builds in the same rounds;
//     BENCH_BASELINE_NODE_OPTIONS gives that build node options of its own, e.g. a V8 flag to try)
//
// Each server runs in its own process, as bench/radius.ts runs them: Wisp is the compiled server as
// `npm start` runs it (dist/main.js, built first; tsx's name-keeping wrappers would cost CPU on every
// packet), LOG_LEVEL warn, SQLite in a temp DATA_DIR, seeded before it starts; FreeRADIUS is `freeradius -f`
// (no -X, no debug). Both get the same load: radclient -p <parallel> -r 1 over a file with every
// user once (good passwords), repeated with -c; a warm-up pass before every measured run (Wisp writes
// a shadow user at a directory user's first login, and a changed group_cache_seconds rebuilds the
// directory's client, so its pools and cache start empty). Rounds alternate (the order rotates every
// round) and medians are reported, with the machine's load average and the CPU other processes used
// during each run (this machine is shared: a run with much other CPU is noisy, and said so).
// Each run also shows radclient's CPU per login (it spins while it waits, so a slower server leaves
// it more of the machine) and the server's threads' seconds on a CPU and in the run queue per second:
// Wisp answers RADIUS on one thread, FreeRADIUS on up to 32, and on a busy machine the scheduler
// shares the CPUs by thread.
//
// What each side records per login: Wisp writes a radpostauth row and an event for every attempt
// (batched); this FreeRADIUS site logs nothing per request (no rlm_sql, no detail, auth = no in
// radiusd.conf's log section: only start-up and errors reach radius.log).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { freeUdpPort } from "../test/support/freeradius-lab.ts";
import {
  GROUPS,
  PEOPLE,
  SERVICE_DN,
  SERVICE_PASSWORD,
  startSlapd,
  userDn,
  userLdif,
} from "../test/support/slapd.ts";
import { buildDist } from "./processes.ts";
import { median, RADCLIENT_PRIORITY, runRadclient, SECRET } from "./radius-load.ts";
import {
  BenchError,
  installExitHandlers,
  machineTicks,
  makeTempDir,
  processTicks,
  runBench,
  startWisp,
  stopChild,
  TICKS_PER_SECOND,
  track,
  writeResults,
} from "./radius-servers.ts";

interface Settings {
  rounds: number;
  users: number;
  requests: number;
  parallel: number;
  timeoutSeconds: number;
  cpuProfDir: string | undefined;
  dir: string;
  /** Scenario ids to run (all by default; the anchor always runs, for the ratios). */
  only: string[] | undefined;
  /** Wisp's pool_size: connections per pool (searches, binds) to the one server. */
  poolSize: number;
  /** Another build of Wisp (a dist/ folder) to run beside this one, LDAP users with the group cache. */
  baselineDist: string | undefined;
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string" },
      users: { type: "string" },
      requests: { type: "string" },
      parallel: { type: "string" },
      timeout: { type: "string" },
      "cpu-prof": { type: "string" },
      dir: { type: "string" },
      only: { type: "string" },
      "pool-size": { type: "string" },
      "baseline-dist": { type: "string" },
    },
    strict: true,
  });
  const whole = (name: string, raw: string | undefined, fallback: number) => {
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new BenchError(`--${name} must be a whole number >= 1`);
    return Number(raw);
  };
  return {
    rounds: whole("rounds", values.rounds, 3),
    users: whole("users", values.users, 500),
    requests: whole("requests", values.requests, 10_000),
    parallel: whole("parallel", values.parallel, 100),
    timeoutSeconds: whole("timeout", values.timeout, 10),
    cpuProfDir: values["cpu-prof"] ? path.resolve(values["cpu-prof"]) : undefined,
    dir: path.resolve(values.dir ?? os.tmpdir()),
    only: values.only?.split(",").map((id) => id.trim()),
    poolSize: whole("pool-size", values["pool-size"], 16),
    baselineDist: values["baseline-dist"] ? path.resolve(values["baseline-dist"]) : undefined,
  };
}

const name = (prefix: string, n: number) => `${prefix}${String(n).padStart(5, "0")}`;
const password = (n: number) => `Pw-${n}-x`;

function requestFile(dir: string, prefix: string, users: number): string {
  const lines: string[] = [];
  for (let k = 0; k < users; k++) {
    lines.push(
      `User-Name = "${name(prefix, k)}"\nUser-Password = "${password(k)}"\nNAS-IP-Address = 127.0.0.1\n`,
    );
  }
  const file = path.join(dir, `${prefix}.txt`);
  fs.writeFileSync(file, lines.join("\n"));
  return file;
}

/** Wisp's database before it starts: a network, the mapped group, local users in it, the directory, a key. */
async function seedWisp(dataDir: string, settings: Settings, ldapUrl: string): Promise<string> {
  const { users } = settings;
  const database = openDatabase({ dataDir });
  try {
    await migrate(database);
    const core = createCore(database, { publicUrl: "http://localhost", dataDir });
    const account = await core.accounts.resolve(undefined);
    await core.networks.create(account.id, { name: "bench", nas_ip: "127.0.0.1", secret: SECRET });
    // Local users are in the group the directory's users are mapped to: the same SQL per login.
    const group = await core.groups.create(account.id, { name: "wifi-users" });
    for (let n = 0; n < users; n++) {
      const user = await core.users.create(account.id, { username: name("local", n), password: password(n) });
      await core.groups.addMember(account.id, group.id, { userid: user.id });
    }
    await core.directories.create(account.id, {
      name: "bench",
      servers: [ldapUrl],
      bind_dn: SERVICE_DN,
      bind_password: SERVICE_PASSWORD,
      user_base: PEOPLE,
      user_filter: "(objectClass=inetOrgPerson)",
      group_base: GROUPS,
      group_filter: "(objectClass=groupOfNames)",
      group_mappings: [{ directory_group: "wifi", group: "wifi-users" }],
      group_cache_seconds: 300,
      pool_size: settings.poolSize,
    });
    const { key } = await core.keys.create(account, { name: "ldap bench" });
    return key;
  } finally {
    await database.close();
  }
}

interface Target {
  pid: number;
  port: number;
  stop(): Promise<void>;
}

/**
 * FreeRADIUS 3.2 with rlm_ldap only: search as the service, a group search (cacheable_name: the
 * user's group names fetched once per request), bind as the user. Connection pool: 8 connections
 * kept open, up to 32 (the thread pool's max_servers), never recycled; no debug logging.
 */
async function startFreeRadiusLdap(dir: string, ldapPort: number): Promise<Target> {
  const raddb = path.join(dir, "raddb");
  fs.cpSync("/etc/freeradius/3.0", raddb, { recursive: true, dereference: false });
  for (const site of fs.readdirSync(path.join(raddb, "sites-enabled")))
    fs.rmSync(path.join(raddb, "sites-enabled", site));
  const port = await freeUdpPort();
  fs.writeFileSync(
    path.join(raddb, "sites-enabled", "ldap"),
    `server ldap {
	listen {
		type = auth
		ipaddr = 127.0.0.1
		port = ${port}
	}
	authorize {
		ldap
		if ((ok || updated) && User-Password) {
			update control {
				&Auth-Type := ldap
			}
		}
	}
	authenticate {
		Auth-Type LDAP {
			ldap
		}
	}
}
`,
  );
  // No EAP here (its stock config wants the inner-tunnel site): PAP only.
  fs.rmSync(path.join(raddb, "mods-enabled", "eap"), { force: true });
  fs.rmSync(path.join(raddb, "mods-enabled", "ldap"), { force: true });
  fs.writeFileSync(
    path.join(raddb, "mods-enabled", "ldap"),
    `ldap {
	server = "127.0.0.1"
	port = ${ldapPort}
	identity = "${SERVICE_DN}"
	password = ${SERVICE_PASSWORD}
	base_dn = "${PEOPLE}"
	user {
		base_dn = "${PEOPLE}"
		filter = "(&(objectClass=inetOrgPerson)(uid=%{%{Stripped-User-Name}:-%{User-Name}}))"
		scope = "sub"
	}
	group {
		base_dn = "${GROUPS}"
		filter = "(objectClass=groupOfNames)"
		scope = "sub"
		name_attribute = cn
		membership_filter = "(member=%{control:Ldap-UserDn})"
		cacheable_name = "yes"
		cacheable_dn = "no"
	}
	options {
		chase_referrals = no
		res_timeout = 3
		srv_timelimit = 3
		net_timeout = 2
	}
	pool {
		start = 8
		min = 8
		max = 32
		spare = 8
		uses = 0
		retry_delay = 1
		lifetime = 0
		idle_timeout = 60
	}
}
`,
  );
  fs.writeFileSync(
    path.join(raddb, "clients.conf"),
    `client bench {\n\tipaddr = 127.0.0.1\n\tsecret = ${SECRET}\n}\n`,
  );
  for (const d of ["log", "run"]) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const conf = path.join(raddb, "radiusd.conf");
  const text = fs.readFileSync(conf, "utf8");
  // Stock FreeRADIUS answers a reject after 1 s (reject_delay); Wisp at once. auth = no: no line
  // per request in radius.log (the stock default, checked).
  if (!/^\s*auth = no\s*$/m.test(text)) throw new BenchError("radiusd.conf: expected log { auth = no }");
  fs.writeFileSync(
    conf,
    text
      .replace(/^logdir = .*/m, `logdir = ${dir}/log`)
      .replace(/^run_dir = .*/m, `run_dir = ${dir}/run`)
      .replace(/^(\s*)(user|group) = freerad/gm, "$1#$2 = freerad")
      .replace(/^(\s*)reject_delay = 1$/m, "$1reject_delay = 0")
      .replace(/^(\s*)proxy_requests\s*=.*/m, "$1proxy_requests = no"),
  );
  const logFile = path.join(dir, "radius.log");
  const child = track(spawn("freeradius", ["-f", "-d", raddb, "-l", logFile], { stdio: "ignore" }));
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "");
  const deadline = Date.now() + 15_000;
  while (!log().includes("Ready to process requests")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stopChild(child);
      throw new BenchError(`FreeRADIUS (ldap) did not start:\n${log().slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { pid: child.pid ?? 0, port, stop: () => stopChild(child) };
}

interface Scenario {
  id: string;
  label: string;
  target: Target;
  file: string;
  /** Before each run: settings this scenario needs (Wisp's group cache). */
  prepare?: () => Promise<void>;
}

interface RunResult {
  rate: number;
  accepted: number;
  rejected: number;
  lost: number;
  /** The server process's CPU time per login (all threads), µs. */
  serverUsPerLogin: number;
  /** The share of the server's CPU time spent in the kernel (socket reads and writes). */
  serverSystemShare: number;
  /** slapd's CPU time per login, µs. */
  slapdUsPerLogin: number;
  /** radclient's CPU time per login, µs: the load generator's share of the machine. */
  clientUsPerLogin: number;
  /**
   * The server's threads: seconds on a CPU and seconds runnable but waiting for one (the run queue),
   * per second of the run (/proc/<pid>/task/<tid>/schedstat). A single-threaded server that waits
   * much more than it runs is held back by the machine's other work, not by its own CPU per login.
   */
  serverOnCpu: number;
  serverRunQueue: number;
  /** The busiest thread's seconds on a CPU per second (Wisp's main thread, which answers RADIUS). */
  busiestThreadOnCpu: number;
  /** Cores busy on the machine during the run, minus the server's, slapd's and radclient's. */
  otherCores: number;
  load1: number;
  /** The server's resident memory at the end of the run, MiB. */
  serverRssMb: number;
}

/** A process's CPU ticks in the kernel (stime, /proc/<pid>/stat field 15). */
function systemTicks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[12]);
  } catch {
    return 0;
  }
}

/** Each thread's nanoseconds on a CPU and waiting in the run queue (/proc/<pid>/task/<tid>/schedstat). */
function schedByThread(pid: number): Map<string, { onCpu: number; waiting: number }> {
  const threads = new Map<string, { onCpu: number; waiting: number }>();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const [run, wait] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ");
        threads.set(tid, { onCpu: Number(run), waiting: Number(wait) });
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // the process ended
  }
  return threads;
}

/** Per second of the run: the threads' seconds on a CPU and in the run queue, and the busiest thread's. */
function schedDelta(
  before: Map<string, { onCpu: number; waiting: number }>,
  after: Map<string, { onCpu: number; waiting: number }>,
  seconds: number,
): { onCpu: number; waiting: number; busiest: number } {
  let onCpu = 0;
  let waiting = 0;
  let busiest = 0;
  for (const [tid, now] of after) {
    const then = before.get(tid) ?? { onCpu: 0, waiting: 0 };
    onCpu += now.onCpu - then.onCpu;
    waiting += now.waiting - then.waiting;
    busiest = Math.max(busiest, now.onCpu - then.onCpu);
  }
  return { onCpu: onCpu / 1e9 / seconds, waiting: waiting / 1e9 / seconds, busiest: busiest / 1e9 / seconds };
}

async function measure(scenario: Scenario, settings: Settings, slapdPid: number): Promise<RunResult> {
  const { users } = settings;
  const repeat = Math.max(1, Math.round(settings.requests / users));
  const base = {
    port: scenario.target.port,
    kind: "auth" as const,
    file: scenario.file,
    parallel: settings.parallel,
    timeoutSeconds: settings.timeoutSeconds,
  };
  await scenario.prepare?.();
  await runRadclient({ ...base, repeat: 1, expected: users }); // warm-up: pools, shadows, caches
  const load1 = os.loadavg()[0]!;
  const machineBefore = machineTicks();
  const serverBefore = processTicks(scenario.target.pid) ?? 0;
  const systemBefore = systemTicks(scenario.target.pid);
  const slapdBefore = processTicks(slapdPid) ?? 0;
  const schedBefore = schedByThread(scenario.target.pid);
  const run = await runRadclient({ ...base, repeat, expected: users * repeat });
  const schedAfter = schedByThread(scenario.target.pid);
  const sched = schedDelta(schedBefore, schedAfter, run.seconds);
  const serverTicks = (processTicks(scenario.target.pid) ?? serverBefore) - serverBefore;
  const serverSystemTicks = systemTicks(scenario.target.pid) - systemBefore;
  const slapdTicks = (processTicks(slapdPid) ?? slapdBefore) - slapdBefore;
  const machineAfter = machineTicks();
  const elapsedTicks = run.seconds * TICKS_PER_SECOND;
  const clientTicks = run.clientCpuSeconds * TICKS_PER_SECOND;
  return {
    rate: run.accepted / run.seconds,
    accepted: run.accepted,
    rejected: run.rejected,
    lost: run.lost,
    serverUsPerLogin: ((serverTicks / TICKS_PER_SECOND) * 1e6) / (users * repeat),
    serverSystemShare: serverTicks > 0 ? serverSystemTicks / serverTicks : 0,
    slapdUsPerLogin: ((slapdTicks / TICKS_PER_SECOND) * 1e6) / (users * repeat),
    clientUsPerLogin: (run.clientCpuSeconds * 1e6) / (users * repeat),
    serverOnCpu: sched.onCpu,
    serverRunQueue: sched.waiting,
    busiestThreadOnCpu: sched.busiest,
    otherCores: Math.max(
      0,
      (machineAfter.busy - machineBefore.busy - serverTicks - slapdTicks - clientTicks) / elapsedTicks,
    ),
    load1,
    serverRssMb: residentMb(scenario.target.pid),
  };
}

/** A process's resident memory in MiB (VmRSS), 0 once it is gone. */
function residentMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function describe(r: RunResult): string {
  return (
    `${r.rate.toFixed(0).padStart(6)}/s  CPU/login: server ${r.serverUsPerLogin.toFixed(0).padStart(4)} µs` +
    ` (${(r.serverSystemShare * 100).toFixed(0)}% kernel),` +
    ` slapd ${r.slapdUsPerLogin.toFixed(0).padStart(4)} µs, radclient ${r.clientUsPerLogin.toFixed(0).padStart(3)} µs;` +
    ` server threads on CPU ${r.serverOnCpu.toFixed(2)} (busiest ${r.busiestThreadOnCpu.toFixed(2)}),` +
    ` in run queue ${r.serverRunQueue.toFixed(2)}; RSS ${r.serverRssMb.toFixed(0)} MiB` +
    `  (accepted ${r.accepted}, rejected ${r.rejected}, lost ${r.lost}; load ${r.load1.toFixed(2)},` +
    ` other processes ${r.otherCores.toFixed(2)} cores)`
  );
}

/** The --baseline-dist build on a copy of the seeded database (its own writes stay its own). */
async function startBaseline(dist: string, dataDir: string, cpuProfDir: string | undefined) {
  const main = path.join(dist, "main.js");
  if (!fs.existsSync(main)) throw new BenchError(`--baseline-dist: no main.js in ${dist}`);
  const copy = `${dataDir}-baseline`;
  fs.cpSync(dataDir, copy, { recursive: true });
  // BENCH_BASELINE_NODE_OPTIONS: node options for the baseline build alone (an A/B of a V8 flag).
  const options = process.env.BENCH_BASELINE_NODE_OPTIONS;
  return startWisp(copy, cpuProfDir, {
    script: main,
    ...(options ? { env: { NODE_OPTIONS: options } } : {}),
  });
}

async function main() {
  const settings = readSettings();
  installExitHandlers();
  if (settings.cpuProfDir) fs.mkdirSync(settings.cpuProfDir, { recursive: true });
  const dir = makeTempDir(settings.dir, "ldap");
  const { users } = settings;
  let ldif = "";
  for (let n = 0; n < users; n++) ldif += userLdif({ uid: name("ldap", n), password: password(n) });
  ldif += `dn: cn=wifi,${GROUPS}\nobjectClass: groupOfNames\ncn: wifi\n`;
  for (let n = 0; n < users; n++) ldif += `member: ${userDn(name("ldap", n))}\n`;
  fs.writeFileSync(path.join(dir, "users.ldif"), `${ldif}\n`);
  const slapd = await startSlapd({ ldifFile: path.join(dir, "users.ldif") });
  const slapdPid = Number(fs.readFileSync(path.join(slapd.dir, "slapd.pid"), "utf8").trim());
  const dataDir = path.join(dir, "data");
  const stops: (() => Promise<void>)[] = [() => slapd.stop()];
  const results = new Map<string, { label: string; runs: RunResult[] }>();
  try {
    console.log(`seeding ${users} local users and a directory of ${users} users in ${dir}`);
    const key = await seedWisp(dataDir, settings, slapd.url);
    buildDist();
    const wisp = await startWisp(dataDir, settings.cpuProfDir, { script: "dist/main.js" });
    stops.unshift(() => wisp.stop());
    const baseline = settings.baselineDist
      ? await startBaseline(settings.baselineDist, dataDir, settings.cpuProfDir)
      : undefined;
    if (baseline) stops.unshift(() => baseline.stop());
    const freeradius = await startFreeRadiusLdap(path.join(dir, "fr"), slapd.port);
    stops.unshift(() => freeradius.stop());
    const wispTarget: Target = { pid: wisp.pid, port: wisp.authPort, stop: wisp.stop };
    let cacheSeconds = 300;
    // Through the API, as an operator would: the change applies at once in the server's process.
    const setCache = (seconds: number) => async () => {
      if (cacheSeconds === seconds) return;
      const response = await fetch(`http://127.0.0.1:${wisp.httpPort}/api/directories/bench`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ group_cache_seconds: seconds }),
      });
      if (!response.ok) throw new BenchError(`PATCH directory: ${response.status} ${await response.text()}`);
      cacheSeconds = seconds;
    };
    const localFile = requestFile(dir, "local", users);
    const ldapFile = requestFile(dir, "ldap", users);
    const scenarios: Scenario[] = [
      { id: "wisp-local", label: "Wisp, local users", target: wispTarget, file: localFile },
      {
        id: "wisp-ldap-cache",
        label: "Wisp, LDAP users, group cache 300 s",
        target: wispTarget,
        file: ldapFile,
        prepare: setCache(300),
      },
      {
        id: "wisp-ldap-nocache",
        label: "Wisp, LDAP users, no group cache",
        target: wispTarget,
        file: ldapFile,
        prepare: setCache(0),
      },
      ...(baseline
        ? [
            {
              id: "wisp-baseline-ldap-cache",
              label: "Wisp baseline build, LDAP, group cache",
              target: { pid: baseline.pid, port: baseline.authPort, stop: baseline.stop },
              file: ldapFile,
            },
          ]
        : []),
      {
        id: "freeradius-ldap",
        label: "FreeRADIUS 3.2 rlm_ldap (anchor)",
        target: freeradius,
        file: ldapFile,
      },
    ];
    const chosen = scenarios.filter(
      (s) =>
        !settings.only ||
        s.id === "freeradius-ldap" ||
        s.id === "wisp-baseline-ldap-cache" ||
        settings.only.includes(s.id),
    );
    scenarios.splice(0, scenarios.length, ...chosen);
    for (const s of scenarios) results.set(s.id, { label: s.label, runs: [] });
    for (let round = 0; round < settings.rounds; round++) {
      const k = round % scenarios.length;
      for (const s of [...scenarios.slice(k), ...scenarios.slice(0, k)]) {
        const r = await measure(s, settings, slapdPid);
        results.get(s.id)!.runs.push(r);
        console.log(`round ${round + 1}/${settings.rounds} ${s.label.padEnd(38)} ${describe(r)}`);
      }
    }
  } finally {
    for (const stop of stops) await stop();
  }
  report(settings, results);
}

/** Logins per CPU-second of the server and slapd together: what the login costs, whatever the load. */
const perCpuSecond = (runs: RunResult[]) =>
  1e6 / median(runs.map((r) => r.serverUsPerLogin + r.slapdUsPerLogin));

function report(settings: Settings, results: Map<string, { label: string; runs: RunResult[] }>) {
  const anchorRuns = results.get("freeradius-ldap")!.runs;
  const anchor = median(anchorRuns.map((r) => r.rate));
  const anchorCpu = perCpuSecond(anchorRuns);
  const local = median(results.get("wisp-local")?.runs.map((r) => r.rate) ?? [Number.NaN]);
  const repeat = Math.max(1, Math.round(settings.requests / settings.users));
  const lines = [
    `LDAP PAP logins (medians of ${settings.rounds} alternating rounds): ${settings.users} users,` +
      ` ${settings.users * repeat} requests per run, radclient (${RADCLIENT_PRIORITY} priority) -p ${settings.parallel} -r 1 for every server`,
    `${"".padEnd(38)} ${"logins/s".padStart(9)} ${"vs rlm_ldap".padStart(11)} ${"vs local".padStart(8)}` +
      ` ${"spread".padStart(11)} | ${"µs CPU/login".padStart(12)} ${"per CPU-s".padStart(9)} ${"vs rlm_ldap".padStart(11)}` +
      ` | ${"on CPU/run queue".padStart(16)}`,
  ];
  let noisy = false;
  const summary: Record<string, unknown> = {};
  for (const [id, { label, runs }] of results) {
    const rates = runs.map((r) => r.rate);
    const m = median(rates);
    const spread = `${Math.min(...rates).toFixed(0)}-${Math.max(...rates).toFixed(0)}`;
    if ((Math.max(...rates) - Math.min(...rates)) / m > 0.2 || runs.some((r) => r.otherCores > 0.3))
      noisy = true;
    const cpu = median(runs.map((r) => r.serverUsPerLogin));
    const slapdCpu = median(runs.map((r) => r.slapdUsPerLogin));
    const efficiency = perCpuSecond(runs);
    lines.push(
      `${label.padEnd(38)} ${m.toFixed(0).padStart(9)} ${`${(m / anchor).toFixed(2)}x`.padStart(11)}` +
        ` ${(Number.isNaN(local) ? "-" : `${(m / local).toFixed(2)}x`).padStart(8)} ${spread.padStart(11)} |` +
        ` ${`${cpu.toFixed(0)} + ${slapdCpu.toFixed(0)}`.padStart(12)} ${efficiency.toFixed(0).padStart(9)}` +
        ` ${`${(efficiency / anchorCpu).toFixed(2)}x`.padStart(11)} |` +
        ` ${`${median(runs.map((r) => r.serverOnCpu)).toFixed(2)} / ${median(runs.map((r) => r.serverRunQueue)).toFixed(2)}`.padStart(16)}`,
    );
    summary[id] = {
      label,
      median: m,
      ratioToRlmLdap: m / anchor,
      ratioToWispLocal: m / local,
      loginsPerCpuSecond: efficiency,
      cpuRatioToRlmLdap: efficiency / anchorCpu,
      runs,
    };
  }
  const [l1, l5, l15] = os.loadavg();
  const cached = results.get("wisp-ldap-cache");
  if (cached)
    lines.push(
      `target: Wisp LDAP (group cache) >= 1.0x rlm_ldap in logins/s: ${median(cached.runs.map((r) => r.rate)) / anchor >= 1 ? "PASS" : "BELOW"}`,
    );
  lines.push(
    "µs CPU/login: the server process's (all threads) + slapd's; per CPU-s: logins per second of that CPU.",
    "on CPU / in run queue: the server's threads' seconds running / runnable but waiting for a CPU, per second" +
      " (Wisp answers RADIUS on one thread: a run queue above its on-CPU figure means the machine's other" +
      " work, not its CPU per login, set its logins/s).",
    `machine: ${os.cpus().length} cores, load average ${l1!.toFixed(2)} ${l5!.toFixed(2)} ${l15!.toFixed(2)} at the end;` +
      ` ${noisy ? "NOISY (a spread over 20% or other processes busy during a run): read with care" : "quiet enough (spread within 20%)"}`,
    "Wisp records a radpostauth row and an event per login; this FreeRADIUS site records nothing per request.",
  );
  console.log();
  for (const line of lines) console.log(line);
  writeResults("ldap", {
    date: new Date().toISOString(),
    node: process.version,
    settings,
    results: summary,
    noisy,
    table: lines,
  });
}

runBench(main);

// The asynchronous session report (120) over 1,000,000 sessions in SQLite: Wisp's report job,
// run by a real worker (registerJobHandlers) in a child process that reports its own wall time
// and peak RSS, against `sqlite3 -csv` exporting the same columns, in the same order, from the
// same database file (its peak RSS from GNU time). Both outputs are checked to hold the same rows.
//
//   npx tsx bench/reports.ts [--rows 1000000] [--rounds 3]
//
// Targets: Wisp within 2x of sqlite3's time, and Wisp's peak RSS under 200 MB. The rows are written
// with a bare better-sqlite3 prepared INSERT in one transaction; rounds alternate the order.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import SqliteDatabase from "better-sqlite3";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { registerJobHandlers } from "../src/jobs/handlers.ts";
import { Worker } from "../src/jobs/worker.ts";
import { BenchError, ROOT, runBench, writeResults } from "./processes.ts";

const TARGET_RATIO = 2;
const TARGET_RSS_MB = 200;
/** The sessions end here and go back 30 days: 2026-01-01T00:00:00Z. */
const END = 1_767_225_600;
const SPAN = 30 * 86_400;

/** What createCore needs here; the RADIUS ports are off. */
const CORE_OPTIONS = { publicUrl: "http://localhost", radiusAuthPort: 0, radiusAcctPort: 0 } as Parameters<
  typeof createCore
>[1];

/** The same columns, order and formats as Wisp's report 120 file. */
const BASELINE_SQL = (accountId: number, earliest: number, latest: number) => `
select radacctid as session_id, coalesce(username, '') as username, user_id,
  strftime('%Y-%m-%dT%H:%M:%SZ', acctstarttime, 'unixepoch') as start,
  strftime('%Y-%m-%dT%H:%M:%SZ', acctstoptime, 'unixepoch') as stop,
  acctsessiontime as duration, acctinputoctets as input_bytes, acctoutputoctets as output_bytes,
  client_mac, ap_mac, ssid, nullif(nasipaddress, '') as nas_ip, nullif(framedipaddress, '') as framed_ip,
  nullif(acctterminatecause, '') as terminate_cause
from radacct
where account_id = ${accountId} and acctstarttime >= ${earliest} and acctstarttime < ${latest}
order by acctstarttime desc, radacctid desc;`;

interface ChildResult {
  ms: number;
  rows: number;
  peakRssMb: number;
  idleRssMb: number;
}

// --- the child: one worker process building one task ---------------------------------------------

async function child(dataDir: string, taskName: string, accountId: number): Promise<void> {
  const database = openDatabase({ dataDir });
  await migrate(database);
  const core = createCore(database, CORE_OPTIONS);
  const worker = new Worker(core.jobs, { log: { error: console.error, warn: console.error }, pollMs: 50 });
  registerJobHandlers(worker, core);
  const idleRssMb = process.memoryUsage().rss / 1048576;
  const started = performance.now();
  worker.start();
  let state = await core.reports.task(accountId, taskName);
  while (state.status === "queued" || state.status === "running") {
    await new Promise((resolve) => setTimeout(resolve, 20));
    state = await core.reports.task(accountId, taskName);
  }
  const ms = performance.now() - started;
  await worker.stop();
  await database.close();
  if (state.status !== "done") throw new BenchError(`the task ended ${state.status}`);
  const result: ChildResult = {
    ms,
    rows: state.rows,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    idleRssMb,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

// --- the parent -------------------------------------------------------------------------------------

function positiveInteger(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new BenchError(`--${name} must be a whole number from 1 to ${max}`);
  }
  return Number(raw);
}

const tempDirs = new Set<string>();
process.on("exit", () => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function hasCommand(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** The bare insert: one prepared statement, one transaction, realistic values. */
function insertSessions(file: string, accountId: number, otherAccount: number, rows: number): number {
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  const insert = sqlite.prepare(
    "insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, " +
      "acctupdatetime, acctstoptime, acctsessiontime, acctinputoctets, acctoutputoctets, " +
      "acctterminatecause, framedipaddress, account_id, user_id, network_id, client_mac, ap_mac, ssid) " +
      "values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );

  const causes = ["User-Request", "Idle-Timeout", "Lost-Carrier", "Session-Timeout"];
  const hex = (n: number) => n.toString(16).padStart(2, "0");
  const started = performance.now();
  sqlite.transaction(() => {
    // Every 51st row belongs to another account (rows / 50 of them): the report must skip them.
    const total = rows + Math.floor(rows / 50);
    for (let i = 0; i < total; i++) {
      const start = END - SPAN + Math.floor((i * SPAN) / total);
      const user = (i * 7919) % 20_000;
      const length = 60 + ((i * 104_729) % 14_400);
      const stop = start + length;
      const account = i % 51 === 50 ? otherAccount : accountId;
      insert.run(
        `${(i * 2_654_435_761) >>> 0}`,
        i.toString(36).padStart(8, "0"),
        `user${user}`,
        `198.18.${(user >> 8) & 15}.1`,
        start,
        stop,
        stop,
        length,
        length * ((i % 97) + 20) * 13,
        length * ((i % 89) + 40) * 71,
        causes[i % causes.length],
        `10.${(user >> 8) & 255}.${user & 255}.${(i % 250) + 2}`,
        account,
        user + 1,
        (user % 4) + 1,
        `da:${hex(user >> 8)}:${hex(user & 255)}:${hex(i % 7)}:00:01`,
        `0c:8d:db:00:${hex(user % 40)}:01`,
        user % 10 === 0 ? "Wisp Staff" : "Wisp Guest",
      );
    }
  })();
  sqlite.close();
  return performance.now() - started;
}

function runChild(dataDir: string, taskName: string, accountId: number): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "bench/reports.ts",
        "--child",
        dataDir,
        "--task",
        taskName,
        "--account",
        String(accountId),
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, LOG_LEVEL: "warn" } },
    );
    let out = "";
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    proc.on("error", reject);
    proc.on("close", (code) => {
      if (code !== 0) return reject(new BenchError(`the Wisp worker exited with ${code}`));
      resolve(JSON.parse(out.trim().split("\n").pop()!) as ChildResult);
    });
  });
}

/** sqlite3 -csv into a file; GNU time (when present) gives its peak RSS. */
function runSqlite3(
  file: string,
  query: string,
  output: string,
): Promise<{ ms: number; peakRssMb: number | null }> {
  const timeFile = `${output}.time`;
  const useTime = fs.existsSync("/usr/bin/time");
  const args = ["-csv", "-header", "-newline", "\r\n", file, query];
  return new Promise((resolve, reject) => {
    const out = fs.openSync(output, "w");
    const started = performance.now();
    const proc = useTime
      ? spawn("/usr/bin/time", ["-f", "%M", "-o", timeFile, "sqlite3", ...args], {
          stdio: ["ignore", out, "inherit"],
        })
      : spawn("sqlite3", args, { stdio: ["ignore", out, "inherit"] });
    proc.on("error", reject);
    proc.on("close", (code) => {
      const ms = performance.now() - started;
      fs.closeSync(out);
      if (code !== 0) return reject(new BenchError(`sqlite3 exited with ${code}`));
      const peakRssMb = useTime
        ? Number(fs.readFileSync(timeFile, "utf8").trim().split("\n").pop()) / 1024
        : null;
      resolve({ ms, peakRssMb });
    });
  });
}

/** Lines and a hash of the text without quotes: sqlite3 quotes cells with spaces, Wisp does not. */
async function digest(file: string): Promise<{ lines: number; hash: string }> {
  const hash = createHash("sha256");
  let lines = 0;
  for await (const chunk of fs.createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 })) {
    const text = (chunk as string).replace(/"/g, "");
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
    hash.update(text);
  }
  return { lines, hash: hash.digest("hex") };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: "string" },
      rounds: { type: "string" },
      child: { type: "string" },
      task: { type: "string" },
      account: { type: "string" },
    },
    strict: true,
  });
  if (values.child) return child(values.child, values.task ?? "", Number(values.account));
  const rows = positiveInteger("rows", values.rows, 1_000_000, 50_000_000);
  const rounds = positiveInteger("rounds", values.rounds, 3, 20);
  if (!hasCommand("sqlite3")) {
    throw new BenchError("the baseline needs the sqlite3 command line shell: apt-get install sqlite3");
  }
  const sqliteVersion = spawnSync("sqlite3", ["--version"], { encoding: "utf8" }).stdout.split(" ")[0] ?? "?";

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "wisp-bench-reports-"));
  tempDirs.add(dataDir);
  const database = openDatabase({ dataDir });
  await migrate(database);
  const core = createCore(database, CORE_OPTIONS);
  const account = await core.accounts.resolve(undefined);
  const other = await core.accounts.create("bench-other");
  const file = path.join(dataDir, "wisp.db");
  console.log(
    `inserting ${rows.toLocaleString("en")} sessions, and ${Math.floor(rows / 50).toLocaleString("en")} of ` +
      "another account in between (bare prepared INSERT, one transaction) ...",
  );
  const insertMs = insertSessions(file, account.id, other.id, rows);
  console.log(`  ${(insertMs / 1000).toFixed(1)} s`);
  const earliest = END - SPAN;
  const latest = END;
  const query = BASELINE_SQL(account.id, earliest, latest);

  const wisp: ChildResult[] = [];
  const base: { ms: number; peakRssMb: number | null }[] = [];
  let check = "";
  for (let round = 1; round <= rounds; round++) {
    const task = await core.reports.requestFile(account.id, 120, {
      earliest: String(earliest),
      latest: String(latest),
    });
    const baselineFile = path.join(dataDir, `baseline-${round}.csv`);
    const runWisp = async () => wisp.push(await runChild(dataDir, task.task_name, account.id));
    const runBase = async () => base.push(await runSqlite3(file, query, baselineFile));
    if (round % 2 === 1) {
      await runWisp();
      await runBase();
    } else {
      await runBase();
      await runWisp();
    }
    const w = wisp[wisp.length - 1]!;
    const b = base[base.length - 1]!;
    console.log(
      `round ${round}/${rounds}: Wisp ${w.ms.toFixed(0)} ms, peak RSS ${w.peakRssMb.toFixed(0)} MB | ` +
        `sqlite3 ${b.ms.toFixed(0)} ms, peak RSS ${b.peakRssMb?.toFixed(0) ?? "?"} MB`,
    );
    const wispFile = core.reports.fileOf(task.task_name);
    if (round === 1) {
      const [mine, theirs] = await Promise.all([digest(wispFile), digest(baselineFile)]);
      if (mine.lines !== rows + 1 || mine.lines !== theirs.lines) {
        throw new BenchError(`row counts differ: Wisp ${mine.lines - 1}, sqlite3 ${theirs.lines - 1}`);
      }
      check = mine.hash === theirs.hash ? "same rows, same values" : "DIFFERENT CONTENT";
      console.log(`  outputs: ${mine.lines - 1} rows each; ${check}`);
    }
    fs.rmSync(wispFile, { force: true });
    fs.rmSync(baselineFile, { force: true });
  }
  await database.close();

  const wispMs = median(wisp.map((r) => r.ms));
  const baseMs = median(base.map((r) => r.ms));
  const ratio = wispMs / baseMs;
  const peak = Math.max(...wisp.map((r) => r.peakRssMb));
  const idle = Math.max(...wisp.map((r) => r.idleRssMb));
  const basePeak = Math.max(...base.map((r) => r.peakRssMb ?? 0));
  const timePass = ratio <= TARGET_RATIO;
  const rssPass = peak < TARGET_RSS_MB;
  const exported = wisp[0]?.rows ?? 0;
  console.log();
  console.log(`report 120 (session data), ${exported.toLocaleString("en")} rows, median of ${rounds} rounds`);
  const ms = (value: number) => `${value.toFixed(0).padStart(6)} ms`;
  console.log(
    `  Wisp (report job in a worker process)  ${ms(wispMs)}   peak RSS ${peak.toFixed(0)} MB ` +
      `(${idle.toFixed(0)} MB before the job)`,
  );
  console.log(
    `  sqlite3 ${sqliteVersion} -csv                  ${ms(baseMs)}   ` +
      `peak RSS ${basePeak ? basePeak.toFixed(0) : "?"} MB`,
  );
  console.log(
    `  Wisp / sqlite3 ${ratio.toFixed(2)}x: target within ${TARGET_RATIO}x ${timePass ? "PASS" : "MISS"}`,
  );
  console.log(
    `  Wisp peak RSS ${peak.toFixed(0)} MB: target under ${TARGET_RSS_MB} MB ${rssPass ? "PASS" : "MISS"}`,
  );
  console.log(`  outputs: ${check}`);
  const cpus = os.cpus();
  const info = { node: process.version, cpu: cpus[0]?.model.trim() ?? "unknown", cores: cpus.length };
  console.log(
    `\nnode ${info.node} | CPU ${info.cpu} | ${info.cores} cores | load ${os.loadavg()[0]?.toFixed(2)}`,
  );
  const report = {
    date: new Date().toISOString(),
    ...info,
    loadAverage: os.loadavg()[0],
    settings: { rows, rounds },
    insertMs: Math.round(insertMs),
    exportedRows: exported,
    outputs: check,
    wisp: {
      medianMs: Math.round(wispMs),
      roundsMs: wisp.map((r) => Math.round(r.ms)),
      peakRssMb: Math.round(peak),
      rssBeforeJobMb: Math.round(idle),
    },
    sqlite3: {
      version: sqliteVersion,
      medianMs: Math.round(baseMs),
      roundsMs: base.map((r) => Math.round(r.ms)),
      peakRssMb: basePeak ? Math.round(basePeak) : null,
    },
    ratio: Math.round(ratio * 100) / 100,
    targets: { ratio: TARGET_RATIO, peakRssMb: TARGET_RSS_MB },
    pass: { time: timePass, rss: rssPass },
  };
  writeResults("reports", report);
}

runBench(main);

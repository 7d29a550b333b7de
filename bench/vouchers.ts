// Batch creation of 10,000 vouchers through Wisp's HTTP API (POST /api/vouchers/batch, end to end:
// request sent -> full 2 MB response received), against the same 10,000 rows (same columns, same
// values: the codes Wisp just generated) inserted by a bare better-sqlite3 prepared statement in one
// transaction, into the vouchers table of a separate fresh database migrated like Wisp's. Also the
// service call alone (no HTTP), so the HTTP/JSON share is visible. Rounds alternate the order.
//
//   npx tsx bench/vouchers.ts [--rounds 5] [--quantity 10000] [--warmup 1] [--postgres postgres://...]
//
// Wisp runs as a child process (src/main.ts, LOG_LEVEL=warn) on SQLite in a temp dir, with a key whose
// rate limit is raised. --postgres (or BENCH_DATABASE_URL) adds a PostgreSQL run: Wisp, the service
// and a bare pg multi-row INSERT each use an account of their own there, deleted afterwards.
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import SqliteDatabase from "better-sqlite3";
import pg from "pg";
import { type Core, createCore } from "../src/core/index.ts";
import { MAX_KEY_RATE_LIMIT } from "../src/core/keys/service.ts";
import type { Voucher } from "../src/core/vouchers/service.ts";
import { type Database, openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import {
  BenchError,
  installExitHandlers,
  makeTempDir,
  onCleanup,
  runBench,
  startHttpChild,
  stopChild,
  writeResults,
} from "./processes.ts";

const TARGET_RATIO = 3;
const COLUMNS = "account_id, code, status, validity, usage_limit, session_timeout, batch_id, created";
/** The bare pg insert: rows per statement, under PostgreSQL's 65,535 parameters. */
const PG_CHUNK = 4000;
/** One kept-alive connection, so no round pays for a TCP handshake. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

interface Settings {
  rounds: number;
  quantity: number;
  warmup: number;
  postgresUrl: string | undefined;
}

interface BatchBody {
  batch_id: number;
  quantity: number;
  data: Voucher[];
}

/** One way of writing a batch; `bare` writes exactly the rows of the batch Wisp answered. */
interface Contenders {
  http(): Promise<{ ms: number; batch: BatchBody }>;
  service(): Promise<number>;
  bare(batch: BatchBody): Promise<number>;
  close(): Promise<void>;
}

interface Summary {
  medianMs: number;
  roundsMs: number[];
}

interface Row {
  database: "sqlite" | "postgres";
  baseline: string;
  quantity: number;
  http: Summary;
  service: Summary;
  bare: Summary;
  ratio: number;
  serviceRatio: number;
  target: number;
  pass: boolean;
}

function positiveInteger(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new BenchError(`--${name} must be a whole number from 1 to ${max}`);
  }
  return Number(raw);
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string" },
      quantity: { type: "string" },
      warmup: { type: "string" },
      postgres: { type: "string" },
    },
    strict: true,
  });
  const postgresUrl = values.postgres || process.env.BENCH_DATABASE_URL || undefined;
  if (postgresUrl && !/^postgres(ql)?:\/\//.test(postgresUrl)) {
    throw new BenchError("--postgres / BENCH_DATABASE_URL must start with postgres://");
  }
  return {
    rounds: positiveInteger("rounds", values.rounds, 5, 100),
    quantity: positiveInteger("quantity", values.quantity, 10_000, 10_000),
    warmup: values.warmup === "0" ? 0 : positiveInteger("warmup", values.warmup, 1, 10),
    postgresUrl,
  };
}

onCleanup(() => agent.destroy());
installExitHandlers();

const tempDir = (label: string) => makeTempDir(`vouchers-${label}`);

/** Wisp in a child process with LOG_LEVEL=warn. */
async function startWisp(env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  return startHttpChild("wisp", "src/main.ts", { ...env, LOG_LEVEL: "warn" });
}

// --- contenders --------------------------------------------------------------------------------

function batchRequest(settings: Settings) {
  return { quantity: settings.quantity, prefix: "BENCH", validity: 86_400, usage_limit: 1 };
}

/**
 * POST /api/vouchers/batch, timed from sending to the last byte of the body. node:http rather than
 * fetch: fetch's web streams cost the client ~10 ms per 2 MB answer, which is not Wisp's time.
 */
async function postBatch(
  url: string,
  key: string,
  settings: Settings,
): Promise<{ ms: number; batch: BatchBody }> {
  const body = JSON.stringify(batchRequest(settings));
  const started = performance.now();
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = http.request(
      `${url}/api/vouchers/batch`,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json;charset=utf-8",
          "content-length": Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
  const ms = performance.now() - started;
  if (status !== 201) throw new BenchError(`wisp answered ${status}: ${text.slice(0, 300)}`);
  const batch = JSON.parse(text) as BatchBody;
  if (batch.data.length !== settings.quantity)
    throw new BenchError(`wisp returned ${batch.data.length} vouchers`);
  return { ms, batch };
}

async function timeService(core: Core, accountId: number, settings: Settings): Promise<number> {
  const started = performance.now();
  const batch = await core.vouchers.createBatch(accountId, batchRequest(settings));
  const ms = performance.now() - started;
  if (batch.data.length !== settings.quantity) throw new BenchError("the service returned a short batch");
  return ms;
}

/** The values Wisp stored for one voucher, in COLUMNS order, for another account. */
function values(v: Voucher, accountId: number): unknown[] {
  return [accountId, v.code, v.status, v.validity, v.usage_limit, v.session_timeout, v.batch_id, v.created];
}

async function inProcessCore(databaseUrl: string | undefined, dataDir: string, account: string) {
  const database = openDatabase({ dataDir, databaseUrl });
  await migrate(database);
  const core = createCore(database, { publicUrl: "http://localhost" });
  const row = databaseUrl ? await core.accounts.create(account) : await core.accounts.resolve(undefined);
  return { database, core, accountId: row.id };
}

async function deleteAccounts(database: Database, ids: number[]): Promise<void> {
  const db = database.db;
  await db.deleteFrom("vouchers").where("account_id", "in", ids).execute();
  await db.deleteFrom("voucher_batches").where("account_id", "in", ids).execute();
  await db.deleteFrom("api_keys").where("account_id", "in", ids).execute();
  await db.deleteFrom("accounts").where("id", "in", ids).execute();
}

async function sqliteContenders(settings: Settings): Promise<Contenders> {
  // Wisp's database: migrated and given a key here, then closed before the child opens it.
  const wispDir = tempDir("wisp");
  const seeded = await inProcessCore(undefined, wispDir, "default");
  const account = await seeded.core.accounts.resolve(undefined);
  const { key } = await seeded.core.keys.create(account, { name: "bench", rateLimit: MAX_KEY_RATE_LIMIT });
  await seeded.database.close();
  const wisp = await startWisp({ DATA_DIR: wispDir });

  const service = await inProcessCore(undefined, tempDir("service"), "default");

  // The bare side: the same table definition (Wisp's migrations), the same pragmas, no Wisp code.
  const bareDir = tempDir("bare");
  const prepared = await inProcessCore(undefined, bareDir, "default");
  const bareAccount = prepared.accountId;
  await prepared.database.close();
  const sqlite = new SqliteDatabase(path.join(bareDir, "wisp.db"));
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  const insertBatch = sqlite.prepare(
    "insert into voucher_batches (id, account_id, prefix, quantity, validity, usage_limit, session_timeout, " +
      "created) values (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertVoucher = sqlite.prepare(`insert into vouchers (${COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?)`);
  const writeAll = sqlite.transaction((batch: BatchBody) => {
    const first = batch.data[0]!;
    insertBatch.run(
      batch.batch_id,
      bareAccount,
      "BENCH",
      batch.quantity,
      first.validity,
      first.usage_limit,
      first.session_timeout,
      first.created,
    );
    for (const v of batch.data) insertVoucher.run(values(v, bareAccount));
  });

  return {
    http: () => postBatch(wisp.url, key, settings),
    service: () => timeService(service.core, service.accountId, settings),
    async bare(batch) {
      const started = performance.now();
      writeAll(batch);
      return performance.now() - started;
    },
    async close() {
      sqlite.close();
      await service.database.close();
      await stopChild(wisp.child);
    },
  };
}

async function postgresContenders(settings: Settings, url: string): Promise<Contenders> {
  const tag = `${Date.now().toString(36)}-${process.pid}`;
  const admin = await inProcessCore(url, tempDir("pg"), `bench-vouchers-wisp-${tag}`);
  const wispAccount = admin.accountId;
  const { key } = await admin.core.keys.create(await admin.core.accounts.get(`bench-vouchers-wisp-${tag}`), {
    name: "bench",
    rateLimit: MAX_KEY_RATE_LIMIT,
  });
  const serviceAccount = (await admin.core.accounts.create(`bench-vouchers-service-${tag}`)).id;
  const bareAccount = (await admin.core.accounts.create(`bench-vouchers-bare-${tag}`)).id;
  const accounts = [wispAccount, serviceAccount, bareAccount];
  const client = new pg.Client({ connectionString: url });
  let wisp: Awaited<ReturnType<typeof startWisp>>;
  try {
    wisp = await startWisp({ DATA_DIR: tempDir("pg-wisp"), DATABASE_URL: url });
    await client.connect();
  } catch (error) {
    // The database may be shared: leave nothing of ours behind.
    await deleteAccounts(admin.database, accounts);
    await admin.database.close();
    throw error;
  }

  return {
    http: () => postBatch(wisp.url, key, settings),
    service: () => timeService(admin.core, serviceAccount, settings),
    async bare(batch) {
      const first = batch.data[0]!;
      const started = performance.now();
      await client.query("begin");
      try {
        const inserted = await client.query<{ id: number }>(
          "insert into voucher_batches (account_id, prefix, quantity, validity, usage_limit, session_timeout, " +
            "created) values ($1, $2, $3, $4, $5, $6, $7) returning id",
          [
            bareAccount,
            "BENCH",
            batch.quantity,
            first.validity,
            first.usage_limit,
            first.session_timeout,
            first.created,
          ],
        );
        const batchId = inserted.rows[0]!.id;
        for (let i = 0; i < batch.data.length; i += PG_CHUNK) {
          const chunk = batch.data.slice(i, i + PG_CHUNK);
          const params = chunk.flatMap((v) => values({ ...v, batch_id: batchId }, bareAccount));
          const rows = chunk.map(
            (_, r) => `(${Array.from({ length: 8 }, (_, c) => `$${r * 8 + c + 1}`).join(", ")})`,
          );
          await client.query(`insert into vouchers (${COLUMNS}) values ${rows.join(", ")}`, params);
        }
        await client.query("commit");
      } catch (error) {
        await client.query("rollback");
        throw error;
      }
      return performance.now() - started;
    },
    async close() {
      await stopChild(wisp.child);
      await client.end();
      await deleteAccounts(admin.database, accounts);
      await admin.database.close();
    },
  };
}

// --- measuring ---------------------------------------------------------------------------------

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const summary = (roundsMs: number[]): Summary => ({
  medianMs: median(roundsMs),
  roundsMs: roundsMs.map((ms) => Math.round(ms * 10) / 10),
});

async function measure(database: "sqlite" | "postgres", contenders: Contenders, settings: Settings) {
  const http: number[] = [];
  const service: number[] = [];
  const bare: number[] = [];
  for (let round = 1 - settings.warmup; round <= settings.rounds; round++) {
    // The bare insert writes the codes of this round's HTTP batch, so it always follows it; the
    // order of the three alternates between rounds.
    let h: number;
    let s: number;
    let b: number;
    if (round % 2 === 1) {
      const res = await contenders.http();
      h = res.ms;
      b = await contenders.bare(res.batch);
      s = await contenders.service();
    } else {
      s = await contenders.service();
      const res = await contenders.http();
      h = res.ms;
      b = await contenders.bare(res.batch);
    }
    const label = round < 1 ? "warm-up" : `round ${round}/${settings.rounds}`;
    console.log(
      `[${database}] ${label}: HTTP ${h.toFixed(1)} ms, service ${s.toFixed(1)} ms, bare ${b.toFixed(1)} ms`,
    );
    if (round < 1) continue;
    http.push(h);
    service.push(s);
    bare.push(b);
  }
  const row: Row = {
    database,
    baseline:
      database === "sqlite"
        ? "better-sqlite3 prepared INSERT per row, one transaction"
        : `pg multi-row INSERT (${PG_CHUNK} rows per statement), one transaction`,
    quantity: settings.quantity,
    http: summary(http),
    service: summary(service),
    bare: summary(bare),
    ratio: 0,
    serviceRatio: 0,
    target: TARGET_RATIO,
    pass: false,
  };
  row.ratio = row.http.medianMs / row.bare.medianMs;
  row.serviceRatio = row.service.medianMs / row.bare.medianMs;
  row.pass = row.ratio <= TARGET_RATIO;
  return row;
}

function print(row: Row, settings: Settings): void {
  const share = row.http.medianMs - row.service.medianMs;
  const lines: [string, number][] = [
    ["Wisp over HTTP, end to end (POST /api/vouchers/batch)", row.http.medianMs],
    ["Wisp service call alone (no HTTP, no JSON)", row.service.medianMs],
    [`bare: ${row.baseline}`, row.bare.medianMs],
  ];
  const width = Math.max(...lines.map(([label]) => label.length));
  console.log();
  console.log(`[${row.database}] ${row.quantity} vouchers per batch, median of ${settings.rounds} rounds`);
  for (const [label, ms] of lines) console.log(`  ${label.padEnd(width)} ${ms.toFixed(1).padStart(7)} ms`);
  console.log(
    `  HTTP / bare ${row.ratio.toFixed(2)}x: target within ${row.target}x ${row.pass ? "PASS" : "ABOVE"}` +
      ` | service / bare ${row.serviceRatio.toFixed(2)}x` +
      ` | HTTP + JSON share ${share.toFixed(1)} ms (${((100 * share) / row.http.medianMs).toFixed(0)}% of HTTP)`,
  );
}

async function main(): Promise<void> {
  const settings = readSettings();
  const rows: Row[] = [];
  const targets: ["sqlite" | "postgres", () => Promise<Contenders>][] = [
    ["sqlite", () => sqliteContenders(settings)],
  ];
  const pgUrl = settings.postgresUrl;
  if (pgUrl) targets.push(["postgres", () => postgresContenders(settings, pgUrl)]);
  for (const [database, open] of targets) {
    const contenders = await open();
    try {
      rows.push(await measure(database, contenders, settings));
    } finally {
      await contenders.close();
    }
  }
  for (const row of rows) print(row, settings);
  const cpus = os.cpus();
  const info = { node: process.version, cpu: cpus[0]?.model.trim() ?? "unknown", cores: cpus.length };
  console.log(
    `\nnode ${info.node} | CPU ${info.cpu} | ${info.cores} cores | load ${os.loadavg()[0]?.toFixed(2)}`,
  );
  const report = {
    date: new Date().toISOString(),
    ...info,
    loadAverage: os.loadavg()[0],
    // The PostgreSQL URL may hold a password: only say whether it ran.
    settings: {
      rounds: settings.rounds,
      quantity: settings.quantity,
      warmup: settings.warmup,
      postgres: !!pgUrl,
    },
    results: rows,
  };
  writeResults("vouchers", report);
}

runBench(main);

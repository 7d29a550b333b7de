// Retention's pruning rate on a large radpostauth (10 million rows by default, spread over 180 days
// up to now, so the half older than RETENTION_AUTH_DAYS=90 goes), against a bare loop of
// `DELETE FROM radpostauth WHERE id IN (SELECT id FROM radpostauth WHERE account_id = ? AND
// authdate < ? LIMIT 2000)` on the same database in the same run (no pauses, no keyset, nothing
// else). Wisp is measured as it runs in the worker (a pause after each batch as long as the batch
// took, leaving the database to logins half the time) and with the pauses off. Report 110's page
// (the last 4 hours, 50 rows) is timed before pruning, after it, and after the baseline.
//
//   npx tsx bench/retention.ts [--rows 10000000] [--dialect sqlite|postgres|both]
//
// The rows are written by the database itself: a recursive CTE on SQLite, generate_series on
// PostgreSQL. On PostgreSQL radpostauth is pruned row by row unless migration 020 partitioned it.
import os from "node:os";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import pg from "pg";
import { createCore } from "../src/core/index.ts";
import { DEFAULT_RETENTION_DAYS } from "../src/core/retention/rules.ts";
import { type Database, openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { BenchError, makeTempDir, onCleanup, removeTempDir, runBench, writeResults } from "./processes.ts";

const PG_ADMIN_URL = process.env.WISP_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
const DAY = 86_400;
const SPAN_DAYS = 180;
const KEEP_DAYS = 90;
const BATCH = 2000;

type Dialect = "sqlite" | "postgres";

async function openFresh(dialect: Dialect): Promise<{ database: Database; dataDir: string }> {
  const dataDir = makeTempDir("wisp-bench-retention");
  onCleanup(() => removeTempDir(dataDir));
  if (dialect === "sqlite") return { database: openDatabase({ dataDir }), dataDir };
  const name = `wisp_bench_retention_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  onCleanup(() => {
    const drop = new pg.Client({ connectionString: PG_ADMIN_URL });
    void drop
      .connect()
      .then(() => drop.query(`drop database if exists ${name} with (force)`))
      .finally(() => drop.end());
  });
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return { database: openDatabase({ dataDir, databaseUrl: url.toString() }), dataDir };
}

/** Rows i = first..last of `total`, oldest first: row i at now - SPAN + i * SPAN / total. */
async function fill(database: Database, accountId: number, total: number, first: number, last: number) {
  const now = Math.floor(Date.now() / 1000);
  const start = now - SPAN_DAYS * DAY;
  const step = (SPAN_DAYS * DAY) / total;
  if (database.dialect === "postgres") {
    await sql`insert into radpostauth (username, pass, reply, authdate, account_id, reason, client_mac, ap_mac, ssid)
      select 'user' || (i % 5000), '', case when i % 10 = 0 then 'Access-Reject' else 'Access-Accept' end,
        to_timestamp(${start} + i * ${step}::float8), ${accountId}, 'ok', 'aa:bb:cc:dd:ee:ff',
        '00:11:22:33:44:55', 'Bench WiFi'
      from generate_series(${first}::int, ${last}::int) as i`.execute(database.db);
    await sql`analyze radpostauth`.execute(database.db);
    return;
  }
  await sql`insert into radpostauth (username, pass, reply, authdate, account_id, reason, client_mac, ap_mac, ssid)
    with recursive s(i) as (select ${first} union all select i + 1 from s where i < ${last})
    select 'user' || (i % 5000), '', case when i % 10 = 0 then 'Access-Reject' else 'Access-Accept' end,
      strftime('%Y-%m-%d %H:%M:%S', ${start} + i * ${step}, 'unixepoch'), ${accountId}, 'ok',
      'aa:bb:cc:dd:ee:ff', '00:11:22:33:44:55', 'Bench WiFi' from s`.execute(database.db);
}

async function count(database: Database): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from radpostauth`.execute(database.db);
  return Number(rows[0]!.n);
}

/** Median ms of report 110's first page over the last 4 hours, 15 runs after 3 to warm up. */
async function reportLatency(core: ReturnType<typeof createCore>, accountId: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 18; i++) {
    const started = performance.now();
    const page = await core.reports.page(accountId, 110, { page: 1, limit: 50, earliest: "-4h" });
    if (page.data.length === 0) throw new BenchError("report 110 found no recent rows");
    if (i >= 3) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(times.length / 2)]! * 100) / 100;
}

/** The bare batched DELETE loop; returns rows deleted and ms. */
async function baseline(
  database: Database,
  accountId: number,
  cutoff: Date,
): Promise<{ rows: number; ms: number }> {
  const at = database.dialect === "sqlite" ? cutoff.toISOString().slice(0, 19).replace("T", " ") : cutoff;
  let rows = 0;
  const started = performance.now();
  for (;;) {
    const result = await sql`delete from radpostauth where id in (select id from radpostauth
      where account_id = ${accountId} and authdate < ${at} limit ${BATCH})`.execute(database.db);
    const n = Number(result.numAffectedRows ?? 0);
    rows += n;
    if (n < BATCH) break;
  }
  return { rows, ms: performance.now() - started };
}

async function run(dialect: Dialect, total: number) {
  const { database, dataDir } = await openFresh(dialect);
  try {
    await migrate(database);
    const retention = { ...DEFAULT_RETENTION_DAYS, auth: KEEP_DAYS, sessions: 0, events: 0, jobs: 0 };
    const core = createCore(database, { publicUrl: "http://localhost", dataDir, retention });
    const account = await core.accounts.create("bench");
    const oldRows = Math.floor((total * (SPAN_DAYS - KEEP_DAYS)) / SPAN_DAYS);

    let started = performance.now();
    await fill(database, account.id, total, 1, total);
    const fillMs = performance.now() - started;
    console.log(`${dialect}: ${total} rows written in ${(fillMs / 1000).toFixed(1)} s`);
    const before = await reportLatency(core, account.id);

    const prune = async (label: string) => {
      started = performance.now();
      const outcome = await core.retention.prune();
      const ms = performance.now() - started;
      const rows = outcome.find((o) => o.table === "radpostauth")!.rows;
      const rate = Math.round(rows / (ms / 1000));
      console.log(
        `${dialect}: wisp (${label}) pruned ${rows} rows in ${(ms / 1000).toFixed(1)} s: ${rate} rows/s`,
      );
      return { rows, ms: Math.round(ms), rowsPerSecond: rate };
    };
    const paced = await prune("paced, as in the worker");
    const after = await reportLatency(core, account.id);
    if ((await count(database)) !== total - paced.rows) throw new BenchError("rows left do not add up");

    // The same old rows again for the pause-free run and the baseline.
    await fill(database, account.id, total, 1, paced.rows);
    core.retention.tuning.minPauseMs = 0;
    core.retention.tuning.maxPauseMs = 0;
    const unpaced = await prune("no pauses");
    await fill(database, account.id, total, 1, paced.rows);
    const cutoff = new Date(Date.now() - KEEP_DAYS * DAY * 1000);
    const bare = await baseline(database, account.id, cutoff);
    const bareRate = Math.round(bare.rows / (bare.ms / 1000));
    console.log(
      `${dialect}: baseline DELETE ... WHERE id IN (SELECT ... LIMIT ${BATCH}) loop: ${bare.rows} rows in ` +
        `${(bare.ms / 1000).toFixed(1)} s: ${bareRate} rows/s`,
    );
    const afterBaseline = await reportLatency(core, account.id);
    console.log(
      `${dialect}: report 110 page (last 4 h): ${before} ms before pruning, ${after} ms after, ` +
        `${afterBaseline} ms after the baseline`,
    );
    return {
      rows: total,
      oldRows,
      fillMs: Math.round(fillMs),
      wispPaced: paced,
      wispNoPauses: unpaced,
      baseline: { rows: bare.rows, ms: Math.round(bare.ms), rowsPerSecond: bareRate },
      report110PageMs: { beforePruning: before, afterPruning: after, afterBaseline },
    };
  } finally {
    await database.close();
  }
}

runBench(async () => {
  const { values } = parseArgs({
    options: { rows: { type: "string" }, dialect: { type: "string" } },
    strict: true,
  });
  const total = Number(values.rows ?? 10_000_000);
  if (!Number.isInteger(total) || total < 10_000 || total > 100_000_000) {
    throw new BenchError("--rows must be a whole number from 10000 to 100000000");
  }
  const which = values.dialect ?? "both";
  if (!["sqlite", "postgres", "both"].includes(which))
    throw new BenchError("--dialect: sqlite, postgres or both");
  const dialects: Dialect[] = which === "both" ? ["sqlite", "postgres"] : [which as Dialect];
  const results: Record<string, unknown> = {};
  for (const dialect of dialects) results[dialect] = await run(dialect, total);
  writeResults(which === "both" ? "retention" : `retention-${which}`, {
    date: new Date().toISOString(),
    node: process.version,
    cores: os.cpus().length,
    loadAverage: Math.round(os.loadavg()[0]! * 100) / 100,
    settings: { rows: total, keepDays: KEEP_DAYS, spanDays: SPAN_DAYS, batchRows: BATCH },
    ...results,
  });
});

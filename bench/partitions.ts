// Monthly partitions on PostgreSQL (migration 020): the same rows in two fresh databases, one left
// unpartitioned (migrated to 019, the baseline) and one partitioned (019, filled, then migration
// 020, whose time is reported). Then, in each: reports 110 (authentications) and 120 (sessions)
// through Wisp's report service (one synchronous page of a 4-hour window and its count, median of
// --rounds, at several points of the year), and removing the oldest month: DELETE of its rows in
// the baseline against dropPartitionsBefore in the partitioned one.
//
//   node --import tsx bench/partitions.ts [--rows 1000000] [--rounds 15]
//
// --rows rows in each of radpostauth and radacct, spread over 12 months (2025-11 to 2026-10, UTC),
// written with generate_series. Needs PostgreSQL (WISP_BENCH_PG_URL, default that of the tests).
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { createCore } from "../src/core/index.ts";
import { type Database, openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { dropPartitionsBefore } from "../src/db/partitions.ts";
import { BenchError, makeTempDir, runBench, writeResults } from "./processes.ts";

const ADMIN_URL = process.env.WISP_BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
const FIRST = Date.UTC(2025, 10, 1) / 1000;
const END = Date.UTC(2026, 10, 1) / 1000;
/** The oldest month, removed at the end. */
const CUTOFF = new Date(Date.UTC(2025, 11, 1));
const CORE_OPTIONS = { publicUrl: "http://localhost", radiusAuthPort: 0, radiusAcctPort: 0 } as Parameters<
  typeof createCore
>[1];
// biome-ignore lint/suspicious/noExplicitAny: raw SQL over tables and partitions
type Db = Kysely<any>;

const { values } = parseArgs({
  options: { rows: { type: "string", default: "1000000" }, rounds: { type: "string", default: "15" } },
});
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

async function fresh(label: string): Promise<{ database: Database; drop: () => Promise<void> }> {
  const name = `wisp_bench_${label}_${process.pid}_${randomBytes(3).toString("hex")}`;
  await admin(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const database = openDatabase({ dataDir: makeTempDir(`partitions-${label}`), databaseUrl: url.toString() });
  return {
    database,
    drop: async () => {
      await database.close();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}

/** The same rows in every database: 98% in account 1, the rest in account 2. */
async function fill(db: Db, rows: number): Promise<void> {
  for (const name of ["bench", "other"]) {
    await sql`insert into accounts (name, created) values (${name}, '2025-01-01T00:00:00Z')`.execute(db);
  }
  const span = END - FIRST;
  await sql`insert into radpostauth (username, pass, reply, calledstationid, callingstationid, authdate,
      account_id, reason, user_id, network_id, client_mac, ap_mac, ssid, nas_ip, method)
    select 'user' || (i % 20000), '', case when i % 10 = 0 then 'Access-Reject' else 'Access-Accept' end,
      '02-00-00-00-00-01:lab', '02-00-00-00-' || lpad(to_hex(i % 256), 2, '0') || '-01',
      to_timestamp(${FIRST} + (i::bigint * ${span}) / ${rows}),
      case when i % 50 = 0 then 2 else 1 end, case when i % 10 = 0 then 'wrong password' end,
      i % 20000 + 1, 1, '02:00:00:00:00:01', '02:00:00:00:00:02', 'lab', '10.0.0.1', 'PAP'
    from generate_series(1, ${rows}) i`.execute(db);
  await sql`insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime,
      acctupdatetime, acctstoptime, acctsessiontime, acctinputoctets, acctoutputoctets,
      acctterminatecause, framedipaddress, account_id, user_id, network_id, client_mac, ap_mac, ssid)
    select i::text, md5(i::text), 'user' || (i % 20000), '10.0.0.1',
      to_timestamp(${FIRST} + (i::bigint * ${span}) / ${rows}),
      to_timestamp(${FIRST} + (i::bigint * ${span}) / ${rows} + 600 + i % 3600),
      to_timestamp(${FIRST} + (i::bigint * ${span}) / ${rows} + 600 + i % 3600),
      600 + i % 3600, i % 100000 * 13, i % 100000 * 71, 'User-Request', '10.1.0.1',
      case when i % 50 = 0 then 2 else 1 end, i % 20000 + 1, 1, '02:00:00:00:00:01', '02:00:00:00:00:02', 'lab'
    from generate_series(1, ${rows}) i`.execute(db);
  await sql`analyze`.execute(db);
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

/** Median ms of one report page (100 rows) and its count over a 4-hour window at each point. */
async function reportLatency(database: Database, report: 110 | 120): Promise<number> {
  const core = createCore(database, CORE_OPTIONS);
  const times: number[] = [];
  // Points spread over the year, so both the oldest and newest months are read.
  const points = [0.1, 0.35, 0.6, 0.85, 0.99].map((f) => FIRST + Math.floor((END - FIRST) * f));
  for (let round = 0; round < ROUNDS; round++) {
    for (const at of points) {
      const query = {
        earliest: new Date((at - 4 * 3600) * 1000).toISOString(),
        latest: new Date(at * 1000).toISOString(),
        page: 1,
        limit: 100,
      };
      const started = performance.now();
      const page = await core.reports.page(1, report, query);
      times.push(performance.now() - started);
      if (page.data.length === 0) throw new BenchError(`report ${report} found no rows at ${query.latest}`);
    }
  }
  return median(times);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function count(db: Db, table: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(table)}`.execute(db);
  return rows[0]!.n;
}

runBench(async () => {
  if (!Number.isInteger(ROWS) || ROWS < 1000) throw new BenchError("--rows must be a whole number >= 1000");
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new BenchError("--rounds must be a whole number >= 1");
  const plain = await fresh("plain");
  const parted = await fresh("parted");
  try {
    console.log(`filling ${ROWS.toLocaleString("en")} rows in radpostauth and radacct, twice...`);
    for (const { database } of [plain, parted]) {
      await migrate(database, "019_sessions");
      await fill(database.db as Db, ROWS);
    }
    const migrationMs = await timed(() => migrate(parted.database));
    await sql`analyze`.execute(parted.database.db);
    console.log(
      `migration 020 on ${(2 * ROWS).toLocaleString("en")} rows: ${(migrationMs / 1000).toFixed(1)} s`,
    );

    const results: Record<string, unknown> = {
      rows: ROWS,
      rounds: ROUNDS,
      migration_020_ms: Math.round(migrationMs),
    };
    for (const report of [110, 120] as const) {
      // Alternate which database goes first, so neither always reads a warmer cache.
      const baseline = await reportLatency(plain.database, report);
      const partitioned = await reportLatency(parted.database, report);
      const again = await reportLatency(plain.database, report);
      const base = Math.min(baseline, again);
      results[`report_${report}_ms`] = { unpartitioned: base, partitioned };
      console.log(
        `report ${report}, one page + count of a 4-hour window (median): unpartitioned ${base.toFixed(2)} ms, partitioned ${partitioned.toFixed(2)} ms`,
      );
    }

    for (const [table, time] of [
      ["radpostauth", "authdate"],
      ["radacct", "acctstarttime"],
    ] as const) {
      const before = await count(plain.database.db as Db, table);
      const deleteMs = await timed(() =>
        sql`delete from ${sql.id(table)} where ${sql.id(time)} < ${CUTOFF}`.execute(plain.database.db),
      );
      const removed = before - (await count(plain.database.db as Db, table));
      let dropped: string[] = [];
      const dropMs = await timed(async () => {
        dropped = (await dropPartitionsBefore(parted.database.db as Db, table, CUTOFF)).dropped;
      });
      const left = await count(parted.database.db as Db, table);
      if (left !== before - removed || dropped.length !== 1) {
        throw new BenchError(
          `${table}: dropped ${dropped} left ${left} rows, DELETE left ${before - removed}`,
        );
      }
      results[`${table}_remove_month`] = { rows: removed, delete_ms: deleteMs, drop_partition_ms: dropMs };
      console.log(
        `${table}, the oldest month (${removed.toLocaleString("en")} rows): DELETE ${deleteMs.toFixed(0)} ms, dropPartitionsBefore ${dropMs.toFixed(0)} ms (${dropped[0]})`,
      );
    }
    writeResults("partitions", results);
  } finally {
    await plain.drop();
    await parted.drop();
  }
});

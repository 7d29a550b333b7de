// Issue 28, point 4: how long `wisp import freeradius` takes on a large database, beside a bare
// copy of the same rows. A private MariaDB (test/support/mariadb-lab.ts) holds FreeRADIUS's MySQL
// schema and daloRADIUS's userinfo with N users (a password item of every common kind, a reply
// item, a group, a userinfo row each) and M accounting rows; the real command imports it all
// (--history) into a fresh Wisp on SQLite. The baseline reads the same tables by id in the same
// chunk size and INSERTs every row into a SQLite table of the same columns with one prepared
// statement, one transaction per chunk, no checks: the floor a copy can reach here.
//
//   node --import tsx bench/import.ts [--users 100000] [--sessions 1000000]

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import SqliteDatabase from "better-sqlite3";
import mysql from "mysql2/promise";
import type { ImportSummary } from "../src/core/imports/service.ts";
import { tempDir } from "../test/support/databases.ts";
import { DALORADIUS_USERINFO, type MariaDbLab, startMariaDb } from "../test/support/mariadb-lab.ts";
import { entryArgs, ROOT } from "../test/support/processes.ts";

const { values } = parseArgs({
  options: { users: { type: "string", default: "100000" }, sessions: { type: "string", default: "1000000" } },
});
const USERS = Number(values.users);
const SESSIONS = Number(values.sessions);

/** Seeds with MariaDB's sequence tables (seq_1_to_N), so seeding costs seconds, not the run. */
function seed(mariadb: MariaDbLab) {
  mariadb.createRadiusDatabase("radius");
  mariadb.exec(DALORADIUS_USERINFO, "radius");
  mariadb.exec(
    `
    insert into nas (nasname, shortname, secret) select concat('10.', seq div 250, '.', seq mod 250, '.1'), concat('ap', seq), 'bench-secret-1' from seq_1_to_100;
    insert into radgroupreply (groupname, attribute, op, value) select concat('plan', seq), 'Session-Timeout', ':=', seq * 600 from seq_1_to_10;
    insert into radgroupcheck (groupname, attribute, op, value) select concat('plan', seq), 'Simultaneous-Use', ':=', '2' from seq_1_to_10;
    insert into radcheck (username, attribute, op, value)
      select concat('user', seq),
        elt(1 + seq mod 4, 'Cleartext-Password', 'MD5-Password', 'SHA1-Password', 'Crypt-Password'),
        ':=',
        elt(1 + seq mod 4, concat('pw', seq), md5(concat('pw', seq)), sha1(concat('pw', seq)), '$1$Wisp1234$5.aMDw3CRhnEE4t27i2Yl/')
      from seq_1_to_${USERS};
    insert into radreply (username, attribute, op, value) select concat('user', seq), 'Idle-Timeout', ':=', '600' from seq_1_to_${USERS};
    insert into radusergroup (username, groupname, priority) select concat('user', seq), concat('plan', 1 + seq mod 10), 1 from seq_1_to_${USERS};
    insert into userinfo (username, firstname, lastname, email, mobilephone)
      select concat('user', seq), 'First', concat('Last', seq), concat('user', seq, '@example.org'), concat('+34 600 ', seq) from seq_1_to_${USERS};
    insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime, acctsessiontime,
        acctinputoctets, acctoutputoctets, calledstationid, callingstationid, acctterminatecause, framedipaddress)
      select hex(seq), md5(seq), concat('user', 1 + seq mod ${USERS}), concat('10.0.', 1 + seq mod 100, '.1'),
        from_unixtime(1767225600 + seq * 20), from_unixtime(1767225600 + seq * 20 + 600), 600, seq, seq * 2,
        'AA-BB-CC-DD-EE-FF:Guest', '11-22-33-44-55-66', 'User-Request', '10.200.0.1'
      from seq_1_to_${SESSIONS};
    `,
    "radius",
  );
}

/** Runs the import command; wall seconds and the process's peak resident memory (MB). */
async function runImport(
  url: string,
  dataDir: string,
): Promise<{ seconds: number; peakMb: number; summary: ImportSummary }> {
  const args = [...entryArgs("cli"), "import", "freeradius", url, "--history", "--json"];
  const started = process.hrtime.bigint();
  const child = spawn("/usr/bin/time", ["-f", "%M", process.execPath, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "", LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (code !== 0) throw new Error(`import failed (${code}):\n${stderr.slice(-3000)}`);
  const peakKb = Number(stderr.trim().split("\n").at(-1));
  return { seconds, peakMb: Math.round(peakKb / 1024), summary: JSON.parse(stdout) };
}

/** The floor: the same rows read by id in chunks and INSERTed into SQLite by one prepared statement. */
async function bareCopy(mariadb: MariaDbLab, file: string, table: string, idColumn: string, chunk: number) {
  const source = await mysql.createConnection({
    socketPath: mariadb.socket,
    user: "root",
    database: "radius",
    dateStrings: true,
  });
  const target = new SqliteDatabase(file);
  target.pragma("journal_mode = WAL");
  const [columns] = (await source.query(`select * from ${table} limit 1`)) as [
    Record<string, unknown>[],
    unknown,
  ];
  const names = Object.keys(columns[0]!);
  target.exec(`create table if not exists ${table} (${names.map((n) => `"${n}"`).join(", ")})`);
  const insert = target.prepare(`insert into ${table} values (${names.map(() => "?").join(", ")})`);
  const insertChunk = target.transaction((rows: Record<string, unknown>[]) => {
    for (const row of rows) insert.run(...names.map((n) => row[n] as string | number | null));
  });
  const started = process.hrtime.bigint();
  let after = 0;
  let copied = 0;
  for (;;) {
    const [rows] = (await source.query(
      `select * from ${table} where ${idColumn} > ? order by ${idColumn} limit ${chunk}`,
      [after],
    )) as [Record<string, unknown>[], unknown];
    if (rows.length === 0) break;
    insertChunk(rows);
    copied += rows.length;
    after = Number(rows.at(-1)![idColumn]);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  target.close();
  await source.end();
  return { rows: copied, seconds };
}

const dir = tempDir("bench-import");
const mariadb = await startMariaDb();
try {
  const seedStart = Date.now();
  seed(mariadb);
  console.log(
    `seeded ${USERS} users and ${SESSIONS} accounting rows in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`,
  );
  const wisp = await runImport(mariadb.url(), path.join(dir, "wisp"));
  const userRows = USERS * 4; // radcheck, radreply, radusergroup, userinfo
  const c = wisp.summary.counts;
  console.log(
    `wisp import freeradius --history: ${wisp.seconds.toFixed(1)} s, peak memory ${wisp.peakMb} MB; ` +
      `created ${c.users.created} users, ${c.groups.created} groups, ${c.networks.created} networks, ` +
      `${c.radacct.created} sessions, ${c.radpostauth.created} attempts`,
  );
  const bareFile = path.join(dir, "bare.db");
  const bare = [];
  for (const [table, id] of [
    ["radcheck", "id"],
    ["radreply", "id"],
    ["radusergroup", "id"],
    ["userinfo", "id"],
    ["radacct", "radacctid"],
  ] as const) {
    bare.push(await bareCopy(mariadb, bareFile, table, id, table === "radacct" ? 5000 : 2000));
  }
  const bareRows = bare.reduce((n, b) => n + b.rows, 0);
  const bareSeconds = bare.reduce((n, b) => n + b.seconds, 0);
  const wispRows = userRows + SESSIONS;
  const result = {
    users: USERS,
    sessions: SESSIONS,
    wisp: {
      seconds: Number(wisp.seconds.toFixed(1)),
      rows_per_second: Math.round(wispRows / wisp.seconds),
      peak_mb: wisp.peakMb,
    },
    bare_insert_loop: {
      seconds: Number(bareSeconds.toFixed(1)),
      rows_per_second: Math.round(bareRows / bareSeconds),
    },
  };
  console.log(
    `source rows ${wispRows}: wisp import ${result.wisp.rows_per_second} rows/s (${result.wisp.seconds} s, checks, ` +
      `comparisons, indexes, progress) | bare INSERT loop ${result.bare_insert_loop.rows_per_second} rows/s ` +
      `(${result.bare_insert_loop.seconds} s, no checks, no indexes) | ratio ${(result.wisp.rows_per_second / result.bare_insert_loop.rows_per_second).toFixed(2)}`,
  );
  fs.writeFileSync(path.join(ROOT, "bench/results/import.json"), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await mariadb.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

// Where an authentication request's time goes inside Wisp, below the UDP door: the AAA service
// (core.aaa.authenticate / account) is called in this process on a database seeded as for
// bench/radius.ts, with 100 calls in flight like radclient -p 100, and every SQLite statement is
// timed at better-sqlite3 (the SQL text, how often, microseconds per call and per request).
// What is left of the CPU time is Wisp's own JavaScript and Kysely (building, compiling, results).
//
//   node --import tsx bench/radius-sql.ts [--requests 20000] [--sessions 5000] [--dir <parent>]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import SqliteDatabase from "better-sqlite3";
import type { Pair } from "../src/core/aaa/pairs.ts";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { type Attributes, acctPacket, authPacket, seed, USERS } from "./radius-load.ts";

interface Timing {
  calls: number;
  ns: bigint;
}

const timings = new Map<string, Timing>();

/** Wraps better-sqlite3's Statement methods to time every statement by its SQL text. */
function instrumentStatements(): void {
  const scratch = new SqliteDatabase(":memory:");
  const proto = Object.getPrototypeOf(scratch.prepare("select 1")) as Record<string, unknown>;
  scratch.close();
  for (const method of ["all", "get", "run", "iterate"]) {
    const original = proto[method] as (this: { source: string }, ...args: unknown[]) => unknown;
    proto[method] = function (this: { source: string }, ...args: unknown[]) {
      const started = process.hrtime.bigint();
      try {
        return original.apply(this, args);
      } finally {
        const spent = process.hrtime.bigint() - started;
        const entry = timings.get(this.source) ?? { calls: 0, ns: 0n };
        entry.calls++;
        entry.ns += spent;
        timings.set(this.source, entry);
      }
    };
  }
}

function pairs(attributes: Attributes): Pair[] {
  return attributes.map(([attribute, value]) => ({ attribute, op: "=", value: String(value) }));
}

/** Runs `count` calls of `call`, `parallel` in flight; returns wall and CPU microseconds. */
async function drive(count: number, parallel: number, call: (i: number) => Promise<unknown>) {
  let next = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < count) await call(next++);
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  const wallUs = Number(process.hrtime.bigint() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { wallUs, cpuUs: used.user + used.system };
}

function report(title: string, units: number, unit: string, run: { wallUs: number; cpuUs: number }): void {
  const rows = [...timings].sort((a, b) => Number(b[1].ns - a[1].ns));
  const sqlUs = rows.reduce((sum, [, t]) => sum + Number(t.ns) / 1000, 0);
  console.log(
    `\n${title}: ${units} ${unit}s in ${(run.wallUs / 1e6).toFixed(2)} s = ` +
      `${((units / run.wallUs) * 1e6).toFixed(0)}/s in-process; ` +
      `CPU ${(run.cpuUs / units).toFixed(1)} µs/${unit}, ` +
      `of which SQLite statements ${(sqlUs / units).toFixed(1)} µs (timed), ` +
      "everything else in this process (JS, Kysely, GC, this harness) " +
      `${((run.cpuUs - sqlUs) / units).toFixed(1)} µs`,
  );
  console.log(`µs/${unit}`.padStart(10), "µs/call".padStart(8), "calls".padStart(7), " statement");
  for (const [sql, t] of rows) {
    const us = Number(t.ns) / 1000;
    const text = sql.replace(/\s+/g, " ");
    console.log(
      (us / units).toFixed(1).padStart(10),
      (us / t.calls).toFixed(1).padStart(8),
      String(t.calls).padStart(7),
      ` ${text.length > 150 ? `${text.slice(0, 147)}...` : text}`,
    );
  }
  timings.clear();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: "string" },
      sessions: { type: "string" },
      dir: { type: "string" },
      parallel: { type: "string" },
    },
  });
  const requests = Number(values.requests ?? 20_000);
  const sessions = Number(values.sessions ?? 5000);
  const parallel = Number(values.parallel ?? 100);
  const dir = fs.mkdtempSync(path.join(path.resolve(values.dir ?? os.tmpdir()), "wisp-bench-radius-sql-"));
  const removeDir = () => fs.rmSync(dir, { recursive: true, force: true });
  process.on("exit", removeDir);
  try {
    await seed(dir);
    instrumentStatements();
    const database = openDatabase({ dataDir: dir });
    const core = createCore(database, { publicUrl: "http://localhost" });
    const client = await core.networks.findClientByAddress("127.0.0.1");
    if (!client) throw new Error("the seeded network was not found");
    // Requests are built before the clock runs: what is measured is Wisp's work.
    const authRequests = Array.from({ length: 1000 }, (_, k) => {
      const packet = authPacket(k, USERS);
      const password = String(packet.attributes.find(([n]) => n === "User-Password")?.[1]);
      return { pairs: pairs(packet.attributes), credentials: { password: Buffer.from(password) } };
    });
    const authenticate = (k: number) => {
      const request = authRequests[k % authRequests.length]!;
      return core.aaa.authenticate(client, request.pairs, request.credentials);
    };
    // Warm-up (JIT, statement caches), then measured.
    await drive(2000, parallel, authenticate);
    timings.clear();
    report("PAP authentication", requests, "request", await drive(requests, parallel, authenticate));

    const acctRequests = Array.from({ length: sessions * 2 }, (_, i) =>
      pairs(acctPacket("sql", i % sessions, USERS, i < sessions ? "Start" : "Stop")),
    );
    const account = (i: number) => core.aaa.account(client, acctRequests[i]!, "127.0.0.1");
    await drive(400, parallel, (i) =>
      core.aaa.account(
        client,
        pairs(acctPacket("warm", i % 200, USERS, i < 200 ? "Start" : "Stop")),
        "127.0.0.1",
      ),
    );
    timings.clear();
    // Starts first, then Stops, as in the radclient file.
    const starts = await drive(sessions, parallel, account);
    const stops = await drive(sessions, parallel, (i) => account(i + sessions));
    report("Accounting Start/Stop", sessions * 2, "packet", {
      wallUs: starts.wallUs + stops.wallUs,
      cpuUs: starts.cpuUs + stops.cpuUs,
    });
    await core.aaa.writes.drain();
    await database.close();
  } finally {
    removeDir();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});

// Webhook delivery throughput, and what the outbox costs a request's transaction.
//
// 1. Throughput: N events are written to the outbox, then the real worker (the server's default
//    settings: 8 jobs at a time, 500 ms poll) dispatches, signs and POSTs them to a node:http
//    receiver in a child process on loopback; timed from the worker's start to the receiver's
//    last request. Once with one endpoint (one request in flight, in event order) and once with
//    the events spread over 8 endpoints of 8 accounts. Baseline: the same sender POSTing the same
//    signed bodies to the same receiver one after another, without the database: the ceiling of
//    one endpoint with one request in flight.
// 2. Outbox write: the users service's create transaction (user row, password) with and without
//    the event insert, alternating in blocks, in the same run.
//
//   npx tsx bench/webhooks.ts [--events 10000] [--writes 2000] [--postgres postgres://...]
//
// PostgreSQL (a temporary database) with --postgres <admin url>, BENCH_DATABASE_URL, or the test
// server (WISP_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test) when it answers.
import { type ChildProcess, spawn } from "node:child_process";
import os from "node:os";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.ts";
import { insertEvents, type NewEvent } from "../src/core/events/repo.ts";
import { type Core, createCore } from "../src/core/index.ts";
import { isoNow } from "../src/core/shared/time.ts";
import { UsersRepo } from "../src/core/users/repo.ts";
import { payloadOf } from "../src/core/webhooks/delivery.ts";
import { WebhookSender } from "../src/core/webhooks/sender.ts";
import { signedHeaders } from "../src/core/webhooks/signing.ts";
import { withWebhookTables } from "../src/core/webhooks/tables.ts";
import { type Database, openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { registerJobHandlers } from "../src/jobs/handlers.ts";
import { Worker } from "../src/jobs/worker.ts";
import { createTestDatabase, PG_ADMIN_URL, type TestDatabase } from "../test/support/databases.ts";
import { writeResults } from "./processes.ts";

const MANY_ENDPOINTS = 8;

/** The receiver: counts requests, answers 200, tells the parent when it has seen the expected number. */
const RECEIVER = `
const http = require("node:http");
let count = 0, expect = Infinity;
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.end("ok");
    if (++count === expect) process.send({ done: count });
  });
});
process.on("message", (m) => { count = 0; expect = m.expect; process.send({ ready: true }); });
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
`;

interface Receiver {
  child: ChildProcess;
  port: number;
  /** Once the receiver has reset its count: `arrived` resolves when `n` requests have come in. */
  expect(n: number): Promise<{ arrived: Promise<void> }>;
}

async function startReceiver(): Promise<Receiver> {
  const child = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve) =>
    child.once("message", (m: { port: number }) => resolve(m.port)),
  );
  return {
    child,
    port,
    async expect(n) {
      const ready = new Promise<void>((resolve) => child.once("message", () => resolve()));
      child.send({ expect: n });
      await ready;
      return { arrived: new Promise<void>((resolve) => child.once("message", () => resolve())) };
    },
  };
}

interface Stats {
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    meanMs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
  };
}

async function baseline(receiver: Receiver, n: number): Promise<number> {
  const sender = new WebhookSender({ allowPrivate: true });
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const url = `http://127.0.0.1:${receiver.port}/baseline`;
  const { arrived } = await receiver.expect(n);
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const body = payloadOf({ kind: "session.started", created: "2026-01-01T00:00:00Z", data: `{"n":${i}}` });
    const result = await sender.send(url, { ...signedHeaders(secret, `msg_${i}`, 1, body) }, body);
    if (result.statusCode !== 200)
      throw new Error(`baseline POST failed: ${result.error ?? result.statusCode}`);
  }
  await arrived;
  const seconds = (performance.now() - started) / 1000;
  await sender.close();
  return n / seconds;
}

/** Writes `events` spread over `endpoints` endpoints (one account each), runs the worker, times it. */
async function throughput(core: Core, receiver: Receiver, events: number, endpoints: number, label: string) {
  const accounts: number[] = [];
  for (let i = 0; i < endpoints; i++) {
    const account = await core.accounts.create(`bench-${label}-${i}`);
    await core.webhooks.create(account.id, { url: `http://127.0.0.1:${receiver.port}/${label}/${i}` });
    accounts.push(account.id);
  }
  const rows: NewEvent[] = Array.from({ length: events }, (_, n) => ({
    accountId: accounts[n % endpoints]!,
    kind: "session.started",
    data: { n, username: `user${n}`, ap_mac: "00:11:22:33:44:55" },
  }));
  for (let i = 0; i < rows.length; i += 500) await insertEvents(core.database.db, rows.slice(i, i + 500));
  const worker = new Worker(core.jobs, { log: { error: console.error, warn: console.warn } });
  registerJobHandlers(worker, core);
  const { arrived } = await receiver.expect(events);
  const started = performance.now();
  worker.start();
  await arrived;
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  const succeeded = await withWebhookTables(core.database.db)
    .selectFrom("webhook_deliveries")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "in", accounts)
    .where("status", "=", "succeeded")
    .executeTakeFirstOrThrow();
  if (Number(succeeded.n) !== events) throw new Error(`${succeeded.n} of ${events} deliveries succeeded`);
  return {
    endpoints,
    events,
    seconds: Math.round(seconds * 100) / 100,
    eventsPerSecond: Math.round(events / seconds),
  };
}

/** The users service's create transaction with and without the event insert, alternating. */
async function outboxWrite(database: Database, accountId: number, writes: number) {
  const repo = new UsersRepo(database.db, database.dialect);
  const samples: Record<"without" | "with", number[]> = { without: [], with: [] };
  const block = 100;
  let n = 0;
  for (let round = 0; round < (2 * writes) / block; round++) {
    const variant = round % 2 === 0 ? "without" : "with";
    for (let i = 0; i < block; i++) {
      const username = `w${n++}`;
      const now = isoNow();
      const started = performance.now();
      await repo.transaction(async (r) => {
        const row = await r.insert({
          account_id: accountId,
          username,
          email: "",
          fullname: "",
          status: "enabled",
          created: now,
          updated: now,
        });
        const password = { attribute: "Cleartext-Password", value: "bench-password" };
        await r.setPassword(accountId, username, password, ["Cleartext-Password"]);
        if (variant === "with") await r.recordEvent(accountId, "user.created", { ...row });
      });
      samples[variant].push(performance.now() - started);
    }
  }
  const without = stats(samples.without);
  const withEvent = stats(samples.with);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    transactions: writes,
    withoutEvent: without,
    withEvent,
    addedMeanMs: round(withEvent.meanMs - without.meanMs),
    addedP50Ms: round(withEvent.p50Ms - without.p50Ms),
  };
}

async function postgresAdmin(given: string | undefined): Promise<string | undefined> {
  if (given) return given;
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return PG_ADMIN_URL;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

async function benchDatabase(
  dialect: "sqlite" | "postgres",
  receiver: Receiver,
  events: number,
  writes: number,
) {
  const temp: TestDatabase = await createTestDatabase(dialect);
  const config = loadConfig({
    DATA_DIR: temp.dataDir,
    DATABASE_URL: temp.databaseUrl,
    WEBHOOK_ALLOW_PRIVATE: "1",
  });
  const database = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    await migrate(database);
    const core = createCore(database, config);
    const single = await throughput(core, receiver, events, 1, "one");
    console.log(
      `  [${dialect}] 1 endpoint: ${single.events} events in ${single.seconds} s = ` +
        `${single.eventsPerSecond}/s`,
    );
    const spread = await throughput(core, receiver, events, MANY_ENDPOINTS, "many");
    console.log(
      `  [${dialect}] ${MANY_ENDPOINTS} endpoints: ${spread.events} events in ${spread.seconds} s = ` +
        `${spread.eventsPerSecond}/s`,
    );
    const account = await core.accounts.create("bench-writes");
    const write = await outboxWrite(database, account.id, writes);
    console.log(
      `  [${dialect}] create transaction: ${write.withoutEvent.meanMs} ms without the event, ` +
        `${write.withEvent.meanMs} ms with it (+${write.addedMeanMs} ms mean, +${write.addedP50Ms} ms p50)`,
    );
    return { database: dialect, throughput: [single, spread], outboxWrite: write };
  } finally {
    await database.close();
    await temp.drop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: "string", default: "10000" },
      writes: { type: "string", default: "2000" },
      postgres: { type: "string" },
    },
  });
  const events = Number(values.events);
  const writes = Number(values.writes);
  const admin = await postgresAdmin(values.postgres ?? process.env.BENCH_DATABASE_URL);
  if (values.postgres) process.env.WISP_TEST_PG_URL = values.postgres;
  const receiver = await startReceiver();
  try {
    const baselineN = Math.min(events, 5000);
    const ceiling = Math.round(await baseline(receiver, baselineN));
    console.log(`baseline: ${baselineN} signed POSTs one after another, no database: ${ceiling}/s`);
    const results = [];
    for (const dialect of ["sqlite", "postgres"] as const) {
      if (dialect === "postgres" && !admin) {
        console.log("  [postgres] skipped: no server answered (--postgres <admin url>)");
        continue;
      }
      const result = await benchDatabase(dialect, receiver, events, writes);
      results.push({
        ...result,
        throughput: result.throughput.map((t) => ({
          ...t,
          ratioToBaseline: Math.round((t.eventsPerSecond / ceiling) * 100) / 100,
        })),
      });
    }
    printSummary(ceiling, results);
    const cpus = os.cpus();
    const report = {
      date: new Date().toISOString(),
      node: process.version,
      cpu: cpus[0]?.model.trim() ?? "unknown",
      cores: cpus.length,
      loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
      settings: { events, writes, manyEndpoints: MANY_ENDPOINTS, worker: "concurrency 8, poll 500 ms" },
      baseline: {
        what: "signed POSTs one after another to the same receiver, no database",
        perSecond: ceiling,
      },
      results,
    };
    writeResults("webhooks", report);
  } finally {
    receiver.child.kill();
  }
}

function printSummary(ceiling: number, results: Awaited<ReturnType<typeof benchDatabase>>[]): void {
  console.log(
    "\ndatabase | endpoints | events/s | vs baseline | create txn ms (without -> with event) | added",
  );
  for (const r of results) {
    for (const t of r.throughput) {
      const w = r.outboxWrite;
      console.log(
        `${r.database.padEnd(8)} | ${String(t.endpoints).padStart(9)} | ` +
          `${String(t.eventsPerSecond).padStart(8)} | ` +
          `${(t.eventsPerSecond / ceiling).toFixed(2).padStart(11)} | ` +
          `${`${w.withoutEvent.meanMs} -> ${w.withEvent.meanMs}`.padStart(37)} | +${w.addedMeanMs}`,
      );
    }
  }
  console.log(`baseline: ${ceiling} signed POSTs/s one after another without the database`);
}

await main();

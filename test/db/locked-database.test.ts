// A SQLite database whose write lock another process holds (the CLI, a worker, a backup) freezes
// nothing: a child process holds BEGIN IMMEDIATE for several seconds while this one sends API reads,
// /healthz and RADIUS Access-Requests (real UDP), which must answer within milliseconds, with the
// event loop free. Writes started meanwhile wait without blocking: one whose wait outlasts the
// deadline answers 503 with Retry-After, one the release comes in time for succeeds, and every
// RADIUS record sent during the lock is in the database after it.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { after, before, describe, test } from "node:test";
import { WRITE_WAIT_MS } from "../../src/db/sqlite-writer.ts";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput } from "../../src/radius/packet.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "lock-Secret-63";
const PASSWORD = "pw-lock-5";
/** How long the other process holds the lock: past the write deadline, with room on both sides. */
const LOCK_MS = WRITE_WAIT_MS + 1500;
/** A write started this early outlasts its deadline (503); one started this late gets the release. */
const EARLY_WRITE_MS = 200;
const LATE_WRITE_MS = LOCK_MS - WRITE_WAIT_MS + 1000;
/**
 * Bounds that separate "answered at once" from "waited for the lock" on a loaded machine: the
 * lock is held for seconds, so a request that waited for it takes seconds.
 */
const MEDIAN_MS = 200;
const WORST_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Another process holding the database's write lock (BEGIN IMMEDIATE) for `holdMs`. */
async function holdWriteLock(file: string, holdMs: number) {
  const script = `
    const Database = require(process.argv[1]);
    const db = new Database(process.argv[2]);
    db.exec("begin immediate");
    process.stdout.write("locked\\n");
    setTimeout(() => {
      db.exec("commit");
      db.close();
      process.stdout.write("released\\n");
    }, Number(process.argv[3]));
  `;
  const module = createRequire(import.meta.url).resolve("better-sqlite3");
  const child = spawn(process.execPath, ["-e", script, module, file, String(holdMs)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  const waiters: { line: string; resolve(at: number): void }[] = [];
  let buffered = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      lines.push(line);
      for (const w of waiters.filter((w) => w.line === line)) w.resolve(performance.now());
    }
  });
  const seen = (line: string) =>
    new Promise<number>((resolve, reject) => {
      if (lines.includes(line)) return resolve(performance.now());
      waiters.push({ line, resolve });
      child.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before "${line}"`)));
    });
  const lockedAt = await seen("locked");
  return { child, lockedAt, released: seen("released") };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; end: number }> {
  const start = performance.now();
  const value = await work();
  const end = performance.now();
  return { value, ms: end - start, end };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

describe("a SQLite database locked by another process", () => {
  let server: TestServer;
  let holder: ChildProcess | undefined;
  let key: string;
  let userId: number;
  let authPort: number;
  let acctPort: number;
  const db = () => server.core.database.db;

  const login = () =>
    sendRadius({
      ...accessRequestPap("alice", PASSWORD),
      host: "127.0.0.1",
      port: authPort,
      secret: SECRET,
      timeoutMs: 5000,
      retries: 0,
    });
  const accounting = (status: string, session: string, sessionTime: number) =>
    sendRadius({
      code: "Accounting-Request",
      attributes: [
        ["User-Name", "alice"],
        ["Acct-Session-Id", session],
        ["Acct-Status-Type", status],
        ["NAS-IP-Address", "127.0.0.1"],
        ["NAS-Port", 7],
        ["Acct-Session-Time", sessionTime],
      ] as AttributeInput[],
      host: "127.0.0.1",
      port: acctPort,
      secret: SECRET,
      // Answered once stored, so after the release: longer than the lock.
      timeoutMs: LOCK_MS + 10_000,
      retries: 0,
    });
  const attemptsOfAlice = async () =>
    Number(
      (
        await db()
          .selectFrom("radpostauth")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("username", "=", "alice")
          .executeTakeFirstOrThrow()
      ).n,
    );
  const sessionsOf = (session: string) =>
    db().selectFrom("radacct").selectAll().where("acctsessionid", "=", session).execute();

  before(async () => {
    [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(authPort),
        RADIUS_ACCT_PORT: String(acctPort),
      },
    });
    const account = await server.account("default");
    key = await server.key(account, { rateLimit: 100_000 });
    await server.core.networks.create(account.id, { name: "Lobby", nas_ip: "127.0.0.1", secret: SECRET });
    userId = (await server.core.users.create(account.id, { username: "alice", password: PASSWORD })).id;
    // Warm: the key's last use is written now, the RADIUS client is known, a session is open.
    assert.equal((await server.call("GET", `/api/users/${userId}`, { key })).status, 200);
    assert.equal((await login()).type, "Access-Accept");
    assert.equal((await accounting("Start", "before-lock", 0)).type, "Accounting-Response");
  });
  after(async () => {
    holder?.kill();
    await server?.stop();
  });

  test("reads, /healthz and RADIUS verdicts answer at once; writes wait, then succeed or answer 503", async (t) => {
    const attemptsBefore = await attemptsOfAlice();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    const lock = await holdWriteLock(path.join(server.database.dataDir, "wisp.db"), LOCK_MS);
    holder = lock.child;
    loop.enable();
    // And a timer's drift, which also sees a block that starts before the histogram's first tick.
    let lastTick = performance.now();
    let worstGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - lastTick);
      lastTick = now;
    }, 10);
    let releasedAt: number | undefined;
    const released = lock.released.then((at) => {
      releasedAt = at;
      return at;
    });

    const createUser = (username: string) => () =>
      server.call("POST", "/api/users", { key, body: { username, password: "pw-x" } });
    const early = sleep(EARLY_WRITE_MS).then(() => timed(createUser("during-lock-early")));
    const late = sleep(LATE_WRITE_MS).then(() => timed(createUser("during-lock-late")));
    const interim = sleep(300).then(() => timed(() => accounting("Interim-Update", "before-lock", 60)));
    const started = sleep(400).then(() => timed(() => accounting("Start", "during-lock", 0)));

    // Load while the lock is held (stopping short of its release): reads, health, verdicts.
    const samples: Record<"read" | "health" | "radius", number[]> = { read: [], health: [], radius: [] };
    let accepted = 0;
    while (performance.now() - lock.lockedAt < LOCK_MS - 500) {
      const [read, health, radius] = await Promise.all([
        timed(() => server.call("GET", `/api/users/${userId}`, { key })),
        timed(() => server.call("GET", "/healthz")),
        timed(login),
      ]);
      assert.equal(read.value.status, 200);
      assert.equal(health.value.status, 200, health.value.text);
      assert.equal(radius.value.type, "Access-Accept");
      accepted++;
      samples.read.push(read.ms);
      samples.health.push(health.ms);
      samples.radius.push(radius.ms);
      await sleep(50);
    }
    loop.disable();
    clearInterval(ticker);
    const report = Object.entries(samples)
      .map(
        ([what, ms]) => `${what} median ${median(ms).toFixed(1)} ms, worst ${Math.max(...ms).toFixed(1)} ms`,
      )
      .join("; ");
    const loopMaxMs = Math.max(loop.max / 1e6, worstGap);
    t.diagnostic(`during the lock: ${report}; event loop delay worst ${loopMaxMs.toFixed(0)} ms`);
    for (const ms of Object.values(samples)) {
      assert.ok(median(ms) < MEDIAN_MS && Math.max(...ms) < WORST_MS, `waited for the lock: ${report}`);
    }
    assert.ok(loopMaxMs < WORST_MS, `the event loop was blocked for ${loopMaxMs.toFixed(0)} ms (${report})`);
    assert.ok(accepted >= 5, `only ${accepted} rounds of requests during the lock`);
    assert.equal(releasedAt, undefined, "the measurements were taken while the lock was held");

    // The early write gave up at its deadline, while the lock was still held: 503, Retry-After.
    const first = await early;
    assert.equal(first.value.status, 503, first.value.text);
    assert.deepEqual(Object.keys(first.value.body).sort(), ["code", "error", "message"]);
    assert.equal(first.value.body.error, true);
    assert.equal(first.value.body.code, 503);
    assert.match(first.value.body.message, /busy/);
    assert.ok(Number(first.value.headers.get("retry-after")) >= 1);
    assert.ok(first.ms >= WRITE_WAIT_MS - 100, `503 after ${first.ms} ms, before the deadline`);
    // The late one waited for the release (about LOCK_MS - LATE_WRITE_MS), then was stored.
    await released;
    const second = await late;
    assert.equal(second.value.status, 201, second.value.text);
    const untilRelease = LOCK_MS - LATE_WRITE_MS;
    assert.ok(second.ms >= untilRelease - 500, `201 after ${second.ms} ms, before the release`);
    const names = await db()
      .selectFrom("users")
      .select("username")
      .where("username", "like", "during-lock%")
      .execute();
    assert.deepEqual(
      names.map((u) => u.username),
      ["during-lock-late"],
    );

    // Accounting is answered once stored, so after the release; nothing RADIUS sent is lost.
    assert.equal((await interim).value.type, "Accounting-Response");
    assert.equal((await started).value.type, "Accounting-Response");
    await server.core.aaa.drain();
    assert.equal(await attemptsOfAlice(), attemptsBefore + accepted);
    const [updated] = await sessionsOf("before-lock");
    assert.equal(updated?.acctsessiontime, 60);
    assert.equal((await sessionsOf("during-lock")).length, 1);

    // And writes go on as before.
    const afterwards = await timed(createUser("after-lock"));
    assert.equal(afterwards.value.status, 201);
    assert.ok(afterwards.ms < WORST_MS);
  });
});

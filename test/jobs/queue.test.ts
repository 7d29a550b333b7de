// The durable job queue: claim with a lease, complete, retry, reclaim after a dead worker, and
// no double claims by concurrent workers; the worker loop around it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Kysely } from "kysely";
import { JobQueue } from "../../src/core/jobs/queue.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import type { Schema } from "../../src/db/schema.ts";
import { RetryLater, Worker } from "../../src/jobs/worker.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../support/databases.ts";

const quiet = { error() {}, warn() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const { dialect, skip } of await dialects()) {
  describe(`job queue on ${dialect}`, { skip }, () => {
    let testDb: TestDatabase;
    let database: ReturnType<typeof openDatabase>;
    let db: Kysely<Schema>;
    let queue: JobQueue;

    before(async () => {
      testDb = await createTestDatabase(dialect);
      database = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
      await migrate(database);
      db = database.db;
      queue = new JobQueue(db, dialect);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    test("claim takes due jobs with a lease; complete and fail end them", async () => {
      const [a, b, later] = await queue.enqueue(db, [
        { kind: "t1", accountId: null, payload: { n: 1 } },
        { kind: "t1", accountId: null, payload: { n: 2 } },
        { kind: "t1", accountId: null, payload: { n: 3 }, runAt: Date.now() + 60_000 },
      ]);
      const claimed = await queue.claim("w1", ["t1"], 10, 5000);
      assert.deepEqual(claimed.map((j) => j.id).sort(), [a, b].sort());
      assert.ok(claimed.every((j) => j.status === "running" && j.attempts === 1 && j.locked_by === "w1"));
      assert.deepEqual(await queue.claim("w2", ["t1"], 10, 5000), [], "leased jobs are not claimed twice");
      await queue.complete(a!, "w1", { ok: true });
      await queue.fail(b!, "w1", "broken");
      assert.equal((await queue.get(a!))?.status, "done");
      assert.equal((await queue.get(a!))?.result, '{"ok":true}');
      assert.equal((await queue.get(b!))?.status, "failed");
      assert.equal((await queue.get(later!))?.status, "queued");
      await db.deleteFrom("jobs").execute();
    });

    test("a job whose worker died is claimed again when its lease runs out", async () => {
      const [id] = await queue.enqueue(db, [{ kind: "t2", accountId: null, payload: {} }]);
      await queue.claim("dead-worker", ["t2"], 1, 100);
      await sleep(150);
      const [again] = await queue.claim("w2", ["t2"], 1, 5000);
      assert.equal(again?.id, id);
      assert.equal(again?.attempts, 2);
      await queue.complete(id!, "dead-worker");
      assert.equal(
        (await queue.get(id!))?.status,
        "running",
        "a worker that lost its lease cannot finish the job",
      );
      await queue.complete(id!, "w2");
      assert.equal((await queue.get(id!))?.status, "done");
    });

    test("concurrent claimers never take the same job", async () => {
      await queue.enqueue(
        db,
        Array.from({ length: 60 }, (_, i) => ({ kind: "t3", accountId: null, payload: { i } })),
      );
      const extra = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
      const other = new JobQueue(extra.db, dialect);
      const seen: number[] = [];
      await Promise.all(
        [queue, other, queue, other].map(async (q, w) => {
          for (;;) {
            const jobs = await q.claim(`w${w}`, ["t3"], 7, 10_000);
            if (jobs.length === 0) return;
            seen.push(...jobs.map((j) => j.id));
          }
        }),
      );
      await extra.close();
      assert.equal(seen.length, 60);
      assert.equal(new Set(seen).size, 60);
    });

    test("a per-account claim leaves no account more than its share running, even when claimers race", async () => {
      const accounts = [];
      for (const name of ["share-a", "share-b"]) {
        const row = await db
          .insertInto("accounts")
          .values({ name, created: "2026-01-01T00:00:00Z" })
          .returning("id")
          .executeTakeFirstOrThrow();
        accounts.push(row.id);
      }
      const [a, b] = accounts as [number, number];
      await queue.enqueue(db, [
        ...Array.from({ length: 10 }, (_, i) => ({ kind: "t5", accountId: a, payload: { i } })),
        ...Array.from({ length: 3 }, (_, i) => ({ kind: "t5", accountId: b, payload: { i } })),
        { kind: "t5", accountId: null, payload: {} },
      ]);
      const extra = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
      const other = new JobQueue(extra.db, dialect);
      const claims = await Promise.all(
        [queue, other, queue, other].map((q, w) => q.claim(`w${w}`, ["t5"], 3, 10_000, 2)),
      );
      await extra.close();
      const claimed = claims.flat();
      const of = (account: number | null) => claimed.filter((j) => j.account_id === account).length;
      assert.equal(of(a), 2, "account a: its share");
      assert.equal(of(b), 2, "account b: its share");
      assert.equal(of(null), 1, "jobs without an account are not limited");
      assert.equal(new Set(claimed.map((j) => j.id)).size, claimed.length);
      // One ends: its account may take one more, not two.
      const done = claimed.find((j) => j.account_id === a)!;
      await queue.complete(done.id, done.locked_by!);
      const next = await queue.claim("w9", ["t5"], 10, 10_000, 2);
      assert.deepEqual(
        next.map((j) => j.account_id),
        [a],
      );
      await db.deleteFrom("jobs").execute();
    });

    test("the worker runs handlers, retries on RetryLater, records failures", async () => {
      const worker = new Worker(queue, { log: quiet, pollMs: 20, leaseMs: 2000 });
      const runs: number[] = [];
      worker.handle("ok", async (job) => {
        runs.push(job.id);
        return "done";
      });
      let tries = 0;
      worker.handle("flaky", async () => {
        tries++;
        if (tries < 3) throw new RetryLater("not yet", Date.now());
        return "third time";
      });
      worker.handle("broken", async () => {
        throw new Error("always");
      });
      const [ok, flaky, broken] = await queue.enqueue(db, [
        { kind: "ok", accountId: null, payload: {} },
        { kind: "flaky", accountId: null, payload: {} },
        { kind: "broken", accountId: null, payload: {} },
      ]);
      worker.start();
      for (let i = 0; i < 200 && (await queue.get(flaky!))?.status !== "done"; i++) await sleep(20);
      await worker.stop();
      assert.deepEqual(runs, [ok]);
      assert.equal((await queue.get(ok!))?.status, "done");
      assert.equal((await queue.get(flaky!))?.status, "done");
      assert.equal((await queue.get(flaky!))?.attempts, 3);
      assert.equal((await queue.get(broken!))?.status, "failed");
      assert.equal((await queue.get(broken!))?.last_error, "always");
    });
  });
}

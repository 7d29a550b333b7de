// SQLite's write connection never waits inside SQLite for another connection's lock: a write that
// finds it taken pauses without blocking the event loop, lets the process's other queries run, and
// goes through once the lock is free, or fails with DatabaseBusyError past its deadline. The RADIUS
// write batcher keeps what it could not write and writes it later. The lock here is held by a second
// connection of this process (locked-database.test.ts uses a second process).
import assert from "node:assert/strict";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { describe, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { type Database, openDatabase, withoutWaiting } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { DatabaseBusyError, isDatabaseBusy } from "../../src/db/sqlite-writer.ts";
import { TransactionBatcher } from "../../src/db/transaction-batcher.ts";
import { createTestDatabase } from "../support/databases.ts";

const NOW = "2026-01-01T00:00:00Z";
/**
 * How long the tests below hold the lock while a write waits for it: a write that waited inside
 * SQLite would block the event loop about this long.
 */
const HOLD_MS = 1000;
/**
 * Far below HOLD_MS, far above the pauses of a busy machine (a process descheduled for 160 ms was
 * seen with two dozen runnable processes on two cores).
 */
const PROMPT_MS = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function withLockedDatabase(
  fn: (
    database: Database,
    lock: { release(): void; releaseIn(ms: number): Promise<number> },
  ) => Promise<void>,
  writeWaitMs = 5000,
): Promise<void> {
  const testDb = await createTestDatabase("sqlite");
  const database = openDatabase({ dataDir: testDb.dataDir, writeWaitMs });
  const holder = new SqliteDatabase(path.join(testDb.dataDir, "wisp.db"));
  try {
    await migrate(database);
    holder.exec("begin immediate");
    const release = () => {
      if (holder.inTransaction) holder.exec("commit");
    };
    await fn(database, {
      release,
      releaseIn: (ms) =>
        sleep(ms).then(() => {
          release();
          return performance.now();
        }),
    });
  } finally {
    holder.close();
    await database.close();
    await testDb.drop();
  }
}

/** The longest gap between ticks of a 5 ms timer while `work` runs: how long the loop was blocked. */
async function loopBlockedWhile<T>(work: Promise<T>): Promise<{ value: T; blockedMs: number }> {
  let last = performance.now();
  let blockedMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    blockedMs = Math.max(blockedMs, now - last);
    last = now;
  }, 5);
  try {
    return { value: await work, blockedMs };
  } finally {
    clearInterval(timer);
  }
}

const accountNames = (database: Database) =>
  database.db
    .selectFrom("accounts")
    .select("name")
    .orderBy("id")
    .execute()
    .then((rows) => rows.map((r) => r.name));

describe("SQLite writes while another connection holds the lock", () => {
  test("a transaction waits without blocking, lets reads through, and commits after the release", async () => {
    await withLockedDatabase(async (database, lock) => {
      const { db } = database;
      const start = performance.now();
      const write = db.transaction().execute(async (trx) => {
        await trx.insertInto("accounts").values({ name: "waited", created: NOW }).execute();
        return performance.now();
      });
      await sleep(50);
      // A read on the same (writer) connection is not queued behind the waiting transaction.
      const read = performance.now();
      assert.deepEqual(await accountNames(database), []);
      assert.ok(performance.now() - read < PROMPT_MS, "the read waited for the waiting write");
      const releasedAt = lock.releaseIn(HOLD_MS);
      const { value: committedAt, blockedMs } = await loopBlockedWhile(write);
      assert.ok(committedAt >= (await releasedAt), "committed only after the release");
      assert.ok(committedAt - start < HOLD_MS + 1000);
      assert.ok(blockedMs < PROMPT_MS, `the event loop was blocked for ${blockedMs} ms`);
      assert.deepEqual(await accountNames(database), ["waited"]);
    });
  });

  test("a statement outside a transaction waits the same way", async () => {
    await withLockedDatabase(async (database, lock) => {
      const write = database.db.insertInto("accounts").values({ name: "alone", created: NOW }).execute();
      const releasedAt = lock.releaseIn(HOLD_MS);
      const { blockedMs } = await loopBlockedWhile(write);
      assert.ok(performance.now() >= (await releasedAt));
      assert.ok(blockedMs < PROMPT_MS, `the event loop was blocked for ${blockedMs} ms`);
      assert.deepEqual(await accountNames(database), ["alone"]);
    });
  });

  test("past the deadline the write fails with DatabaseBusyError and leaves nothing behind", async () => {
    await withLockedDatabase(async (database, lock) => {
      const { db } = database;
      const start = performance.now();
      const { value: error, blockedMs } = await loopBlockedWhile(
        db
          .transaction()
          .execute((trx) => trx.insertInto("accounts").values({ name: "late", created: NOW }).execute())
          .then(
            () => assert.fail("the write went through a held lock"),
            (e: unknown) => e,
          ),
      );
      const waited = performance.now() - start;
      assert.ok(error instanceof DatabaseBusyError, String(error));
      assert.ok(isDatabaseBusy(error));
      assert.ok(waited >= HOLD_MS && waited < HOLD_MS + 1000, `gave up after ${waited} ms`);
      assert.ok(blockedMs < PROMPT_MS, `the event loop was blocked for ${blockedMs} ms`);
      const autocommit = await db
        .insertInto("accounts")
        .values({ name: "late too", created: NOW })
        .execute()
        .catch((e: unknown) => e);
      assert.ok(autocommit instanceof DatabaseBusyError);
      lock.release();
      // The connection is left as it was: no transaction open, the next write goes through.
      await db.insertInto("accounts").values({ name: "after", created: NOW }).execute();
      assert.deepEqual(await accountNames(database), ["after"]);
    }, HOLD_MS);
  });

  test("a migrated database opens and migrates (nothing to do) at once", async () => {
    await withLockedDatabase(async (database) => {
      const start = performance.now();
      const again = openDatabase({ dataDir: path.dirname(database.location) });
      try {
        await migrate(again);
        assert.deepEqual(await accountNames(again), []);
      } finally {
        await again.close();
      }
      assert.ok(performance.now() - start < 1000, "opening waited for the lock");
    });
  });

  test("withoutWaiting fails at once instead", async () => {
    await withLockedDatabase(async (database) => {
      const start = performance.now();
      const error = await withoutWaiting(database.db)
        .transaction()
        .execute((trx) => trx.insertInto("accounts").values({ name: "now", created: NOW }).execute())
        .catch((e: unknown) => e);
      assert.ok(error instanceof DatabaseBusyError);
      assert.ok(performance.now() - start < PROMPT_MS);
    });
  });
});

describe("the write batcher while another connection holds the lock", () => {
  const insert = (name: string) => async (trx: Parameters<Parameters<TransactionBatcher["run"]>[0]>[0]) => {
    await trx.insertInto("accounts").values({ name, created: NOW }).execute();
    return name;
  };

  test("keeps every write, lets store() callers go on at once, answers run() callers once stored", async () => {
    await withLockedDatabase(async (database, lock) => {
      const batcher = new TransactionBatcher(database.db);
      const start = performance.now();
      const kept = await Promise.all([batcher.store(insert("a")), batcher.store(insert("b"))]);
      assert.deepEqual(kept, [undefined, undefined]);
      assert.ok(performance.now() - start < PROMPT_MS, "store() waited for the lock");
      // Queued while the batcher knows the database is busy: goes on without trying.
      const third = performance.now();
      await batcher.store(insert("c"));
      assert.ok(performance.now() - third < PROMPT_MS);
      const session = batcher.run(insert("d"));
      let stored = false;
      void session.then(() => {
        stored = true;
      });
      await sleep(300);
      assert.equal(stored, false, "run() answered before its write was stored");
      assert.deepEqual(await accountNames(database), []);
      const releasedAt = lock.releaseIn(HOLD_MS);
      const { blockedMs } = await loopBlockedWhile(batcher.drain());
      assert.ok(performance.now() >= (await releasedAt));
      assert.ok(blockedMs < PROMPT_MS, `the event loop was blocked for ${blockedMs} ms`);
      assert.equal(await session, "d");
      assert.deepEqual(await accountNames(database), ["a", "b", "c", "d"]);
      // Not busy any more: store() waits for its write again.
      await batcher.store(insert("e"));
      assert.deepEqual(await accountNames(database), ["a", "b", "c", "d", "e"]);
    });
  });

  test("a write that fails for itself is reported, the others are stored", async () => {
    await withLockedDatabase(async (database, lock) => {
      const late: unknown[] = [];
      const batcher = new TransactionBatcher(database.db, { onLateFailure: (error) => late.push(error) });
      lock.release();
      await batcher.run(insert("taken"));
      const [dup, ok] = await Promise.allSettled([batcher.run(insert("taken")), batcher.run(insert("fine"))]);
      assert.equal(dup.status, "rejected");
      assert.deepEqual(ok, { status: "fulfilled", value: "fine" });
      // A store() whose caller went on while the database was busy cannot be rejected: reported.
      const relock = new SqliteDatabase(path.join(database.location));
      relock.exec("begin immediate");
      await batcher.store(insert("taken"));
      await batcher.store(insert("kept"));
      relock.exec("commit");
      relock.close();
      await batcher.drain();
      assert.equal(late.length, 1);
      assert.ok(!isDatabaseBusy(late[0]));
      assert.deepEqual(await accountNames(database), ["taken", "fine", "kept"]);
    });
  });

  test("writes queued in one turn share a transaction; a write of a later turn gets its own", async () => {
    await withLockedDatabase(async (database, lock) => {
      lock.release();
      const batcher = new TransactionBatcher(database.db);
      const seen = new Set<unknown>();
      const inTransaction =
        (name: string) => async (trx: Parameters<Parameters<TransactionBatcher["run"]>[0]>[0]) => {
          seen.add(trx);
          return insert(name)(trx);
        };
      const first = Promise.all(["t1", "t2", "t3"].map((name) => batcher.run(inTransaction(name))));
      assert.deepEqual(await first, ["t1", "t2", "t3"]);
      assert.equal(seen.size, 1, "one transaction for the writes of one turn");
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(await batcher.run(inTransaction("t4")), "t4");
      assert.equal(seen.size, 2, "a later turn's write in a transaction of its own");
      assert.deepEqual(await accountNames(database), ["t1", "t2", "t3", "t4"]);
    });
  });

  test("drain() with nothing queued resolves at once", async () => {
    await withLockedDatabase(async (database) => {
      const batcher = new TransactionBatcher(database.db);
      const start = performance.now();
      await batcher.drain();
      assert.ok(performance.now() - start < PROMPT_MS);
    });
  });
});

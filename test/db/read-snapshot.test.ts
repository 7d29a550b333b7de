// SQLite's hot reads keep one snapshot for the reads of one event-loop turn, on the writer
// connection when it is free, else on a read connection (database.ts, openReader). What that must
// never cost: this process's own commits are seen by the very next read, another process's commits
// from the next turn on, a transaction is never seen half-done, and the WAL can start over while the
// server reads. What it buys: the writer's page cache, which its own commits leave valid.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { prepared, preparedColumn } from "../../src/db/prepared.ts";
import { createTestDatabase } from "../support/databases.ts";

const NOW = "2026-01-01T00:00:00Z";
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

async function setUp() {
  const testDb = await createTestDatabase("sqlite");
  const database = openDatabase({ dataDir: testDb.dataDir });
  await migrate(database);
  const { db } = database;
  const [account] = await db
    .insertInto("accounts")
    .values({ name: "a", created: NOW })
    .returning("id")
    .execute();
  const accountId = account!.id;
  const names = prepared(
    db,
    (id: number) =>
      db.selectFrom("users").select("username").where("account_id", "=", id).orderBy("username"),
    1,
  );
  const list = async () => (await names(accountId)).map((r) => r.username);
  const user = (username: string) => ({
    account_id: accountId,
    username,
    email: "",
    fullname: "",
    status: "enabled",
    created: NOW,
    updated: NOW,
  });
  return { database, db, accountId, list, user, file: path.join(testDb.dataDir, "wisp.db") };
}

test("a commit of this process is seen by the next read of the same turn", async () => {
  const { database, db, list, user } = await setUp();
  try {
    assert.deepEqual(await list(), []); // opens this turn's snapshot
    await db.insertInto("users").values(user("alice")).execute();
    assert.deepEqual(await list(), ["alice"]);
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("users").values(user("bob")).execute();
      // Not committed yet: the read connection never sees half a transaction.
      assert.deepEqual(await list(), ["alice"]);
    });
    assert.deepEqual(await list(), ["alice", "bob"]);
    // A write that returns rows (INSERT ... RETURNING, committed on its own) is a write too.
    await db.insertInto("users").values(user("dave")).returning("id").execute();
    assert.deepEqual(await list(), ["alice", "bob", "dave"]);
  } finally {
    await database.close();
  }
});

test("another process's commit is seen from the next turn on", async () => {
  const { database, accountId, list, file } = await setUp();
  const other = new SqliteDatabase(file);
  try {
    assert.deepEqual(await list(), []);
    other
      .prepare(
        "insert into users (account_id, username, email, fullname, status, created, updated) values (?, 'carol', '', '', 'enabled', ?, ?)",
      )
      .run(accountId, NOW, NOW);
    // Same turn: the snapshot taken before the other connection's commit.
    assert.deepEqual(await list(), []);
    await nextTurn();
    assert.deepEqual(await list(), ["carol"]);
  } finally {
    other.close();
    await database.close();
  }
});

test("reads between writes leave the WAL free to start over", async () => {
  const { database, db, list, user, file } = await setUp();
  try {
    // Reads and writes interleaved within turns, as RADIUS logins and their recording are: a
    // snapshot held across the writer's commits would pin the WAL's start and it would only grow.
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 50; i++) {
        await list();
        await db
          .insertInto("users")
          .values(user(`u${round}-${i}`))
          .execute();
      }
      await nextTurn();
    }
    const wal = fs.statSync(`${file}-wal`).size;
    // SQLite checkpoints at 1,000 pages (4 MiB with 4 KiB pages); 2,000 inserts with their indexes
    // write far more than that in all, so a WAL that never restarted would be well past the mark.
    assert.ok(wal < 6 * 1024 * 1024, `the WAL grew to ${wal} bytes`);
    assert.equal((await list()).length, 2000);
  } finally {
    await database.close();
  }
});

/** read(2)/pread(2) calls this process has made so far (/proc/self/io's syscr, Linux). */
function readCalls(): number {
  const io = fs.readFileSync("/proc/self/io", "utf8");
  return Number(/^syscr: (\d+)$/m.exec(io)![1]);
}

test("reads between this process's commits find their pages in the cache", async () => {
  const { database, db, list, user } = await setUp();
  try {
    // Logins as the RADIUS server runs them: each reads, then its attempt is written, turn by turn.
    // A connection whose cache another connection's commit made stale reads every page again
    // (pread) at its next read; the writer's own cache survives its commits.
    // The WAL starts empty and 60 inserts stay under SQLite's automatic checkpoint (1,000 WAL
    // pages), whose reads would count.
    await sql`pragma wal_checkpoint(truncate)`.execute(db);
    const rounds = 60;
    await list();
    const before = readCalls();
    for (let i = 0; i < rounds; i++) {
      assert.equal((await list()).length, i);
      await db
        .insertInto("users")
        .values(user(`u${i}`))
        .execute();
      await nextTurn();
    }
    const reads = readCalls() - before;
    assert.ok(reads < rounds / 4, `${reads} read calls for ${rounds} reads after commits`);
  } finally {
    await database.close();
  }
});

test("a read while a stream holds the writer connection reads the committed state", async () => {
  const { database, db, list, user } = await setUp();
  try {
    for (const name of ["a", "b", "c"]) await db.insertInto("users").values(user(name)).execute();
    await list(); // a snapshot of this turn, before the stream takes the connection
    const streamed: string[] = [];
    for await (const row of db.selectFrom("users").select("username").orderBy("username").stream()) {
      streamed.push(row.username);
      // The writer is busy iterating: these reads go to the read connection, turn after turn.
      assert.deepEqual(await list(), ["a", "b", "c"]);
      await nextTurn();
    }
    assert.deepEqual(streamed, ["a", "b", "c"]);
    // The connection is usable for writes afterwards (no snapshot left open on it).
    await db.insertInto("users").values(user("d")).execute();
    assert.deepEqual(await list(), ["a", "b", "c", "d"]);
  } finally {
    await database.close();
  }
});

test("hot reads give the rows better-sqlite3 would, and leave Kysely's statements as they were", async () => {
  const { database, db, accountId, user, file } = await setUp();
  const plain = new SqliteDatabase(file, { readonly: true });
  try {
    await db.insertInto("users").values(user("alice")).execute();
    // Two columns named alike: the last one wins, as in better-sqlite3's own row objects.
    const wideQuery = (id: number) =>
      db
        .selectFrom("users")
        .innerJoin("accounts", "accounts.id", "users.account_id")
        .select(["users.id", "accounts.id", "users.username", "accounts.name", "users.status"])
        .where("users.account_id", "=", id);
    const wide = prepared(db, wideQuery, 1);
    const rows = await wide(accountId);
    const compiled = wideQuery(accountId).compile();
    assert.deepEqual(rows, plain.prepare(compiled.sql).all(...compiled.parameters));
    assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
    // A plucked hot read and Kysely with the same SQL text: Kysely still reads row objects.
    const byAccount = (id: number) => db.selectFrom("users").select("username").where("account_id", "=", id);
    const names = preparedColumn(db, byAccount, 1);
    assert.deepEqual(await names(accountId), ["alice"]);
    assert.deepEqual(await byAccount(accountId).execute(), [{ username: "alice" }]);
    assert.deepEqual(await names(accountId), ["alice"]);
  } finally {
    plain.close();
    await database.close();
  }
});

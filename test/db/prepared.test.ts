// Compiled-once queries bind each argument where it lands in the SQL, whatever the order of the
// function's parameters, on both databases.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { prepared, preparedInsert, preparedLists, preparedOn } from "../../src/db/prepared.ts";
import { createTestDatabase, dialects } from "../support/databases.ts";

for (const { dialect, skip } of await dialects()) {
  describe(`compiled-once queries on ${dialect}`, { skip }, () => {
    test("arguments bind by position in the SQL, not in the call; constants stay", async () => {
      const testDb = await createTestDatabase(dialect);
      const database = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
      try {
        await migrate(database);
        const { db } = database;
        const now = "2026-01-01T00:00:00Z";
        const [a] = await db
          .insertInto("accounts")
          .values({ name: "a", created: now })
          .returning("id")
          .execute();
        const [b] = await db
          .insertInto("accounts")
          .values({ name: "b", created: now })
          .returning("id")
          .execute();
        for (const [accountId, username] of [
          [a!.id, "x"],
          [b!.id, "x"],
          [b!.id, "y"],
        ] as const) {
          await db
            .insertInto("users")
            .values({
              account_id: accountId,
              username,
              email: "",
              fullname: "",
              status: "enabled",
              created: now,
              updated: now,
            })
            .execute();
        }
        // The SQL has username before account_id; the function takes them the other way round.
        const find = prepared(
          db,
          (accountId: number, username: string) =>
            db
              .selectFrom("users")
              .select(["account_id", "username"])
              .where("username", "=", username)
              .where("account_id", "=", accountId)
              .limit(5),
          2,
        );
        assert.deepEqual(await find(b!.id, "y"), [{ account_id: b!.id, username: "y" }]);
        assert.deepEqual(await find(a!.id, "x"), [{ account_id: a!.id, username: "x" }]);
        assert.deepEqual(await find(a!.id, "y"), []);
        const onConnection = preparedOn(
          (conn, username: string, accountId: number) =>
            conn
              .selectFrom("users")
              .select("username")
              .where("account_id", "=", accountId)
              .where("username", "=", username),
          2,
        );
        const inTransaction = await db.transaction().execute((trx) => onConnection(trx, "y", b!.id));
        assert.deepEqual(inTransaction, [{ username: "y" }]);
        // IN lists of several lengths: each shape compiled once, lists longer than 2 built each time.
        const byLists = preparedLists(
          (conn, accounts: number[], usernames: string[]) =>
            conn
              .selectFrom("users")
              .select(["account_id", "username"])
              .where("username", "in", usernames)
              .where("account_id", "in", accounts)
              .orderBy("account_id")
              .orderBy("username"),
          2,
        );
        const pairs = async (accounts: number[], usernames: string[]) =>
          (await db.transaction().execute((trx) => byLists(trx, accounts, usernames))).map(
            (r) => `${r.account_id === a!.id ? "a" : "b"}:${r.username}`,
          );
        assert.deepEqual(await pairs([b!.id], ["y"]), ["b:y"]);
        assert.deepEqual(await pairs([a!.id, b!.id], ["x"]), ["a:x", "b:x"]);
        assert.deepEqual(await pairs([b!.id], ["x", "y"]), ["b:x", "b:y"]);
        assert.deepEqual(await pairs([a!.id], ["y", "x"]), ["a:x"]);
        assert.deepEqual(await pairs([a!.id, b!.id], ["x", "y", "z"]), ["a:x", "b:x", "b:y"]);
        assert.deepEqual(await pairs([b!.id], ["y"]), ["b:y"], "a shape used before, other values");
      } finally {
        await database.close();
        await testDb.drop();
      }
    });

    test("multi-row inserts: each row count compiled once, values in their columns, NULL for undefined", async () => {
      const testDb = await createTestDatabase(dialect);
      const database = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
      try {
        await migrate(database);
        const { db } = database;
        type Row = { username: string; authdate: string | Date; reason?: string | null; reply: string };
        // The columns in another order than the table's; two row counts cached, more built each time.
        const insert = preparedInsert<Row>(
          (conn, rows) => conn.insertInto("radpostauth").values(rows),
          ["reason", "authdate", "username", "reply"],
          2,
        );
        const day = (i: number) =>
          dialect === "sqlite" ? `2026-01-0${i} 00:00:00` : new Date(`2026-01-0${i}T00:00:00Z`);
        const row = (username: string, i: number, reason?: string | null): Row => ({
          username,
          authdate: day(i),
          reply: reason ? "Access-Reject" : "Access-Accept",
          ...(reason === undefined ? {} : { reason }),
        });
        const batches: Row[][] = [
          [row("one", 1, "wrong password")],
          [row("two", 2, "unknown user"), row("three", 3)],
          [row("four", 4, "expired")],
          [row("many1", 1, "a"), row("many2", 2, "b"), row("many3", 3, "c")],
          [row("five", 5, null), row("six", 6, "disabled")],
        ];
        for (const rows of batches) await db.transaction().execute((trx) => insert(trx, rows));
        await insert(db, []);
        const stored = await db
          .selectFrom("radpostauth")
          .select(["username", "reason", "reply", "authdate"])
          .orderBy("id")
          .execute();
        assert.deepEqual(
          stored.map((r) => [r.username, r.reason, r.reply]),
          batches.flat().map((r) => [r.username, r.reason ?? null, r.reply]),
        );
        const dayOf = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v)).slice(0, 10);
        assert.deepEqual(
          stored.map((r) => dayOf(r.authdate)),
          batches.flat().map((r) => dayOf(r.authdate)),
        );
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}

// Compiled-once queries bind each argument where it lands in the SQL, whatever the order of the
// function's parameters, on both databases.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { prepared, preparedOn } from "../../src/db/prepared.ts";
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
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}

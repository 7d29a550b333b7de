// Each user row carries its API JSON and each account its number of users (migration 008). The
// database's triggers keep both right for every writer: the services, the demo seed, plain SQL.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { migrate } from "../../src/db/migrate.ts";
import { dialects, withDatabase } from "../support/databases.ts";

const FIELDS = ["id", "username", "email", "fullname", "status", "created", "updated", "plan_id"] as const;
const NOW = "2026-01-01T00:00:00Z";

for (const { dialect, skip } of await dialects()) {
  describe(`stored user JSON and user counts on ${dialect}`, { skip }, () => {
    test("backfilled by the migration, then kept by inserts, updates and deletes in plain SQL", async () => {
      await withDatabase(
        dialect,
        async (database) => {
          const { db } = database;
          const check = async () => {
            const users = await db.selectFrom("users").selectAll().orderBy("id").execute();
            for (const user of users) {
              const expected = Object.fromEntries(FIELDS.map((f) => [f, user[f]]));
              assert.deepEqual(JSON.parse(user.api_json), expected, `user ${user.username}`);
              assert.deepEqual(Object.keys(JSON.parse(user.api_json)), [...FIELDS], "fields in order");
            }
            const accounts = await db.selectFrom("accounts").select(["id", "user_count"]).execute();
            for (const account of accounts) {
              const count = users.filter((u) => u.account_id === account.id).length;
              assert.equal(account.user_count, count, `account ${account.id}`);
            }
            return users;
          };
          const insert = (accountId: number, username: string) =>
            sql`insert into users (account_id, username, email, fullname, status, created, updated)
              values (${accountId}, ${username}, ${`${username}@example.com`}, ${'Quote " and \\ back'}, 'enabled', ${NOW}, ${NOW})`.execute(
              db,
            );
          for (const name of ["a", "b"]) {
            await sql`insert into accounts (name, created) values (${name}, ${NOW})`.execute(db);
          }
          const [a, b] = await db.selectFrom("accounts").select("id").orderBy("id").execute();
          await insert(a!.id, "before-1");
          await insert(a!.id, "before-2");
          await insert(b!.id, "before-3");

          await migrate(database);
          assert.equal((await check()).length, 3);

          await insert(b!.id, "after-1");
          await sql`update users set fullname = 'Renamed', status = 'disabled' where username = 'before-1'`.execute(
            db,
          );
          await sql`update users set username = 'before-2-renamed' where username = 'before-2'`.execute(db);
          await sql`delete from users where username = 'before-3'`.execute(db);
          const users = await check();
          assert.deepEqual(
            users.map((u) => u.username),
            ["before-1", "before-2-renamed", "after-1"],
          );
          assert.equal(JSON.parse(users[0]!.api_json).fullname, "Renamed");
        },
        "007_console",
      );
    });
  });
}

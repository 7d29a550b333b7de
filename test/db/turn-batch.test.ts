// The users asked for in one turn of the event loop are read together on PostgreSQL, each caller
// still getting its own user (or nothing), never another account's.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { UsersRepo } from "../../src/core/users/repo.ts";
import { TurnBatch } from "../../src/db/turn-batch.ts";
import { dialects, withDatabase } from "../support/databases.ts";

const databases = await dialects();

describe("reads coalesced per turn", () => {
  test("one load per turn; each key gets its own value; a failed load fails its callers", async () => {
    const loads: string[][] = [];
    const batch = new TurnBatch<number>(async (keys) => {
      loads.push(keys);
      if (keys.includes("boom")) throw new Error("load failed");
      return new Map(keys.filter((k) => k !== "none").map((k) => [k, Number(k) * 2]));
    });
    assert.deepEqual(await Promise.all(["1", "2", "1", "none"].map((k) => batch.get(k))), [
      2,
      4,
      2,
      undefined,
    ]);
    assert.deepEqual(loads, [["1", "2", "none"]]);
    await assert.rejects(Promise.all([batch.get("3"), batch.get("boom")]), /load failed/);
    assert.equal(await batch.get("5"), 10, "a later turn loads again");
  });

  for (const { dialect, skip } of databases) {
    test(`users by id on ${dialect}: right user per caller, other accounts' users not found`, {
      skip,
    }, async () => {
      await withDatabase(dialect, async (database) => {
        const core = createCore(database, { publicUrl: "http://localhost" });
        const a = await core.accounts.create("a");
        const b = await core.accounts.create("b");
        const ann = await core.users.create(a.id, { username: "ann" });
        const bob = await core.users.create(a.id, { username: "bob" });
        const other = await core.users.create(b.id, { username: "other" });
        const loads: number[] = [];
        const load = UsersRepo.prototype.loadJson;
        UsersRepo.prototype.loadJson = function (this: UsersRepo, keys: string[]) {
          loads.push(keys.length);
          return load.call(this, keys);
        };
        try {
          const answers = await Promise.all(
            [ann.id, bob.id, other.id, 999_999, ann.id].map((id) =>
              core.users.getJson(a.id, id).then(
                (json) => JSON.parse(json).username as string,
                (error: Error) => error.message,
              ),
            ),
          );
          assert.deepEqual(answers, [
            "ann",
            "bob",
            `user ${other.id} not found`,
            "user 999999 not found",
            "ann",
          ]);
          // SQLite reads each at once on its read connection; PostgreSQL reads the four together.
          assert.deepEqual(loads, dialect === "postgres" ? [4] : []);
        } finally {
          UsersRepo.prototype.loadJson = load;
        }
      });
    });
  }
});

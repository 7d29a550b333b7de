// Reads outside transactions run on SQLite's second connection, and API keys verified by a server
// share one freshness check per turn of the event loop: neither may ever miss a committed change.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { KeysRepo } from "../../src/core/keys/repo.ts";
import { type KeyPrincipal, KeysService } from "../../src/core/keys/service.ts";
import { openDatabase } from "../../src/db/database.ts";
import { prepared } from "../../src/db/prepared.ts";
import { dialects, withDatabase } from "../support/databases.ts";

function verifyQueued(keys: KeysService, key: string): Promise<KeyPrincipal | null> {
  return new Promise((resolve, reject) =>
    keys.verifyQueued(key, (error, principal) => (error ? reject(error) : resolve(principal))),
  );
}

for (const { dialect, skip } of await dialects()) {
  describe(`key freshness and hot reads on ${dialect}`, { skip }, () => {
    test("a key revoked by another connection is refused by the next verification", async () => {
      await withDatabase(dialect, async (server, testDb) => {
        // Another process (the CLI, another Wisp) on the same data.
        const other = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
        try {
          const core = createCore(server, { publicUrl: "http://localhost" });
          const account = await core.accounts.resolve(undefined);
          const { key, row } = await core.keys.create(account, { name: "k" });
          const second = await core.keys.create(account, { name: "k2" });

          assert.equal((await verifyQueued(core.keys, key))?.keyId, row.id);
          assert.equal((await verifyQueued(core.keys, key))?.keyId, row.id, "remembered, still valid");
          await new KeysService(new KeysRepo(other.db, other.dialect)).revoke(row.id);
          assert.equal(await verifyQueued(core.keys, key), null, "queued: revoked elsewhere");
          assert.equal(await verifyQueued(core.keys, key), null, "again: revoked elsewhere");

          // Several keys queued in one turn: all answered, each correctly, from one check.
          const answers = await Promise.all([
            verifyQueued(core.keys, second.key),
            verifyQueued(core.keys, key),
            verifyQueued(core.keys, "wisp_not-a-key"),
            verifyQueued(core.keys, second.key),
          ]);
          assert.deepEqual(
            answers.map((p) => p?.keyId ?? null),
            [second.row.id, null, null, second.row.id],
          );
        } finally {
          await other.close();
        }
      });
    });

    test("one freshness check serves every key queued in the same turn", async () => {
      await withDatabase(dialect, async (database) => {
        const core = createCore(database, { publicUrl: "http://localhost" });
        const repo = new KeysRepo(database.db, database.dialect);
        let checks = 0;
        const changedElsewhere = repo.changedElsewhere.bind(repo);
        repo.changedElsewhere = () => {
          checks++;
          return changedElsewhere();
        };
        const keys = new KeysService(repo);
        const { key } = await keys.create(await core.accounts.resolve(undefined), { name: "k" });
        await Promise.all(Array.from({ length: 20 }, () => verifyQueued(keys, key)));
        assert.equal(checks, 1);
        await verifyQueued(keys, key);
        assert.equal(checks, 2, "a later turn checks again");

        // Keys the check left unknown are read together: one query for the turn.
        const lookups: string[] = [];
        const findByHash = repo.findByHash.bind(repo);
        const findByHashes = repo.findByHashes.bind(repo);
        repo.findByHash = (hash) => {
          lookups.push("one");
          return findByHash(hash);
        };
        repo.findByHashes = (hashes) => {
          lookups.push(`${hashes.length} together`);
          return findByHashes(hashes);
        };
        const account = await core.accounts.resolve(undefined);
        const fresh = await Promise.all([
          keys.create(account, { name: "a" }),
          keys.create(account, { name: "b" }),
        ]);
        const unknownKey = `wisp_${"x".repeat(40)}`;
        const answers = await Promise.all(
          [fresh[0].key, fresh[1].key, unknownKey, fresh[0].key].map((k) => verifyQueued(keys, k)),
        );
        assert.deepEqual(
          answers.map((p) => p?.keyId ?? null),
          [fresh[0].row.id, fresh[1].row.id, null, fresh[0].row.id],
        );
        assert.deepEqual(lookups, ["3 together"]);
        // Recording the keys' first use was a commit, which the next turn's check sees (on SQLite;
        // on PostgreSQL every turn reads the keys again): one lookup. Then none on SQLite.
        await verifyQueued(keys, fresh[1].key);
        await verifyQueued(keys, fresh[1].key);
        assert.deepEqual(
          lookups,
          dialect === "sqlite" ? ["3 together", "one"] : ["3 together", "one", "one"],
          "a known key needs no query while nothing changed",
        );
      });
    });

    test("hot reads see committed rows only: never a write still inside a transaction", async () => {
      await withDatabase(dialect, async (database) => {
        const { db } = database;
        const now = "2026-01-01T00:00:00Z";
        const count = prepared(
          db,
          (name: string) =>
            db
              .selectFrom("accounts")
              .select((eb) => eb.fn.countAll<number>().as("n"))
              .where("name", "=", name),
          1,
        );
        const seen = await db.transaction().execute(async (trx) => {
          await trx.insertInto("accounts").values({ name: "pending", created: now }).execute();
          return Number((await count("pending"))[0]!.n);
        });
        assert.equal(seen, 0, "a read outside the transaction does not see its uncommitted row");
        assert.equal(Number((await count("pending"))[0]!.n), 1, "and sees it once committed");
      });
    });
  });
}

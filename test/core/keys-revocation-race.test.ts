// A key lookup that started before a revocation committed may answer for the request it serves
// (that request arrived before the revocation), but it must never put the key back in the cache:
// every request that arrives after the revocation committed is refused, on PostgreSQL as on SQLite.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { KeysRepo } from "../../src/core/keys/repo.ts";
import { type KeyPrincipal, KeysService } from "../../src/core/keys/service.ts";
import { isoNow } from "../../src/core/shared/time.ts";
import { openDatabase } from "../../src/db/database.ts";
import { dialects, withDatabase } from "../support/databases.ts";

function verifyQueued(keys: KeysService, key: string): Promise<KeyPrincipal | null> {
  return new Promise((resolve, reject) =>
    keys.verifyQueued(key, (error, principal) => (error ? reject(error) : resolve(principal))),
  );
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const unknownKey = () => `wisp_${randomBytes(30).toString("base64url").replace(/[-_]/g, "x").slice(0, 40)}`;

for (const { dialect, skip } of await dialects()) {
  describe(`revocation racing key lookups on ${dialect}`, { skip }, () => {
    test("a lookup that read the key before the revocation cannot answer a later request", async () => {
      await withDatabase(dialect, async (database, testDb) => {
        // The revocation comes from another connection: the CLI, or another Wisp instance.
        const other = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
        try {
          const core = createCore(database, { publicUrl: "http://localhost" });
          const account = await core.accounts.resolve(undefined);
          const repo = new KeysRepo(database.db, database.dialect);
          const keys = new KeysService(repo);
          const { key, row } = await keys.create(account, { name: "k" });

          // The first lookup really reads the database (the key is valid then), but its answer is
          // held back, as a slow network holds back PostgreSQL's answer.
          const firstRead = deferred();
          const releaseFirst = deferred();
          const findByHash = repo.findByHash.bind(repo);
          repo.findByHash = async (hash) => {
            const found = await findByHash(hash);
            firstRead.resolve();
            await releaseFirst.promise;
            return found;
          };
          const early = verifyQueued(keys, key);
          await firstRead.promise;
          repo.findByHash = findByHash;

          assert.ok(await new KeysRepo(other.db, other.dialect).revoke(row.id, isoNow()));

          // Two requests after the commit: their turn's lookup reads the revoked row, and the old
          // lookup's answer arrives while theirs is on the way.
          const findByHashes = repo.findByHashes.bind(repo);
          let earlyAnswer: KeyPrincipal | null | undefined;
          repo.findByHashes = async (hashes) => {
            const rows = await findByHashes(hashes);
            releaseFirst.resolve();
            earlyAnswer = await early;
            return rows;
          };
          const late = await Promise.all([verifyQueued(keys, key), verifyQueued(keys, unknownKey())]);
          assert.equal(earlyAnswer?.keyId, row.id, "the request that came before the revocation passes");
          assert.deepEqual(late, [null, null], "a request after the revocation is refused");
          repo.findByHashes = findByHashes;
          assert.equal(await verifyQueued(keys, key), null, "and so is every later one");
        } finally {
          await other.close();
        }
      });
    });

    test("under steady load with uneven answer times, no request after the revocation passes", async () => {
      await withDatabase(dialect, async (database, testDb) => {
        const other = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
        try {
          const core = createCore(database, { publicUrl: "http://localhost" });
          const account = await core.accounts.resolve(undefined);
          const repo = new KeysRepo(database.db, database.dialect);
          // Answers reach the server after the query ran, some sooner than others (a network).
          const findByHashes = repo.findByHashes.bind(repo);
          repo.findByHashes = async (hashes) => {
            const rows = await findByHashes(hashes);
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
            return rows;
          };
          const keys = new KeysService(repo);
          const revoker = new KeysRepo(other.db, other.dialect);
          const accepted: string[] = [];
          for (let round = 0; round < 20; round++) {
            const { key, row } = await keys.create(account, { name: `k${round}` });
            let committed = false;
            let stop = false;
            const answers: Promise<void>[] = [];
            // Every turn of the event loop: the key and an unknown one, so lookups run batched.
            const load = (async () => {
              for (let turn = 0; !stop; turn++) {
                const after = committed;
                for (const candidate of [key, unknownKey()]) {
                  answers.push(
                    verifyQueued(keys, candidate).then((principal) => {
                      if (after && principal) accepted.push(`round ${round} turn ${turn}`);
                    }),
                  );
                }
                await new Promise((resolve) => setImmediate(resolve));
              }
            })();
            await new Promise((resolve) => setTimeout(resolve, 5 + (round % 5) * 3));
            await revoker.revoke(row.id, isoNow());
            committed = true;
            await new Promise((resolve) => setTimeout(resolve, 20));
            stop = true;
            await load;
            await Promise.all(answers);
          }
          assert.deepEqual(accepted, [], "requests accepted after the revocation committed");
        } finally {
          await other.close();
        }
      });
    });
  });
}

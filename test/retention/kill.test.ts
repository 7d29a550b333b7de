// A server (with its worker) killed with SIGKILL while retention prunes leaves nothing half-deleted:
// no attempt without its delivery, no delivery without its event, no finished report task without
// its file; the next run (wisp prune) finishes the job.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase, dialects } from "../support/databases.ts";
import { databaseEnv, startServerProcess, wisp } from "../support/processes.ts";
import { daysAgo, RETENTION_DEFAULTS, RetentionSeed } from "../support/retention-seed.ts";

const EVENTS = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const { dialect, skip } of await dialects()) {
  describe(`retention killed mid-run on ${dialect}`, { skip }, () => {
    test("SIGKILL during pruning: nothing half-deleted, the next run finishes", async () => {
      const testDb = await createTestDatabase(dialect);
      const database = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
      try {
        await migrate(database);
        const seed = new RetentionSeed(database);
        const a = await seed.account("a");
        const endpoint = await seed.endpoint(a);
        await seed.eventsWithDeliveries(a, endpoint, daysAgo(60), EVENTS, "succeeded");
        await seed.eventsWithDeliveries(a, endpoint, daysAgo(60), 10, "pending");
        await seed.cursorAt(a, await seed.maxId("events"));
        await seed.auth(a, daysAgo(200), 20_000);
        const reports = path.join(testDb.dataDir, "reports");
        const now = Math.floor(Date.now() / 1000);
        for (let i = 0; i < 20; i++) await seed.reportTask(a, `expired${i}`, now - 60, reports);
        for (let i = 0; i < 5; i++) await seed.reportTask(a, `kept${i}`, now + 3600, reports);

        const env = { ...databaseEnv(testDb), ...RETENTION_DEFAULTS };
        const server = await startServerProcess(env);
        let seen = EVENTS + 10;
        try {
          const deadline = Date.now() + 60_000;
          // Kill once some events are gone but not all: mid-way through the events table.
          for (;;) {
            seen = await seed.count("events");
            if (seen < EVENTS + 10 && seen > 10 + EVENTS / 4) break;
            assert.ok(seen > 10, "pruning ended before the kill: seed more events");
            assert.ok(Date.now() < deadline, `pruning did not start in a minute\n${server.stdout()}`);
            await sleep(5);
          }
          server.child.kill("SIGKILL");
          assert.equal((await server.exited).signal, "SIGKILL");
        } finally {
          await server.stop();
        }
        const left = await seed.count("events");
        assert.ok(left > 10 && left < EVENTS + 10, `killed mid-way (${left} events left)`);
        assert.deepEqual(await seed.broken(reports), []);
        // Whole events went with their deliveries and attempts: the counts still match.
        assert.equal(await seed.count("webhook_deliveries"), left);
        assert.equal(await seed.count("webhook_attempts"), left);

        const next = await wisp(["prune"], env);
        assert.equal(next.code, 0, next.stderr);
        assert.equal(await seed.count("events"), 10, "only the events still pending delivery stay");
        assert.equal(await seed.count("webhook_deliveries"), 10);
        assert.equal(await seed.count("webhook_attempts"), 10);
        assert.equal(await seed.count("radpostauth"), 0);
        assert.equal(await seed.count("report_tasks"), 5);
        assert.deepEqual(await seed.broken(reports), []);
        assert.deepEqual(await seed.filesWithoutTask(reports), []);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}

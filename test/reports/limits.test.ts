// Report files cannot starve anything: each account has at most REPORT_TASKS_PER_ACCOUNT unfinished
// file tasks (the excess is 429 with Retry-After and writes nothing), at most
// REPORT_RUNNING_PER_ACCOUNT of them are built at once, and report jobs run in slots of their own,
// so webhook deliveries go out while reports fill every report slot.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import type { ReportsRepo } from "../../src/core/reports/repo.ts";
import type { ReportsService } from "../../src/core/reports/service.ts";
import { registerJobHandlers } from "../../src/jobs/handlers.ts";
import { Worker } from "../../src/jobs/worker.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { Receiver } from "../webhooks/receiver.ts";

const quiet = { error() {}, warn() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Holds every report file in its first chunk until released, as a whole-history export over a
 * large database would hold its worker slot.
 */
function gateReports(reports: ReportsService): { release(): void } {
  const repo = (reports as unknown as { repo: ReportsRepo }).repo;
  const chunk = repo.chunk.bind(repo);
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  repo.chunk = async (...args) => {
    await gate;
    return chunk(...args);
  };
  return {
    release() {
      open();
      repo.chunk = chunk;
    },
  };
}

test("REPORT_TASKS_PER_ACCOUNT and REPORT_RUNNING_PER_ACCOUNT: defaults 10 and 3, validated", () => {
  const defaults = loadConfig({});
  assert.equal(defaults.reportTasksPerAccount, 10);
  assert.equal(defaults.reportRunningPerAccount, 3);
  const set = loadConfig({ REPORT_TASKS_PER_ACCOUNT: "25", REPORT_RUNNING_PER_ACCOUNT: "1" });
  assert.equal(set.reportTasksPerAccount, 25);
  assert.equal(set.reportRunningPerAccount, 1);
  for (const bad of ["0", "-1", "x", "1.5", "100001"]) {
    assert.throws(() => loadConfig({ REPORT_TASKS_PER_ACCOUNT: bad }), ConfigError, bad);
    assert.throws(() => loadConfig({ REPORT_RUNNING_PER_ACCOUNT: bad }), ConfigError, bad);
  }
});

for (const { dialect, skip } of await dialects()) {
  describe(`report limits on ${dialect}`, { skip, concurrency: 1 }, () => {
    let server: TestServer;
    let worker: Worker | undefined;
    const db = () => server.core.database.db;

    before(async () => {
      // No worker in the server: each test starts the one it needs, so tasks stay queued meanwhile.
      server = await startTestServer({ dialect, env: { WORKER: "0", WEBHOOK_ALLOW_PRIVATE: "1" } });
    });
    after(async () => {
      await worker?.stop();
      await server?.stop();
    });

    function startWorker(): Worker {
      worker = new Worker(server.core.jobs, { log: quiet, pollMs: 20, leaseMs: 10_000 });
      registerJobHandlers(worker, server.core);
      worker.start();
      return worker;
    }

    async function stopWorker() {
      await worker?.stop();
      worker = undefined;
    }

    const tasksOf = (account: AccountRow) =>
      db()
        .withTables<{ report_tasks: { account_id: number; name: string; status: string } }>()
        .selectFrom("report_tasks")
        .select(["name", "status"])
        .where("account_id", "=", account.id)
        .execute();
    const jobsOf = (account: AccountRow, kind: string, status?: string) =>
      db()
        .selectFrom("jobs")
        .selectAll()
        .where("account_id", "=", account.id)
        .where("kind", "=", kind)
        .$if(status !== undefined, (q) => q.where("status", "=", status!))
        .execute();

    test("a burst of csvfile requests: 10 queued, the rest 429 with Retry-After and nothing written", async () => {
      const flooder = await server.account("flooder");
      const other = await server.account("bystander");
      const key = await server.key(flooder, { rateLimit: 100_000 });
      const otherKey = await server.key(other, { rateLimit: 100_000 });
      const burst = await Promise.all(
        Array.from({ length: 30 }, () =>
          server.call("GET", "/api/reports/110?earliest=0&format=csvfile", { key }),
        ),
      );
      const accepted = burst.filter((r) => r.status === 202);
      const refused = burst.filter((r) => r.status === 429);
      assert.equal(accepted.length, 10, "exactly the limit is queued, even in a burst");
      assert.equal(refused.length, 20);
      for (const r of refused) {
        assert.deepEqual(Object.keys(r.body).sort(), ["code", "error", "message"]);
        assert.equal(r.body.code, 429);
        assert.match(r.body.message, /10 report files .* queued or being built/);
        assert.match(r.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
      }
      // Nothing half-written: a task row and its two jobs for each 202, nothing for a 429.
      assert.equal((await tasksOf(flooder)).length, 10);
      assert.equal((await jobsOf(flooder, "report")).length, 10);
      assert.equal((await jobsOf(flooder, "report.expire")).length, 10);

      // Another account is not affected.
      const theirs = await server.call("GET", "/api/reports/110?format=csvfile", { key: otherKey });
      assert.equal(theirs.status, 202);

      // Once files are built, the account may ask again.
      startWorker();
      await until("the flooder's files", async () =>
        (await tasksOf(flooder)).every((t) => t.status === "done"),
      );
      await stopWorker();
      const again = await server.call("GET", "/api/reports/110?format=csvfile", { key });
      assert.equal(again.status, 202);
    });

    test("a task whose job failed no longer counts against the limit", async () => {
      const account = await server.account("unlucky");
      const key = await server.key(account, { rateLimit: 100_000 });
      for (let i = 0; i < 10; i++) {
        assert.equal((await server.call("GET", "/api/reports/120?format=csvfile", { key })).status, 202);
      }
      assert.equal((await server.call("GET", "/api/reports/120?format=csvfile", { key })).status, 429);
      // A job that ended without finishing its task (the task then reads as failed).
      const [job] = await jobsOf(account, "report");
      await db().updateTable("jobs").set({ status: "failed" }).where("id", "=", job!.id).execute();
      assert.equal((await server.call("GET", "/api/reports/120?format=csvfile", { key })).status, 202);
      startWorker();
      await until("the files built", async () =>
        (await jobsOf(account, "report")).every((j) => j.status === "done" || j.status === "failed"),
      );
      await stopWorker();
    });

    test("at most 3 files of one account are built at once; another account's file still runs", async () => {
      const busy = await server.account("busy-reports");
      const quietAccount = await server.account("quiet-reports");
      const key = await server.key(busy, { rateLimit: 100_000 });
      const quietKey = await server.key(quietAccount, { rateLimit: 100_000 });
      const gate = gateReports(server.core.reports);
      try {
        for (let i = 0; i < 6; i++) {
          assert.equal((await server.call("GET", "/api/reports/110?format=csvfile", { key })).status, 202);
        }
        startWorker();
        await until("three running", async () => (await jobsOf(busy, "report", "running")).length >= 3);
        await sleep(300);
        assert.equal((await jobsOf(busy, "report", "running")).length, 3);
        const queued = await server.call("GET", "/api/reports/110?format=csvfile", { key: quietKey });
        assert.equal(queued.status, 202);
        await until(
          "the other account's file running",
          async () => (await jobsOf(quietAccount, "report", "running")).length === 1,
          3000,
        );
        assert.equal((await jobsOf(busy, "report", "running")).length, 3);
      } finally {
        gate.release();
      }
      await until("every file built", async () =>
        [...(await tasksOf(busy)), ...(await tasksOf(quietAccount))].every((t) => t.status === "done"),
      );
      await stopWorker();
    });

    test("while report files fill the worker's report slots, a webhook is delivered promptly", async () => {
      const receiver = await Receiver.start();
      const gate = gateReports(server.core.reports);
      try {
        // Four accounts with three files each: more report jobs than the worker has slots in all.
        for (let a = 0; a < 4; a++) {
          const key = await server.key(await server.account(`exporter-${a}`), { rateLimit: 100_000 });
          for (let i = 0; i < 3; i++) {
            const queued = await server.call("GET", "/api/reports/120?earliest=0&format=csvfile", { key });
            assert.equal(queued.status, 202);
          }
        }
        const hooked = await server.account("hooked");
        await server.core.webhooks.create(hooked.id, { url: receiver.url("/hooked"), events: "all" });
        startWorker();
        const running = () =>
          db()
            .selectFrom("jobs")
            .select("id")
            .where("kind", "=", "report")
            .where("status", "=", "running")
            .execute();
        await until("report jobs running", async () => (await running()).length >= 4);
        // Let the worker take every slot it would give to reports.
        await sleep(500);
        const key = await server.key(hooked);
        const created = await server.call("POST", "/api/users", {
          key,
          body: { username: "prompt", password: "Very-Secret-9", email: "prompt@example.org" },
        });
        assert.equal(created.status, 201);
        const sent = Date.now();
        await receiver.waitFor(() => receiver.at("/hooked").length >= 1, 3000, "the user.created webhook");
        assert.ok(Date.now() - sent < 3000);
        assert.equal(receiver.at("/hooked")[0]!.json.event, "user.created");
        assert.ok((await running()).length >= 4, "the report files were still being built");
      } finally {
        gate.release();
        await receiver.close();
      }
      await stopWorker();
    });
  });
}

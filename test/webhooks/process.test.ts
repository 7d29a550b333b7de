// Webhooks as operators run them, per dialect: the `wisp webhooks` commands as real processes, and
// a real server process killed with SIGKILL while deliveries are pending, then started again.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { loadConfig } from "../../src/config.ts";
import { type Core, createCore } from "../../src/core/index.ts";
import type { Delivery } from "../../src/core/webhooks/service.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { registerJobHandlers } from "../../src/jobs/handlers.ts";
import { Worker } from "../../src/jobs/worker.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../support/databases.ts";
import {
  databaseEnv,
  type Env,
  type ProcessResult,
  request,
  startServerProcess,
  wisp,
} from "../support/processes.ts";
import { type Received, Receiver } from "./receiver.ts";

const quiet = { error() {}, warn() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

function ok(result: ProcessResult): ProcessResult {
  assert.equal(result.code, 0, describeRun(result));
  return result;
}

/** The whsec_ secret alone on stdout, and nowhere on stderr. */
function secretOnly(result: ProcessResult): string {
  ok(result);
  assert.match(result.stdout, /^whsec_[A-Za-z0-9+/]{43}=\n$/, describeRun(result));
  const secret = result.stdout.trim();
  assert.ok(!result.stderr.includes(secret));
  return secret;
}

function verify(secret: string, r: Received) {
  return new Webhook(secret).verify(r.body, {
    "webhook-id": r.id,
    "webhook-timestamp": r.timestamp,
    "webhook-signature": r.signature,
  }) as { event: string; data: Record<string, unknown> };
}

// The dialects run side by side: most of the time goes to starting processes.
describe("webhooks as processes", { concurrency: true }, async () => {
  for (const { dialect, skip } of await dialects()) {
    describe(`wisp webhooks as processes on ${dialect}`, { skip, concurrency: 1 }, () => {
      let database: TestDatabase;
      let receiver: Receiver;
      let env: Env;
      let opened: Database;
      let core: Core;

      before(async () => {
        database = await createTestDatabase(dialect);
        receiver = await Receiver.start();
        env = {
          ...databaseEnv(database),
          WEBHOOK_ALLOW_PRIVATE: "1",
          WEBHOOK_RETRY_SCHEDULE: "2s,2s,2s,2s,2s",
          // Every process here shares DATA_DIR/secret.key; a key from the outer shell would differ.
          WEBHOOK_SECRET_KEY: undefined,
        };
        opened = openDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
        await migrate(opened);
        core = createCore(opened, loadConfig(env));
      });
      after(async () => {
        await opened?.close();
        await receiver?.close();
        await database?.drop();
      });

      test("create, list, update, rotate-secret, test, deliveries, resend, delete", async () => {
        // Spawns are slow: commands that do not depend on each other run side by side.
        const cli = (...args: string[]) => wisp(args, env);
        const [created, badUrl, badKinds] = await Promise.all([
          cli("webhooks", "create", "--url", receiver.url("/cli"), "--events", "user.created,user.deleted"),
          cli("webhooks", "create", "--url", "https://user:pw@example.com/"),
          cli("webhooks", "create", "--url", "https://example.com/", "--events", "user.exploded"),
        ]);
        const secret = secretOnly(created);
        const id = String(/created webhook endpoint (\d+) for account default/.exec(created.stderr)?.[1]);
        assert.match(id, /^\d+$/, describeRun(created));
        for (const [result, why] of [
          [badUrl, /credentials/],
          [badKinds, /unknown event kind user\.exploded/],
        ] as const) {
          assert.notEqual(result.code, 0);
          assert.equal(result.stdout, "");
          assert.match(result.stderr, why);
        }
        const kinds = "(user\\.created,user\\.deleted\\s+yes|all\\s+no)";
        const listPattern = `^${id}\\s+default\\s+${receiver.url("/cli")}\\s+${kinds}`;
        const [listed, disabled, missing] = await Promise.all([
          cli("webhooks", "list"),
          cli("webhooks", "update", id, "--events", "all", "--disable"),
          cli("webhooks", "resend", "999999"),
        ]);
        assert.match(ok(listed).stdout, new RegExp(listPattern, "m"));
        assert.ok(!listed.stdout.includes("whsec_"), "never a secret in the listing");
        assert.match(ok(disabled).stdout, /updated webhook endpoint \d+: .* \(events: all, disabled\)/);
        assert.match(missing.stderr, /webhook delivery 999999 not found/);
        const [refused, rotated] = await Promise.all([
          cli("webhooks", "test", id),
          cli("webhooks", "rotate-secret", id),
        ]);
        assert.match(refused.stderr, /disabled; enable it first/);
        const newSecret = secretOnly(rotated);
        assert.notEqual(newSecret, secret);
        ok(await cli("webhooks", "update", id, "--enable"));

        // `webhooks test` waits for a worker's attempt: run one here, on the same database.
        const worker = new Worker(core.jobs, { log: quiet, pollMs: 50 });
        registerJobHandlers(worker, core);
        worker.start();
        try {
          const tested = ok(await cli("webhooks", "test", id));
          assert.match(
            tested.stdout,
            /test delivery \d+ \(webhook-id msg_[\w-]+\): HTTP 200 in \d+ ms; delivered/,
          );
          const [got] = receiver.at("/cli");
          assert.equal(verify(newSecret, got!).event, "webhook.test", "signed with the rotated secret");
          const deliveryId = /test delivery (\d+)/.exec(tested.stdout)![1]!;
          receiver.respond = () => ({ status: 200, body: "again" });
          const [table, resent] = await Promise.all([
            cli("webhooks", "deliveries", id),
            cli("webhooks", "resend", deliveryId),
          ]);
          const header =
            /^DELIVERY\s+WEBHOOK-ID\s+EVENT\s+STATUS\s+ATTEMPT\s+TIME\s+RESULT\s+MS\s+RESPONSE$/m;
          assert.match(ok(table).stdout, header);
          const row =
            `^${deliveryId}\\s+${got!.id}\\s+webhook\\.test\\s+\\w+\\s+1\\s+\\S+Z\\s+` +
            "HTTP 200\\s+\\d+\\s+ok$";
          assert.match(table.stdout, new RegExp(row, "m"));
          assert.match(
            ok(resent).stdout,
            new RegExp(`queued delivery ${deliveryId} \\(webhook-id ${got!.id}, webhook.test\\) again`),
          );
          await receiver.waitFor(() => receiver.at("/cli").length >= 2, 10_000, "the resend");
          assert.equal(receiver.at("/cli")[1]?.id, got!.id, "the same webhook-id");
          await sleep(200);
          const log = JSON.parse(ok(await cli("webhooks", "deliveries", id, "--json")).stdout) as Delivery[];
          assert.deepEqual(
            log[0]?.attempt_log.map((a) => [a.attempt, a.status_code, a.response]),
            [
              [1, 200, "ok"],
              [2, 200, "again"],
            ],
          );
        } finally {
          receiver.respond = () => ({ status: 200, body: "ok" });
          await worker.stop();
        }
        assert.match(
          ok(await cli("webhooks", "delete", id)).stdout,
          new RegExp(`deleted webhook endpoint ${id}`),
        );
        assert.deepEqual(await core.webhooks.listAll(), []);
      });

      test("kill -9 with deliveries pending: after a restart all arrive, original webhook-ids", async () => {
        const account = await core.accounts.create("killed");
        const { key } = await core.keys.create(account, { name: "kill test" });
        const { secret } = await core.webhooks.create(account.id, {
          url: receiver.url("/kill"),
          events: "user.created",
        });
        receiver.respond = (r) =>
          r.path === "/kill" ? { status: 503, body: "down for maintenance" } : { status: 200 };
        const first = await startServerProcess(env);
        const users = 15;
        try {
          for (let i = 0; i < users; i++) {
            const created = await request(`${first.url}/api/users`, {
              method: "POST",
              key,
              body: { username: `k${i}` },
            });
            assert.equal(created.status, 201, created.text);
          }
          await receiver.waitFor(
            () => new Set(receiver.at("/kill").map((r) => r.id)).size >= users,
            15_000,
            "first attempts",
          );
          await sleep(300);
        } finally {
          first.child.kill("SIGKILL");
        }
        assert.equal((await first.exited).signal, "SIGKILL");
        const seen = new Set(receiver.at("/kill").map((r) => r.id));
        const cutoff = receiver.received.length;
        receiver.respond = () => ({ status: 200, body: "ok" });
        const second = await startServerProcess(env);
        try {
          await receiver.waitFor(
            () =>
              new Set(
                receiver.received
                  .slice(cutoff)
                  .filter((r) => r.path === "/kill")
                  .map((r) => r.id),
              ).size >= users,
            20_000,
            "every event after the restart",
          );
        } finally {
          await second.stop();
        }
        const delivered = receiver.received.slice(cutoff).filter((r) => r.path === "/kill");
        assert.deepEqual(new Set(delivered.map((r) => r.id)), seen, "the original webhook-ids");
        const names = delivered.map((r) => verify(secret, r)).map((b) => String(b.data.username));
        assert.deepEqual([...new Set(names)].sort(), Array.from({ length: users }, (_, i) => `k${i}`).sort());
      });
    });
  }
});

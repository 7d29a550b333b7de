// Webhook delivery end to end, per dialect: a real Wisp (in-process) with its worker, events from
// the users API, RADIUS-like and report events through the outbox, and node:http receivers on
// loopback. Signatures are checked with the standardwebhooks package. Tests use accounts and
// receiver paths of their own, so they do not see each other's deliveries.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { loadConfig } from "../../src/config.ts";
import { type EventKind, insertEvents } from "../../src/core/events/repo.ts";
import { createCore } from "../../src/core/index.ts";
import { isoNow } from "../../src/core/shared/time.ts";
import { OutboxRepo } from "../../src/core/webhooks/outbox.ts";
import type { Delivery } from "../../src/core/webhooks/service.ts";
import { openDatabase } from "../../src/db/database.ts";
import type { Schema } from "../../src/db/schema.ts";
import { registerJobHandlers } from "../../src/jobs/handlers.ts";
import { Worker } from "../../src/jobs/worker.ts";
import { ConsoleClient } from "../support/browser.ts";
import { dialects, PG_ADMIN_URL } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { type Received, Receiver } from "./receiver.ts";

const quiet = { error() {}, warn() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const SCHEDULE = "300ms,300ms,300ms";
const PASSWORD = "a long enough password";
/** Where localhost leads: what a refusal must not tell. */
const RESOLVED = /127\.0\.0\.1|::1\b|::ffff:7f/i;

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

function startWorker(server: TestServer): Worker {
  const worker = new Worker(server.core.jobs, { log: quiet, pollMs: 20, leaseMs: 10_000 });
  registerJobHandlers(worker, server.core);
  worker.start();
  return worker;
}

/** Verifies with the standardwebhooks package and returns the parsed body. */
function verified(secret: string, request: Received) {
  return new Webhook(secret).verify(request.body, {
    "webhook-id": request.id,
    "webhook-timestamp": request.timestamp,
    "webhook-signature": request.signature,
  }) as { event: string; timestamp: string; data: Record<string, unknown> };
}

/**
 * A fresh database on the test server with a transaction open in it that has taken a transaction
 * id (an insert); close() rolls it back and drops the database.
 */
async function openTransactionInAnotherDatabase(): Promise<{ xid: number; close(): Promise<void> }> {
  const name = `wisp_other_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  try {
    await client.connect();
    await client.query("create table t (n integer)");
    await client.query("begin");
    await client.query("insert into t values (1)");
    const { rows } = await client.query<{ xid: string }>("select pg_current_xact_id()::text as xid");
    return {
      xid: Number(rows[0]!.xid),
      async close() {
        await client.end();
        await admin.query(`drop database ${name} with (force)`);
        await admin.end();
      },
    };
  } catch (error) {
    await client.end().catch(() => {});
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
    throw error;
  }
}

// The dialects run side by side (much of the time is spent waiting for retries); each one's
// tests run in order.
describe("webhooks", { concurrency: true }, async () => {
  for (const { dialect, skip } of await dialects()) {
    describe(`webhook delivery on ${dialect}`, { skip, concurrency: 1 }, () => {
      let server: TestServer;
      let worker: Worker;
      let receiver: Receiver;

      before(async () => {
        receiver = await Receiver.start();
        server = await startTestServer({
          dialect,
          env: { WORKER: "0", WEBHOOK_ALLOW_PRIVATE: "1", WEBHOOK_RETRY_SCHEDULE: SCHEDULE },
        });
        worker = startWorker(server);
      });
      after(async () => {
        await worker?.stop();
        await server?.stop();
        await receiver?.close();
      });

      /** An account with an endpoint at receiver path `/${name}`. */
      async function endpoint(accountName: string, path: string, events = "all", url = receiver.url(path)) {
        const account = await server.account(accountName);
        const { webhook, secret } = await server.core.webhooks.create(account.id, { url, events });
        return { account, id: webhook.id, secret, path };
      }

      async function emit(accountId: number, kind: EventKind, data: Record<string, unknown>) {
        await insertEvents(server.core.database.db, [{ accountId, kind, data }]);
      }

      async function deliveriesOf(accountId: number, endpointId: number): Promise<Delivery[]> {
        return server.core.webhooks.deliveries(accountId, endpointId, 1000);
      }

      test("user.created, .updated, .deleted from the API: signed, in order, no passwords", async () => {
        const hook = await endpoint("acme", "/acme");
        const key = await server.key(hook.account);
        const created = await server.call("POST", "/api/users", {
          key,
          body: { username: "alice", password: "Very-Secret-9", email: "alice@example.org" },
        });
        assert.equal(created.status, 201);
        const id = created.body.id as number;
        assert.equal(
          (await server.call("PATCH", `/api/users/${id}`, { key, body: { fullname: "Alice A" } })).status,
          200,
        );
        assert.equal((await server.call("DELETE", `/api/users/${id}`, { key })).status, 204);
        await receiver.waitFor(() => receiver.at("/acme").length >= 3, 10_000, "three user events");
        const got = receiver.at("/acme");
        const bodies = got.map((r) => verified(hook.secret, r));
        assert.deepEqual(
          bodies.map((b) => b.event),
          ["user.created", "user.updated", "user.deleted"],
        );
        for (const body of bodies) {
          assert.match(body.timestamp, ISO);
          assert.equal(body.data.id, id);
          assert.equal(body.data.username, "alice");
          assert.deepEqual(Object.keys(body.data).sort(), [
            "created",
            "email",
            "fullname",
            "id",
            "plan_id",
            "status",
            "updated",
            "username",
          ]);
        }
        assert.equal(bodies[1]?.data.fullname, "Alice A");
        assert.ok(
          got.every((r) => !r.body.includes("Very-Secret-9")),
          "never the password",
        );
        assert.ok(got.every((r) => /^msg_[\w-]{22}$/.test(r.id)) && new Set(got.map((r) => r.id)).size === 3);
        assert.ok(got.every((r) => Math.abs(Number(r.timestamp) - Date.now() / 1000) < 60));
        assert.equal(got[0]?.headers["content-type"], "application/json");
      });

      test("every kind goes through one outbox; endpoints get the kinds they subscribed to", async () => {
        const all = await endpoint("kinds", "/kinds-all");
        const some = await endpoint("kinds", "/kinds-some", "user.authenticated,report.ready");
        const kinds: EventKind[] = [
          "user.authenticated",
          "user.rejected",
          "session.started",
          "session.stopped",
          "voucher.activated",
          "report.ready",
        ];
        for (const [n, kind] of kinds.entries()) await emit(all.account.id, kind, { n });
        await receiver.waitFor(() => receiver.at("/kinds-all").length >= 6, 10_000, "six events");
        await receiver.waitFor(() => receiver.at("/kinds-some").length >= 2, 10_000, "two events");
        await sleep(200);
        assert.deepEqual(
          receiver.at("/kinds-all").map((r) => verified(all.secret, r).event),
          kinds,
        );
        assert.deepEqual(
          receiver.at("/kinds-some").map((r) => verified(some.secret, r).event),
          ["user.authenticated", "report.ready"],
        );
        assert.deepEqual(verified(some.secret, receiver.at("/kinds-some")[1]!).data, { n: 5 });
        // One delivery per event per subscribed endpoint, each with its own webhook-id.
        assert.equal((await deliveriesOf(all.account.id, all.id)).length, 6);
        assert.equal((await deliveriesOf(all.account.id, some.id)).length, 2);
      });

      test("isolation: an account's endpoints receive only its own events", async () => {
        const left = await endpoint("left", "/left");
        const right = await endpoint("right", "/right");
        const leftKey = await server.key(left.account);
        const rightKey = await server.key(right.account);
        for (let i = 0; i < 3; i++) {
          await server.call("POST", "/api/users", { key: leftKey, body: { username: `l${i}` } });
          await server.call("POST", "/api/users", { key: rightKey, body: { username: `r${i}` } });
          await emit(left.account.id, "user.authenticated", { username: `l${i}` });
        }
        await receiver.waitFor(() => receiver.at("/left").length >= 6 && receiver.at("/right").length >= 3);
        await sleep(200);
        const names = (path: string, secret: string) =>
          receiver.at(path).map((r) => String(verified(secret, r).data.username));
        assert.deepEqual(names("/left", left.secret), ["l0", "l0", "l1", "l1", "l2", "l2"]);
        assert.deepEqual(names("/right", right.secret), ["r0", "r1", "r2"]);
        // Nor can one account see or touch another's endpoints and deliveries.
        const [theirs] = await deliveriesOf(left.account.id, left.id);
        await assert.rejects(server.core.webhooks.get(right.account.id, left.id), /not found/);
        await assert.rejects(server.core.webhooks.deliveries(right.account.id, left.id), /not found/);
        await assert.rejects(server.core.webhooks.resend(right.account.id, theirs!.id), /not found/);
        await assert.rejects(
          server.core.webhooks.update(right.account.id, left.id, { enabled: false }),
          /not found/,
        );
        await assert.rejects(server.core.webhooks.delete(right.account.id, left.id), /not found/);
        assert.equal((await server.core.webhooks.list(right.account.id)).length, 1);
      });

      test("one endpoint's deliveries go out one at a time, in event order", async () => {
        const hook = await endpoint("order", "/order");
        receiver.respond = (r) => ({ status: 200, delayMs: r.path === "/order" ? 3 : 0 });
        await insertEvents(
          server.core.database.db,
          Array.from({ length: 40 }, (_, n) => ({
            accountId: hook.account.id,
            kind: "session.started" as const,
            data: { n },
          })),
        );
        for (let n = 40; n < 60; n++) await emit(hook.account.id, "session.stopped", { n });
        await receiver.waitFor(() => receiver.at("/order").length >= 60, 15_000, "sixty events");
        receiver.respond = () => ({ status: 200 });
        const order = receiver.at("/order").map((r) => verified(hook.secret, r).data.n);
        assert.deepEqual(
          order,
          Array.from({ length: 60 }, (_, n) => n),
        );
        assert.equal(receiver.maxInFlight.get("/order"), 1);
      });

      test("failures are retried on schedule with the same webhook-id; every attempt is logged", async () => {
        const hook = await endpoint("retry", "/retry");
        let calls = 0;
        receiver.respond = (r) => {
          if (r.path !== "/retry") return { status: 200 };
          calls++;
          if (calls === 1) return { status: 500, body: "database on fire" };
          if (calls === 2) return { status: 503, body: "busy", headers: { "retry-after": "1" } };
          return { status: 200, body: "thanks" };
        };
        await emit(hook.account.id, "user.authenticated", {
          user_id: 1,
          username: "bob",
          ap_mac: "00:11:22:33:44:55",
        });
        await receiver.waitFor(() => receiver.at("/retry").length >= 3, 10_000, "three attempts");
        receiver.respond = () => ({ status: 200 });
        const got = receiver.at("/retry");
        assert.equal(new Set(got.map((r) => r.id)).size, 1, "one webhook-id across retries");
        for (const r of got) verified(hook.secret, r);
        const gap1 = got[1]!.at - got[0]!.at;
        const gap2 = got[2]!.at - got[1]!.at;
        assert.ok(gap1 >= 280 && gap1 < 2000, `first retry after ${gap1} ms (schedule: 300 ms)`);
        assert.ok(gap2 >= 980 && gap2 < 3000, `Retry-After: 1 honoured: ${gap2} ms`);
        const delivery = await until("success recorded", async () => {
          const [d] = await deliveriesOf(hook.account.id, hook.id);
          return d?.status === "succeeded" && d;
        });
        assert.equal(delivery.message_id, got[0]!.id);
        assert.equal(delivery.attempts, 3);
        assert.deepEqual(
          delivery.attempt_log.map((a) => [a.attempt, a.status_code, a.response]),
          [
            [1, 500, "database on fire"],
            [2, 503, "busy"],
            [3, 200, "thanks"],
          ],
        );
        for (const a of delivery.attempt_log) {
          assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0);
          assert.ok(!Number.isNaN(Date.parse(a.time)));
        }
      });

      test("a delivery that keeps failing is failed after the schedule; resend starts over", async () => {
        const hook = await endpoint("exhaust", "/exhaust");
        receiver.respond = (r) => (r.path === "/exhaust" ? { status: 500, body: "no" } : { status: 200 });
        await emit(hook.account.id, "voucher.activated", { code: "ABC" });
        const failed = await until("the delivery to fail", async () => {
          const [d] = await deliveriesOf(hook.account.id, hook.id);
          return d?.status === "failed" && d;
        });
        assert.equal(failed.attempts, 4, "the first attempt and three retries");
        assert.equal(failed.last_status, 500);
        assert.equal(receiver.at("/exhaust").length, 4);
        receiver.respond = () => ({ status: 200 });
        const resent = await server.core.webhooks.resend(hook.account.id, failed.id);
        assert.equal(resent.status, "pending");
        await receiver.waitFor(() => receiver.at("/exhaust").length >= 5);
        const [done] = await until("the resend to succeed", async () => {
          const list = await deliveriesOf(hook.account.id, hook.id);
          return list[0]?.status === "succeeded" && list;
        });
        assert.equal(done?.attempts, 5);
        assert.equal(receiver.at("/exhaust")[4]?.id, failed.message_id, "a resend keeps the webhook-id");
      });

      test("receiver down, then up: the event is delivered once it answers", async () => {
        const downstairs = await Receiver.start();
        try {
          const hook = await endpoint("downup", "/down", "all", downstairs.url("/down"));
          await downstairs.down();
          await emit(hook.account.id, "session.started", { n: 1 });
          const refused = await until("a refused attempt", async () => {
            const [d] = await deliveriesOf(hook.account.id, hook.id);
            return d?.attempt_log[0] && d;
          });
          assert.match(refused.attempt_log[0]?.error ?? "", /ECONNREFUSED/);
          assert.equal(refused.attempt_log[0]?.status_code, null);
          await downstairs.up();
          await downstairs.waitFor(() => downstairs.received.length >= 1, 5000, "the retry");
          assert.equal(downstairs.received[0]?.id, refused.message_id);
          verified(hook.secret, downstairs.received[0]!);
        } finally {
          await downstairs.close();
        }
      });

      test("410 Gone disables the endpoint; enabling it again resumes deliveries", async () => {
        const hook = await endpoint("gone", "/gone");
        receiver.respond = (r) => (r.path === "/gone" ? { status: 410, body: "gone" } : { status: 200 });
        await emit(hook.account.id, "user.rejected", { n: 1 });
        const disabled = await until("the endpoint to be disabled", async () => {
          const w = await server.core.webhooks.get(hook.account.id, hook.id);
          return !w.enabled && w;
        });
        assert.match(disabled.disabled_reason ?? "", /410/);
        const [first] = await deliveriesOf(hook.account.id, hook.id);
        assert.equal(first?.status, "failed");
        assert.equal(first?.attempts, 1, "no retries after a 410");
        receiver.respond = () => ({ status: 200 });
        await emit(hook.account.id, "user.rejected", { n: 2 });
        await sleep(400);
        assert.equal(receiver.at("/gone").length, 1, "a disabled endpoint gets nothing");
        assert.equal((await deliveriesOf(hook.account.id, hook.id)).length, 1);
        await assert.rejects(server.core.webhooks.resend(hook.account.id, first!.id), /disabled/);
        await server.core.webhooks.update(hook.account.id, hook.id, { enabled: true });
        assert.equal((await server.core.webhooks.get(hook.account.id, hook.id)).disabled_reason, null);
        await emit(hook.account.id, "user.rejected", { n: 3 });
        await receiver.waitFor(() => receiver.at("/gone").length >= 2);
        assert.deepEqual(verified(hook.secret, receiver.at("/gone")[1]!).data, { n: 3 });
      });

      test("secrets: encrypted at rest, never listed, rotation signs with the new one", async () => {
        const hook = await endpoint("secrets", "/secrets");
        const row = await server.core.database.db
          .withTables<{ webhook_endpoints: { id: number; secret: string } }>()
          .selectFrom("webhook_endpoints")
          .select("secret")
          .where("id", "=", hook.id)
          .executeTakeFirstOrThrow();
        assert.ok(!row.secret.includes(hook.secret.slice(6)), "the stored secret is ciphertext");
        assert.ok(!JSON.stringify(await server.core.webhooks.listAll()).includes("whsec_"));
        const rotated = await server.core.webhooks.rotateSecret(hook.account.id, hook.id);
        assert.notEqual(rotated.secret, hook.secret);
        await emit(hook.account.id, "session.stopped", { n: 1 });
        await receiver.waitFor(() => receiver.at("/secrets").length >= 1);
        const [got] = receiver.at("/secrets");
        verified(rotated.secret, got!);
        assert.throws(() => verified(hook.secret, got!), /signature/i);
      });

      test("endpoint rules; only events after creation; a test event goes to its endpoint only", async () => {
        const account = await server.account("rules");
        await emit(account.id, "session.started", { before: true });
        await assert.rejects(server.core.webhooks.create(account.id, { url: "ftp://x.example/" }), /url/);
        await assert.rejects(
          server.core.webhooks.create(account.id, { url: "https://u:p@x.example/" }),
          /credentials/,
        );
        await assert.rejects(
          server.core.webhooks.create(account.id, { url: receiver.url(), events: "nope" }),
          /events/,
        );
        const one = await endpoint("rules", "/rules-one");
        const two = await endpoint("rules", "/rules-two");
        assert.equal(one.account.id, account.id);
        const test = await server.core.webhooks.sendTest(account.id, one.id);
        assert.equal(test.event, "webhook.test");
        await receiver.waitFor(() => receiver.at("/rules-one").length >= 1);
        await sleep(300);
        const body = verified(one.secret, receiver.at("/rules-one")[0]!);
        assert.equal(body.event, "webhook.test");
        assert.equal(body.data.webhook_endpoint_id, one.id);
        assert.equal(receiver.at("/rules-one")[0]?.id, test.message_id);
        assert.deepEqual(
          receiver.at("/rules-one").map((d) => verified(one.secret, d).event),
          ["webhook.test"],
          "the event from before creation is not delivered",
        );
        assert.equal(receiver.at("/rules-two").length, 0, "the test event is not fanned out");
        await server.core.webhooks.delete(account.id, two.id);
        await server.core.webhooks.delete(account.id, one.id);
        await assert.rejects(server.core.webhooks.deliveries(account.id, one.id), /not found/);
      });

      // PostgreSQL only: SQLite commits one writer at a time and has no transaction ids.
      if (dialect === "postgres")
        test("an event committed before the first endpoint is not delivered while an older transaction runs", async () => {
          // A transaction of another connection, older than the event's, still running when the
          // endpoint is created: the cursor must still start after the event.
          const older = new pg.Client({ connectionString: server.database.databaseUrl });
          await older.connect();
          try {
            await older.query("begin");
            await older.query("select pg_current_xact_id()");
            const account = await server.account("older-txn");
            await emit(account.id, "session.started", { before: true });
            const hook = await endpoint("older-txn", "/older-txn");
            await older.query("commit");
            await emit(account.id, "session.stopped", { after: true });
            await receiver.waitFor(() => receiver.at("/older-txn").length >= 1, 10_000, "the later event");
            await sleep(300);
            assert.deepEqual(
              receiver.at("/older-txn").map((d) => verified(hook.secret, d).event),
              ["session.stopped"],
            );
          } finally {
            await older.end();
          }
        });

      // PostgreSQL only: events carry the id of the transaction that wrote them (outbox.ts).
      if (dialect === "postgres")
        test("an open transaction that wrote an event holds later events back; then both go, in order", async () => {
          const hook = await endpoint("open-txn", "/open-txn");
          const open = new pg.Client({ connectionString: server.database.databaseUrl });
          await open.connect();
          try {
            await open.query("begin");
            await open.query(
              "insert into events (account_id, kind, data, created) values ($1, 'session.started', $2, $3)",
              [hook.account.id, JSON.stringify({ n: 1 }), isoNow()],
            );
            await emit(hook.account.id, "session.stopped", { n: 2 });
            // A dispatch pass now cannot take the later event: the first one might still commit.
            await server.core.webhooks.engine.dispatchOnce();
            assert.equal(receiver.at("/open-txn").length, 0, "nothing sent while the older transaction runs");
            await open.query("commit");
          } finally {
            await open.end();
          }
          await receiver.waitFor(() => receiver.at("/open-txn").length >= 2, 10_000, "both events");
          await sleep(300);
          assert.deepEqual(
            receiver.at("/open-txn").map((d) => verified(hook.secret, d).data.n),
            [1, 2],
          );
        });

      if (dialect === "postgres")
        test("a transaction left open in another database on the server does not hold deliveries back", async () => {
          const hook = await endpoint("elsewhere", "/elsewhere");
          const elsewhere = await openTransactionInAnotherDatabase();
          try {
            await emit(hook.account.id, "session.started", { n: 1 });
            const [event] = await server.core.database.db
              .selectFrom("events")
              .select(sql<string>`txid`.as("txid"))
              .where("account_id", "=", hook.account.id)
              .execute();
            assert.ok(elsewhere.xid < Number(event!.txid), "the other transaction is the older one");
            await receiver.waitFor(
              () => receiver.at("/elsewhere").length >= 1,
              10_000,
              "the event, while another database's transaction is open",
            );
            // The dispatcher's role need not be a superuser to see which database a transaction is in.
            const role = `wisp_probe_${randomBytes(4).toString("hex")}`;
            const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
            await admin.connect();
            await admin.query(`create role ${role} login`);
            const url = new URL(server.database.databaseUrl!);
            url.username = role;
            const probe = new Kysely<Schema>({
              dialect: new PostgresDialect({
                pool: new pg.Pool({ connectionString: url.toString(), max: 1 }),
              }),
            });
            try {
              const superuser = await sql<{ s: boolean }>`select usesuper as s from pg_user
                where usename = current_user`.execute(probe);
              assert.equal(superuser.rows[0]?.s, false);
              const horizon = await new OutboxRepo(probe, "postgres").horizon();
              assert.ok(horizon > elsewhere.xid, `horizon ${horizon} is past ${elsewhere.xid}`);
            } finally {
              await probe.destroy();
              await admin.query(`drop role ${role}`);
              await admin.end();
            }
          } finally {
            await elsewhere.close();
          }
        });

      test("user events share the change's transaction: no change, no event, and back", async () => {
        const hook = await endpoint("txn", "/txn");
        const key = await server.key(hook.account);
        const a = await server.call("POST", "/api/users", { key, body: { username: "ann" } });
        await server.call("POST", "/api/users", { key, body: { username: "ben" } });
        const events = async () =>
          (
            await server.core.database.db
              .selectFrom("events")
              .select("kind")
              .where("account_id", "=", hook.account.id)
              .orderBy("id")
              .execute()
          ).map((e) => e.kind);
        assert.deepEqual(await events(), ["user.created", "user.created"]);
        const clash = await server.call("PATCH", `/api/users/${a.body.id}`, {
          key,
          body: { username: "ben" },
        });
        assert.equal(clash.status, 409);
        const missing = await server.call("PATCH", "/api/users/999999", { key, body: { fullname: "x" } });
        assert.equal(missing.status, 404);
        assert.deepEqual(
          await events(),
          ["user.created", "user.created"],
          "a failing update writes no event",
        );
        // If the event cannot be written, the change is rolled back with it.
        const db = server.core.database.db;
        if (dialect === "postgres") {
          await sql`create function wisp_test_refuse() returns trigger language plpgsql as
          $$ begin raise exception 'event refused by the test'; end $$`.execute(db);
          await sql`create trigger wisp_test_refuse before insert on events for each row
          when (new.kind = 'user.updated') execute function wisp_test_refuse()`.execute(db);
        } else {
          await sql`create trigger wisp_test_refuse before insert on events when new.kind = 'user.updated'
          begin select raise(abort, 'event refused by the test'); end`.execute(db);
        }
        try {
          const refused = await server.call("PATCH", `/api/users/${a.body.id}`, {
            key,
            body: { fullname: "Changed" },
          });
          assert.equal(refused.status, 500);
          assert.equal((await server.core.users.get(hook.account.id, a.body.id)).fullname, "", "rolled back");
        } finally {
          const on = sql.raw(dialect === "postgres" ? " on events" : "");
          await sql`drop trigger wisp_test_refuse${on}`.execute(db);
          if (dialect === "postgres") await sql`drop function wisp_test_refuse`.execute(db);
        }
        await receiver.waitFor(() => receiver.at("/txn").length >= 2);
        await sleep(200);
        assert.equal(receiver.at("/txn").length, 2);
      });

      test("several workers on separate connections never send the same delivery at once", async () => {
        const hook = await endpoint("many", "/many");
        const config = loadConfig({
          DATA_DIR: server.database.dataDir,
          DATABASE_URL: server.database.databaseUrl,
          WEBHOOK_ALLOW_PRIVATE: "1",
          WEBHOOK_RETRY_SCHEDULE: SCHEDULE,
        });
        // PostgreSQL: each worker has its own pool, as separate processes would. SQLite: extra workers
        // share the server's connection (better-sqlite3 blocks its thread while waiting for a lock
        // held by another connection of the same thread; separate processes do not have that).
        const others = [0, 1].map(() => {
          const database =
            dialect === "postgres"
              ? openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl })
              : undefined;
          const core = database ? createCore(database, config) : server.core;
          const other = new Worker(core.jobs, { log: quiet, pollMs: 10, leaseMs: 10_000 });
          registerJobHandlers(other, core);
          other.start();
          return { database, other };
        });
        try {
          receiver.respond = (r) => ({ status: 200, delayMs: r.path === "/many" ? 2 : 0 });
          // Events in many transactions (so many dispatch passes and deliver jobs), and extra
          // deliver jobs for the same endpoint, so the workers compete for it all along.
          for (let batch = 0; batch < 12; batch++) {
            const events = Array.from({ length: 10 }, (_, i) => ({
              accountId: hook.account.id,
              kind: "session.started" as const,
              data: { n: batch * 10 + i },
            }));
            await insertEvents(server.core.database.db, events);
            const extra = {
              kind: "webhook.deliver",
              accountId: hook.account.id,
              payload: { endpoint: hook.id },
            };
            await server.core.jobs.enqueue(server.core.database.db, [extra, extra, extra]);
            await sleep(40);
          }
          await receiver.waitFor(() => receiver.at("/many").length >= 120, 20_000, "120 events");
          await sleep(300);
        } finally {
          receiver.respond = () => ({ status: 200 });
          for (const { database, other } of others) {
            await other.stop();
            await database?.close();
          }
        }
        const got = receiver.at("/many");
        assert.equal(got.length, 120, "each delivery sent once");
        assert.equal(new Set(got.map((r) => r.id)).size, 120);
        assert.deepEqual(
          got.map((r) => verified(hook.secret, r).data.n),
          Array.from({ length: 120 }, (_, n) => n),
        );
        assert.equal(receiver.maxInFlight.get("/many"), 1);
      });
    });

    describe(`webhook address safety on ${dialect}`, { skip, concurrency: 1 }, () => {
      let server: TestServer;
      let worker: Worker;
      let receiver: Receiver;

      before(async () => {
        receiver = await Receiver.start();
        server = await startTestServer({ dialect, env: { WORKER: "0", WEBHOOK_RETRY_SCHEDULE: "200ms" } });
        worker = startWorker(server);
      });
      after(async () => {
        await worker?.stop();
        await server?.stop();
        await receiver?.close();
      });

      test("no WEBHOOK_ALLOW_PRIVATE: loopback (literal, by name), plain http refused, logged", async () => {
        const account = await server.account("ssrf");
        const urls = [
          receiver.url("/ssrf", "127.0.0.1", "https"),
          receiver.url("/ssrf", "localhost", "https"),
          receiver.url("/ssrf", "127.0.0.1", "http"),
        ];
        const ids: number[] = [];
        for (const url of urls) ids.push((await server.core.webhooks.create(account.id, { url })).webhook.id);
        assert.deepEqual(server.core.webhooks.urlWarnings(urls[0]!), [
          "127.0.0.1 is a loopback address: refused unless WEBHOOK_ALLOW_PRIVATE=1",
        ]);
        await insertEvents(server.core.database.db, [
          { accountId: account.id, kind: "user.created", data: {} },
        ]);
        const logs = await until("every delivery to fail", async () => {
          const all = await Promise.all(ids.map((id) => server.core.webhooks.deliveries(account.id, id)));
          return all.every((list) => list[0]?.status === "failed") && all.map((list) => list[0]!);
        });
        const errors = logs.map((d) => d.attempt_log.map((a) => a.error));
        assert.ok(
          errors.every((e) => e.length === 2),
          "attempted and retried like any failure",
        );
        assert.match(errors[0]![0]!, /^refused: 127\.0\.0\.1 is a loopback address/);
        assert.match(errors[1]![0]!, /^refused: localhost resolves to a private or reserved address \(/);
        assert.ok(!RESOLVED.test(errors[1]!.join()), "no address localhost resolved to");
        assert.match(errors[2]![0]!, /^refused: plain http:\/\//);
        assert.equal(receiver.received.length, 0, "no request reached the receiver");
      });

      test("a name resolving to a private address: no resolved address on the console, in the log or stored", async () => {
        const account = await server.account("resolution");
        await server.core.admins.create(account, { email: "r@example.com", password: PASSWORD });
        const client = new ConsoleClient(server.url);
        assert.equal((await client.login("r@example.com", PASSWORD)).status, 303);
        await client.get("/console/webhooks");
        const url = receiver.url("/resolution", "localhost", "https");
        const made = await client.post("/console/webhooks", { url, events: "all" });
        assert.equal(made.status, 303, made.text);
        const shown = await client.get(made.location!);
        const id = Number(/\/console\/webhooks\/(\d+)"/.exec(shown.text)?.[1]);
        // The test button, then the endpoint's page once the delivery has failed.
        await client.get(`/console/webhooks/${id}`);
        assert.equal((await client.post(`/console/webhooks/${id}/test`)).status, 303);
        const page = await until("the test delivery to fail", async () => {
          const res = await client.get(`/console/webhooks/${id}`);
          return /status-bad">failed/.test(res.text) && res;
        });
        const generic =
          /refused: localhost resolves to a private or reserved address \(WEBHOOK_ALLOW_PRIVATE=1/;
        const list = await client.get("/console/webhooks");
        for (const [what, text] of [
          ["creation page", shown.text],
          ["endpoint page", page.text],
          ["list page", list.text],
        ] as const) {
          assert.ok(!RESOLVED.test(text), `${what}: ${RESOLVED.exec(text)?.[0]}`);
        }
        assert.match(page.text, generic);
        assert.match(list.text, generic);
        // What the CLI prints (the service's delivery log) and every stored row.
        const [delivery] = await server.core.webhooks.deliveries(account.id, id);
        assert.equal(delivery?.attempt_log.length, 2);
        assert.match(delivery!.last_error!, generic);
        assert.ok(!RESOLVED.test(JSON.stringify(delivery)));
        const db = server.core.database.db;
        const stored = [
          await sql`select * from webhook_deliveries where account_id = ${account.id}`.execute(db),
          await sql`select * from webhook_attempts where account_id = ${account.id}`.execute(db),
          await sql`select * from jobs where account_id = ${account.id}`.execute(db),
        ].flatMap((r) => r.rows);
        assert.ok(stored.length >= 4);
        assert.ok(!RESOLVED.test(JSON.stringify(stored)), JSON.stringify(stored));
        assert.equal(receiver.received.length, 0, "no request reached the receiver");
      });
    });
  }
});

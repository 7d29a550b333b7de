// The audit log of the worker's door (issue 29 point 3): every kind of job the worker runs is either
// walked here, its change leaving exactly one row naming the worker (actor "worker", address
// "local"), or listed with the reason it changes nothing an operator configures. A new kind fails
// the test until it is one or the other. Walked on a real server with its worker: a disabled user's
// session disconnected through the test's DAS, and a scheduled directory sync (its directory
// unreachable: a failed sync is recorded and audited too).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { DIRECTORY_SYNC_JOB } from "../../src/core/directories/rules.ts";
import { DELIVER_JOB as GUEST_DELIVER_JOB } from "../../src/core/guests/service.ts";
import { REPORT_EXPIRE_JOB, REPORT_JOB } from "../../src/core/reports/service.ts";
import { RETENTION_JOB } from "../../src/core/retention/service.ts";
import { COA_JOB, DISCONNECT_JOB, SWEEP_JOB } from "../../src/core/sessions/jobs.ts";
import { DELIVER_JOB, DISPATCH_JOB } from "../../src/core/webhooks/delivery.ts";
import { registerJobHandlers } from "../../src/jobs/handlers.ts";
import { PARTITIONS_JOB } from "../../src/jobs/partition-jobs.ts";
import { Worker } from "../../src/jobs/worker.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { accountingSender, eventually } from "../support/accounting.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "worker-walk-Secret-9";

/** Kinds whose work is no operator's change, by why. */
const UNAUDITED: Record<string, string> = {
  [DISPATCH_JOB]: "fans an event out into deliveries: the delivery log is its record",
  [DELIVER_JOB]: "sends one delivery; its outcome is on the delivery",
  [REPORT_JOB]: "writes a report file its requester asked for",
  [REPORT_EXPIRE_JOB]: "removes expired report files",
  [GUEST_DELIVER_JOB]: "sends a verification code or link (the guest's sign-in records it)",
  [PARTITIONS_JOB]: "creates and drops accounting partitions (storage, not configuration)",
  [RETENTION_JOB]: "deletes rows past their retention: the one deletion the audit log allows",
  [COA_JOB]: "pushes a session's new authorization to its NAS; the outcome is on the session",
  [SWEEP_JOB]: "closes sessions their NAS stopped reporting; disconnects it queues are walked",
};

/** Kinds walked below, with the row each leaves. */
const WALKED: Record<string, { resource: string; action: string }> = {
  [DISCONNECT_JOB]: { resource: "session", action: "disconnect" },
  [DIRECTORY_SYNC_JOB]: { resource: "directory", action: "sync" },
};

describe("audit log of the worker", () => {
  let database: TestDatabase;
  let server: TestServer;
  let das: TestDas;
  let account: AccountRow;
  let key: string;
  let acctPort: number;

  before(async () => {
    database = await createTestDatabase("sqlite");
    acctPort = await freeUdpPort();
    das = await startTestDas(SECRET);
    server = await startTestServer({
      database,
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(await freeUdpPort()),
        RADIUS_ACCT_PORT: String(acctPort),
        WORKER: "1",
      },
    });
    server.core.sessions.das = new DasClient({ timeoutMs: 200, retries: 1 });
    account = await server.account("default");
    key = await server.key(account);
    await server.core.networks.create(account.id, {
      name: "walk",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      coa_enabled: true,
      coa_port: das.port,
    });
  });
  after(async () => {
    await das?.close();
    await server?.stop();
    await database?.drop();
  });

  const rows = () => server.core.database.db.selectFrom("audit_log").selectAll().orderBy("id").execute();
  const byWorker = async (start: number) =>
    (await rows()).slice(start).filter((r) => r.actor_type === "worker");

  /** The worker's row for a change, once it has run; and that it is its only one. */
  async function workerRow(start: number, resource: string, action: string) {
    const found = await eventually(async () => {
      const mine = await byWorker(start);
      return mine.length > 0 ? mine : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 300)); // a second row would be written by now
    const all = await byWorker(start);
    assert.equal(all.length, 1, JSON.stringify(all));
    const row = found[0]!;
    assert.deepEqual(
      [row.actor_type, row.actor_id, row.actor_name, row.address, row.resource, row.action, row.account_id],
      ["worker", "", "worker", "local", resource, action, account.id],
    );
    return row;
  }

  test("every kind the worker runs is walked or says why it changes nothing audited", () => {
    const worker = new Worker(server.core.jobs, { log: { error() {}, warn() {} } });
    registerJobHandlers(worker, server.core);
    const kinds = worker.kinds().sort();
    const accounted = [...Object.keys(UNAUDITED), ...Object.keys(WALKED)].sort();
    assert.deepEqual(
      kinds.filter((k) => !accounted.includes(k)),
      [],
      "kinds of job neither walked nor listed",
    );
    // Partitions are kept on PostgreSQL only; this server is SQLite.
    assert.deepEqual(
      accounted.filter((k) => !kinds.includes(k)),
      [PARTITIONS_JOB],
      "kinds listed here that the worker no longer runs",
    );
  });

  test("a disabled user's session: the API's change by its key, the disconnect by the worker", async () => {
    const created = await server.call("POST", "/api/users", {
      key,
      body: { username: "walker", password: "a password" },
    });
    await accountingSender(acctPort, SECRET)(
      { user: "walker", session: "ww-1", mac: "02-00-00-00-07-01" },
      "Start",
    );
    const start = (await rows()).length;
    const disabled = await server.call("PUT", `/api/users/${created.body.id}`, {
      key,
      body: { status: "disabled" },
    });
    assert.equal(disabled.status, 200);
    const row = await workerRow(start, WALKED[DISCONNECT_JOB]!.resource, WALKED[DISCONNECT_JOB]!.action);
    assert.equal(JSON.parse(row.after!).result, "ack", row.after ?? "");
    const api = (await rows()).slice(start).filter((r) => r.actor_type !== "worker");
    assert.deepEqual(
      api.map((r) => [r.actor_type, r.resource, r.action]),
      [["api_key", "user", "update"]],
    );
  });

  // The API walk's one operation needing a live NAS (test/audit/api-walk.test.ts CHECKED_ELSEWHERE).
  test("the API's disconnect of a session: one row by the key, none by the worker", async () => {
    await accountingSender(acctPort, SECRET)(
      { user: "walker", session: "ww-2", mac: "02-00-00-00-07-02" },
      "Start",
    );
    const session = await server.core.database.db
      .selectFrom("radacct")
      .select("radacctid")
      .where("acctsessionid", "=", "ww-2")
      .executeTakeFirstOrThrow();
    const start = (await rows()).length;
    const answer = await server.call("POST", `/api/sessions/${session.radacctid}/disconnect`, {
      key,
      body: { reason: "walk" },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.disconnect.result, "ack");
    const added = (await rows()).slice(start);
    assert.deepEqual(
      added.map((r) => [r.actor_type, r.address, r.resource, r.resource_id, r.action]),
      [["api_key", "127.0.0.1", "session", String(session.radacctid), "disconnect"]],
    );
  });

  test("a scheduled directory sync, even a failed one, is the worker's row", async () => {
    const created = await server.call("POST", "/api/directories", {
      key,
      body: {
        name: "away",
        servers: ["ldap://127.0.0.1:9"],
        bind_password: "a bind password",
        user_base: "ou=people,dc=example,dc=org",
        connect_timeout_ms: 200,
        timeout_ms: 200,
        sync_interval: 1,
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const start = (await rows()).length;
    // The recurring job looks again every minute; bring its next look forward.
    await server.core.database.db
      .updateTable("jobs")
      .set({ run_at: Date.now() })
      .where("kind", "=", DIRECTORY_SYNC_JOB)
      .where("status", "=", "queued")
      .execute();
    const row = await workerRow(start, "directory", "sync");
    assert.equal(row.resource_id, String(created.body.id));
  });
});

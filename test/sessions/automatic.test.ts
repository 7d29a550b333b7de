// Automatic control through the durable job queue: disabling or deleting a user and disabling a
// voucher disconnect their open sessions; a disconnect queued by a server that then stops is sent
// by the next one (nothing lost in between); the sweep disconnects users whose Expiration passed
// and closes sessions their NAS stopped reporting with Lost-Carrier.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { createCore } from "../../src/core/index.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { openMigratedDatabase } from "../../src/startup.ts";
import { accountingSender, eventually, loginSender } from "../support/accounting.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "auto-Secret-31";

describe("automatic disconnects and sweeps (SQLite)", () => {
  let database: TestDatabase;
  let server: TestServer;
  let das: TestDas;
  let account: AccountRow;
  let network: Network;
  let key: string;
  let ports: { auth: number; acct: number };

  const start = async (worker: boolean) => {
    const s = await startTestServer({
      database,
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(ports.auth),
        RADIUS_ACCT_PORT: String(ports.acct),
        WORKER: worker ? "1" : "0",
      },
    });
    s.core.sessions.das = new DasClient({ timeoutMs: 200, retries: 1 });
    return s;
  };
  const accounting = () => accountingSender(ports.acct, SECRET);
  const requestsFor = (session: string) =>
    das.requests.filter((r) => r.attribute("Acct-Session-Id") === session);
  const sessionRow = (session: string) =>
    server.core.database.db
      .selectFrom("radacct")
      .selectAll()
      .where("acctsessionid", "=", session)
      .executeTakeFirstOrThrow();

  before(async () => {
    database = await createTestDatabase("sqlite");
    ports = { auth: await freeUdpPort(), acct: await freeUdpPort() };
    das = await startTestDas(SECRET);
    server = await start(true);
    account = await server.account("default");
    key = await server.key(account);
    ({ network } = await server.core.networks.create(account.id, {
      name: "lab",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      coa_enabled: true,
      coa_port: das.port,
    }));
  });
  after(async () => {
    await das?.close();
    await server?.stop();
    await database?.drop();
  });

  test("disabling a user, deleting one, and disabling a voucher disconnect their open sessions", async () => {
    const created = async (username: string) =>
      (await server.call("POST", "/api/users", { key, body: { username, password: "pw" } })).body
        .id as number;
    const send = accounting();
    const alice = await created("auto-alice");
    const bob = await created("auto-bob");
    await send({ user: "auto-alice", session: "aa-1", mac: "02-00-00-00-03-01" }, "Start");
    await send({ user: "auto-alice", session: "aa-2", mac: "02-00-00-00-03-02" }, "Start");
    await send({ user: "auto-bob", session: "ab-1", mac: "02-00-00-00-03-03" }, "Start");
    assert.equal(
      (await server.call("PUT", `/api/users/${alice}`, { key, body: { status: "disabled" } })).status,
      200,
    );
    await eventually(async () =>
      requestsFor("aa-1").length && requestsFor("aa-2").length ? true : undefined,
    );
    assert.equal(requestsFor("aa-1")[0]!.attribute("User-Name"), "auto-alice");
    assert.equal(requestsFor("ab-1").length, 0, "only the disabled user's sessions");
    await eventually(async () => ((await sessionRow("aa-2")).disconnect_result === "ack" ? true : undefined));

    assert.equal((await server.call("DELETE", `/api/users/${bob}`, { key })).status, 204);
    await eventually(async () => (requestsFor("ab-1").length ? true : undefined));

    const voucher = await server.call("POST", "/api/vouchers", {
      key,
      body: { validity: 3600, code: "AUTOV1" },
    });
    const login = await loginSender(ports.auth, SECRET)("autov1", "autov1");
    assert.equal(login.type, "Access-Accept");
    await send({ user: "autov1", session: "av-1", mac: "02-00-00-00-09-09" }, "Start");
    const disabled = await server.call("PATCH", `/api/vouchers/${voucher.body.id}`, {
      key,
      body: { status: "disabled" },
    });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.status, "disabled");
    await eventually(async () => (requestsFor("av-1").length ? true : undefined));
    const enabled = await server.call("PATCH", `/api/vouchers/${voucher.body.id}`, {
      key,
      body: { status: "enabled" },
    });
    assert.equal(enabled.body.status, "exhausted", "its one device slot is taken");
  });

  test("a live user's new bandwidth or Session-Timeout is pushed to their sessions with a CoA-Request", async () => {
    const send = accounting();
    const created = await server.call("POST", "/api/users", {
      key,
      body: { username: "auto-coa", password: "pw" },
    });
    await send({ user: "auto-coa", session: "co-1", mac: "02-00-00-00-03-07" }, "Start");
    const added = await server.call("POST", "/api/attributes", {
      key,
      body: {
        userid: created.body.id,
        table: "radreply",
        attribute: "WISPr-Bandwidth-Max-Down",
        operator: ":=",
        value: "2000000",
      },
    });
    assert.equal(added.status, 201);
    const coa = await eventually(async () =>
      requestsFor("co-1").find((r) => r.packet.type === "CoA-Request"),
    );
    assert.equal(coa.requestAuthenticatorValid, true);
    assert.equal(coa.messageAuthenticatorValid, true);
    assert.equal(coa.attribute("User-Name"), "auto-coa");
    assert.equal(coa.attribute("WISPr-Bandwidth-Max-Down"), "2000000");
    // Reply-Message is no gateway limit: nothing is pushed for it.
    const before = das.requests.length;
    await server.call("POST", "/api/attributes", {
      key,
      body: {
        userid: created.body.id,
        table: "radreply",
        attribute: "Reply-Message",
        operator: ":=",
        value: "hi",
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(das.requests.length, before);
  });

  test("a disconnect queued before a restart is sent by the next server", async () => {
    const send = accounting();
    const id = (
      await server.call("POST", "/api/users", { key, body: { username: "auto-carol", password: "pw" } })
    ).body.id as number;
    await send({ user: "auto-carol", session: "ac-1", mac: "02-00-00-00-03-04" }, "Start");
    await server.stop();
    // Another process (the CLI, a server without a worker) makes the change while no worker runs.
    const other = await openMigratedDatabase({
      dataDir: database.dataDir,
      databaseUrl: database.databaseUrl,
    });
    await createCore(other, { publicUrl: "http://localhost" }).users.update(account.id, id, {
      status: "disabled",
    });
    await other.close();
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(requestsFor("ac-1").length, 0, "nothing sent without a worker");
    server = await start(true);
    key = await server.key(account);
    await eventually(async () => (requestsFor("ac-1").length ? true : undefined));
    const job = await server.core.database.db
      .selectFrom("jobs")
      .selectAll()
      .where("kind", "=", "sessions.disconnect")
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    await eventually(async () =>
      (await server.core.jobs.get(job.id))?.status === "done" ? true : undefined,
    );
  });

  test("the sweep disconnects users whose Expiration passed and closes stale sessions with Lost-Carrier", async () => {
    const send = accounting();
    const now = Math.floor(Date.now() / 1000);
    const created = await server.call("POST", "/api/users", {
      key,
      body: { username: "auto-exp", password: "pw" },
    });
    await server.call("POST", "/api/attributes", {
      key,
      body: {
        userid: created.body.id,
        table: "radcheck",
        attribute: "Expiration",
        operator: ":=",
        value: String(now + 1),
      },
    });
    await send({ user: "auto-exp", session: "ae-1", mac: "02-00-00-00-03-05" }, "Start");
    await server.core.networks.update(account.id, network.id, { interim_interval: 60 });
    await send({ user: "auto-stale", session: "as-1", mac: "02-00-00-00-03-06" }, "Start", [
      ["Event-Timestamp", now - 1000],
    ]);
    await send({ user: "auto-stale", session: "as-1", mac: "02-00-00-00-03-06" }, "Interim-Update", [
      ["Event-Timestamp", now - 900],
      ["Acct-Session-Time", 100],
    ]);
    const first = await server.core.sessions.sweep(now);
    assert.equal(first.queued, 0, "not expired yet");
    assert.equal(first.closed, 1);
    const stale = await sessionRow("as-1");
    assert.equal(stale.acctterminatecause, "Lost-Carrier");
    assert.equal(Number(stale.acctstoptime), now - 900, "stopped at its last accounting");
    assert.equal(Number(stale.acctsessiontime), 100);
    const stopped = await server.core.database.db
      .selectFrom("events")
      .select("data")
      .where("kind", "=", "session.stopped")
      .execute();
    assert.ok(stopped.some((e) => JSON.parse(e.data).terminate_cause === "Lost-Carrier"));

    const second = await server.core.sessions.sweep(now + 5);
    assert.deepEqual(second, { closed: 0, queued: 1 });
    await eventually(async () => (requestsFor("ae-1").length ? true : undefined));
    assert.deepEqual(
      await server.core.sessions.sweep(now + 10),
      { closed: 0, queued: 0 },
      "not queued twice",
    );
  });

  test("a queued disconnect for a network with CoA off is recorded as not sent", async () => {
    await server.core.networks.update(account.id, network.id, { coa_enabled: false });
    const created = await server.call("POST", "/api/users", {
      key,
      body: { username: "auto-off", password: "pw" },
    });
    await accounting()({ user: "auto-off", session: "ao-1", mac: "02-00-00-00-03-08" }, "Start");
    await server.call("PUT", `/api/users/${created.body.id}`, { key, body: { status: "disabled" } });
    const row = await eventually(async () => {
      const r = await sessionRow("ao-1");
      return r.disconnect_result ? r : undefined;
    });
    assert.equal(row.disconnect_result, "error");
    assert.match(row.disconnect_cause ?? "", /CoA\) is off for network/);
    assert.equal(requestsFor("ao-1").length, 0);
    await server.core.networks.update(account.id, network.id, { coa_enabled: true });
  });
});

// The audit log of the RADIUS door (issue 29 point 3), through real UDP packets. A login and its
// accounting are reads and records, not changes an operator audits: attempts go to radpostauth,
// sessions to radacct, a MAB device's sighting to its last_seen, none to the audit log. The door makes two changes of its own, and each
// leaves exactly one row naming RADIUS (actor "radius", the NAS's address):
//   - a voucher's first use starts its validity (core/vouchers/login.ts: voucher/activate);
//   - an Interim-Update past a quota queues the session's disconnect (core/sessions: the quota
//     watch, session/queue_disconnect).
// RadSec packets run as the same actor (src/radius/radsec/connection.ts) through the same core.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MASK } from "../../src/core/audit/mask.ts";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import { accountingSender, eventually, loginSender } from "../support/accounting.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "radius-walk-Secret-5";

describe("audit log of the RADIUS door", () => {
  let server: TestServer;
  let accountId: number;
  let authPort: number;
  let login: ReturnType<typeof loginSender>;
  let accounting: ReturnType<typeof accountingSender>;

  before(async () => {
    authPort = await freeUdpPort();
    const acctPort = await freeUdpPort();
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(authPort),
        RADIUS_ACCT_PORT: String(acctPort),
      },
    });
    accountId = (await server.account("default")).id;
    await server.core.networks.create(accountId, {
      name: "walk",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      mab_mode: "devices",
      mab_password: "mac",
    });
    login = loginSender(authPort, SECRET);
    accounting = accountingSender(acctPort, SECRET);
  });
  after(() => server?.stop());

  async function maxId(): Promise<number> {
    const row = await server.core.database.db
      .selectFrom("audit_log")
      .select((eb) => eb.fn.max("id").as("id"))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }
  const rowsAfter = (id: number) =>
    server.core.database.db.selectFrom("audit_log").selectAll().where("id", ">", id).orderBy("id").execute();
  /** The rows after `id` once the door's after-answer work (the quota check) has had its time. */
  const settledRowsAfter = async (id: number) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return rowsAfter(id);
  };

  function assertRadius(
    row: Awaited<ReturnType<typeof rowsAfter>>[number],
    resource: string,
    action: string,
  ) {
    assert.deepEqual(
      [row.actor_type, row.actor_id, row.actor_name, row.actor_role, row.address, row.account_id],
      ["radius", "", "radius", "", "127.0.0.1", accountId],
    );
    assert.deepEqual([row.resource, row.action], [resource, action]);
  }

  test("a user's login, a refused one, and its accounting leave no audit row", async () => {
    await server.core.users.create(accountId, { username: "reader", password: "Reader-pass-1" });
    const start = await maxId();
    assert.equal((await login("reader", "Reader-pass-1")).type, "Access-Accept");
    assert.equal((await login("reader", "wrong")).type, "Access-Reject");
    const station = { user: "reader", session: "rw-1", mac: "02-00-00-00-09-09" };
    await accounting(station, "Start");
    await accounting(station, "Interim-Update", [["Acct-Input-Octets", 5000]]);
    await accounting(station, "Stop", [["Acct-Input-Octets", 6000]]);
    assert.deepEqual(await settledRowsAfter(start), []);
    // What they did record, elsewhere: the attempts and the session.
    const attempts = await server.core.database.db
      .selectFrom("radpostauth")
      .select("reply")
      .where("account_id", "=", accountId)
      .where("username", "=", "reader")
      .execute();
    assert.deepEqual(attempts.map((a) => a.reply).sort(), ["Access-Accept", "Access-Reject"]);
  });

  test("a device's MAC authentication leaves no audit row (its sighting is recorded on the device)", async () => {
    const device = await server.core.devices.create(accountId, { mac: "00:16:3e:29:05:01" });
    const start = await maxId();
    // As a switch sends it: User-Name, password and Calling-Station-Id all the one MAC.
    const answer = await sendRadius({
      ...accessRequestPap("00163e290501", "00163e290501", [["Calling-Station-Id", "00-16-3E-29-05-01"]]),
      host: "127.0.0.1",
      port: authPort,
      secret: SECRET,
      timeoutMs: 2000,
      retries: 0,
    });
    assert.equal(answer.type, "Access-Accept");
    assert.deepEqual(await settledRowsAfter(start), []);
    const seen = await server.core.devices.get(accountId, device.id);
    assert.ok(seen.last_seen, "the sighting is on the device, not in the audit log");
  });

  test("a voucher's first use: one row naming RADIUS, its code masked; the next use none", async () => {
    const voucher = await server.core.vouchers.create(accountId, { validity: 3600 });
    const start = await maxId();
    assert.equal((await login(voucher.code, voucher.code)).type, "Access-Accept");
    const rows = await settledRowsAfter(start);
    assert.equal(rows.length, 1, JSON.stringify(rows));
    const row = rows[0]!;
    assertRadius(row, "voucher", "activate");
    assert.equal(row.resource_id, String(voucher.id));
    const afterFields = JSON.parse(row.after!);
    assert.equal(afterFields.code, MASK);
    assert.equal(afterFields.voucher_id, voucher.id);
    assert.ok(!`${row.before} ${row.after}`.toLowerCase().includes(voucher.code.toLowerCase()));

    const again = await maxId();
    assert.equal((await login(voucher.code, voucher.code)).type, "Access-Accept");
    assert.deepEqual(await settledRowsAfter(again), [], "the same device again: nothing changes");
  });

  test("an Interim-Update past a voucher's data limit: the disconnect it queues is one row naming RADIUS", async () => {
    const voucher = await server.core.vouchers.create(accountId, { validity: 3600, data_limit: 1000 });
    assert.equal((await login(voucher.code, voucher.code)).type, "Access-Accept");
    const station = { user: voucher.code, session: "rw-2", mac: "02-00-00-00-09-09" };
    const start = await maxId();
    await accounting(station, "Start");
    await accounting(station, "Interim-Update", [["Acct-Input-Octets", 400]]);
    assert.deepEqual(await settledRowsAfter(start), [], "within the quota: nothing");
    await accounting(station, "Interim-Update", [["Acct-Input-Octets", 1500]]);
    const rows = await eventually(async () => {
      const found = await rowsAfter(start);
      return found.length > 0 ? found : undefined;
    }, 5000);
    // The worker then sends it (its own row, walked in worker-walk.test.ts): here CoA is off.
    const settled = await settledRowsAfter(start);
    assert.equal(settled.filter((r) => r.actor_type !== "worker").length, 1, JSON.stringify(settled));
    assertRadius(rows[0]!, "session", "queue_disconnect");
    const session = await server.core.database.db
      .selectFrom("radacct")
      .select("radacctid")
      .where("account_id", "=", accountId)
      .where("acctsessionid", "=", "rw-2")
      .executeTakeFirstOrThrow();
    assert.equal(rows[0]!.resource_id, String(session.radacctid));
    assert.deepEqual(JSON.parse(rows[0]!.after!), { reason: "quota exhausted: voucher data" });
  });
});

// Time and data quotas through real RADIUS packets, on both databases: refused at login ("quota
// exhausted"), sent as what remains (Session-Timeout, ChilliSpot-Max-Total-Octets,
// Mikrotik-Total-Limit with gigawords), enforced on Interim-Update by a disconnect the worker sends,
// counters that never go back when accounting comes late or twice, vouchers' data_limit, bad values
// refused, and the network's Acct-Interim-Interval.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { periodEnd, periodStart } from "../../src/core/aaa/quotas.ts";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { accountingSender, attribute, eventually, loginSender } from "../support/accounting.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { dialects } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { useNoonTimeZone } from "../support/time-zone.ts";

// Daily and monthly quotas reset at local midnight and on the 1st: this suite runs where it is
// noon now, so sessions seeded minutes back are in today's sum whenever it runs.
useNoonTimeZone();

const SECRET = "quota-Secret-23";
const GIGA = 2 ** 32;

for (const { dialect, skip } of await dialects()) {
  describe(`quotas on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let das: TestDas;
    let account: AccountRow;
    let key: string;
    let account_: ReturnType<typeof accountingSender>;
    let login: ReturnType<typeof loginSender>;

    const user = async (username: string, check: [string, string][]) => {
      const created = await server.call("POST", "/api/users", {
        key,
        body: { username, password: "pw-quota" },
      });
      assert.equal(created.status, 201);
      for (const [attr, value] of check) {
        const res = await server.call("POST", "/api/attributes", {
          key,
          body: { userid: created.body.id, table: "radcheck", attribute: attr, operator: ":=", value },
        });
        assert.equal(res.status, 201, res.text);
      }
      return created.body.id as number;
    };

    before(async () => {
      const [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
      server = await startTestServer({
        dialect,
        env: {
          RADIUS_HOST: "127.0.0.1",
          RADIUS_AUTH_PORT: String(authPort),
          RADIUS_ACCT_PORT: String(acctPort),
        },
      });
      das = await startTestDas(SECRET);
      server.core.sessions.das = new DasClient({ timeoutMs: 200, retries: 1 });
      account = await server.account("default");
      key = await server.key(account);
      await server.core.networks.create(account.id, {
        name: "lab",
        nas_ip: "127.0.0.1",
        secret: SECRET,
        coa_enabled: true,
        coa_port: das.port,
        interim_interval: 120,
      });
      account_ = accountingSender(acctPort, SECRET);
      login = loginSender(authPort, SECRET);
    });
    after(async () => {
      await das?.close();
      await server?.stop();
    });

    test("bad quota values are refused with a clear message", async () => {
      const id = await user("q-bad", []);
      for (const [attr, value] of [
        ["Wisp-Max-Daily-Octets", "abc"],
        ["Wisp-Max-Monthly-Octets", "-5"],
        ["Wisp-Max-All-Octets", "99999999999999999999"],
        ["Max-Daily-Session", "400000000"],
      ] as const) {
        const res = await server.call("POST", "/api/attributes", {
          key,
          body: { userid: id, table: "radcheck", attribute: attr, operator: ":=", value },
        });
        assert.equal(res.status, 400, `${attr} ${value}`);
        assert.match(res.body.message, /^value must be/);
      }
      const reply = await server.call("POST", "/api/attributes", {
        key,
        body: {
          userid: id,
          table: "radreply",
          attribute: "Wisp-Max-Daily-Octets",
          operator: ":=",
          value: "5",
        },
      });
      assert.equal(reply.status, 400, "a check item, never a reply item");
    });

    test("a data quota rejects when used up and otherwise sends what remains; Acct-Interim-Interval goes out", async () => {
      await user("q-data", [["Wisp-Max-Daily-Octets", "5000"]]);
      const station = { user: "q-data", session: "qd-1", mac: "02-00-00-00-02-01" };
      await account_(station, "Start");
      await account_(station, "Interim-Update", [
        ["Acct-Input-Octets", 3000],
        ["Acct-Output-Octets", 1000],
        ["Acct-Session-Time", 30],
      ]);
      const accept = await login("q-data", "pw-quota");
      assert.equal(accept.type, "Access-Accept");
      assert.equal(attribute(accept, "ChilliSpot-Max-Total-Octets"), "1000");
      assert.equal(attribute(accept, "Mikrotik-Total-Limit"), "1000");
      assert.equal(attribute(accept, "Mikrotik-Total-Limit-Gigawords"), undefined);
      assert.equal(attribute(accept, "Acct-Interim-Interval"), "120");

      // The next Interim-Update uses it up: the worker disconnects the session.
      const before = das.requests.length;
      await account_(station, "Interim-Update", [
        ["Acct-Input-Octets", 4000],
        ["Acct-Output-Octets", 1000],
        ["Acct-Session-Time", 60],
      ]);
      const request = await eventually(async () => das.requests[before]);
      assert.equal(request.attribute("Acct-Session-Id"), "qd-1");
      const row = await eventually(async () => {
        const r = await server.core.database.db
          .selectFrom("radacct")
          .selectAll()
          .where("acctsessionid", "=", "qd-1")
          .executeTakeFirstOrThrow();
        return r.disconnect_result === "ack" ? r : undefined;
      });
      assert.equal(row.disconnect_result, "ack");
      const reject = await login("q-data", "pw-quota");
      assert.equal(reject.type, "Access-Reject");
      assert.equal(attribute(reject, "Reply-Message"), "quota exhausted: daily data");
    });

    test("gigawords count, and the remainder over 4 GiB is split for MikroTik and capped for CoovaChilli", async () => {
      await user("q-giga", [["Wisp-Max-All-Octets", "10000000000"]]);
      const station = { user: "q-giga", session: "qg-1", mac: "02-00-00-00-02-02" };
      await account_(station, "Start");
      await account_(station, "Stop", [
        ["Acct-Input-Gigawords", 1],
        ["Acct-Input-Octets", 0],
        ["Acct-Output-Octets", 0],
        ["Acct-Session-Time", 10],
      ]);
      const accept = await login("q-giga", "pw-quota");
      const remaining = 10_000_000_000 - GIGA;
      assert.equal(attribute(accept, "Mikrotik-Total-Limit"), String(remaining % GIGA));
      assert.equal(attribute(accept, "Mikrotik-Total-Limit-Gigawords"), String(Math.floor(remaining / GIGA)));
      assert.equal(attribute(accept, "ChilliSpot-Max-Total-Octets"), String(GIGA - 1));
    });

    test("daily time: sqlcounter's overlap sum rejects when used up, caps Session-Timeout otherwise", async () => {
      const now = Math.floor(Date.now() / 1000);
      await user("q-time", [["Max-Daily-Session", "600"]]);
      const station = { user: "q-time", session: "qt-1", mac: "02-00-00-00-02-03" };
      await account_(station, "Start", [["Event-Timestamp", now - 100]]);
      await account_(station, "Stop", [
        ["Event-Timestamp", now],
        ["Acct-Session-Time", 100],
      ]);
      const accept = await login("q-time", "pw-quota");
      const toReset = periodEnd("day", now) - now;
      assert.ok(toReset > 3600 && now - periodStart("day", now) > 3600, "noon in this suite's zone");
      // rlm_sqlcounter: past the reset, the next day's allowance is added.
      const expected = 500 >= toReset ? toReset + 600 : 500;
      assert.ok(Math.abs(Number(attribute(accept, "Session-Timeout")) - expected) <= 2);
      await account_({ ...station, session: "qt-2" }, "Stop", [
        ["Event-Timestamp", now],
        ["Acct-Session-Time", 500],
      ]);
      const reject = await login("q-time", "pw-quota");
      assert.equal(reject.type, "Access-Reject");
      assert.equal(attribute(reject, "Reply-Message"), "quota exhausted: daily time");
    });

    test("counters never go back: a late or repeated Interim-Update changes nothing", async () => {
      await user("q-order", [["Wisp-Max-Monthly-Octets", "100000"]]);
      const station = { user: "q-order", session: "qo-1", mac: "02-00-00-00-02-04" };
      const now = Math.floor(Date.now() / 1000);
      await account_(station, "Start", [["Event-Timestamp", now - 60]]);
      const update = (at: number, octets: number) =>
        account_(station, "Interim-Update", [
          ["Event-Timestamp", at],
          ["Acct-Input-Octets", octets],
          ["Acct-Session-Time", at - now + 60],
        ]);
      await update(now, 5000);
      await update(now, 5000);
      await update(now - 30, 100); // late
      const row = await server.core.database.db
        .selectFrom("radacct")
        .selectAll()
        .where("acctsessionid", "=", "qo-1")
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.acctinputoctets), 5000);
      assert.equal(Number(row.acctsessiontime), 60);
      const accept = await login("q-order", "pw-quota");
      assert.equal(attribute(accept, "ChilliSpot-Max-Total-Octets"), "95000");
    });

    test("a voucher's data_limit: sent at login, refused once used up; bad values refused", async () => {
      const bad = await server.call("POST", "/api/vouchers", {
        key,
        body: { validity: 3600, data_limit: -1 },
      });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /data_limit/);
      const created = await server.call("POST", "/api/vouchers", {
        key,
        body: { validity: 3600, data_limit: 2000, code: "DATA2000" },
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.data_limit, 2000);
      const first = await login("data2000", "data2000");
      assert.equal(first.type, "Access-Accept");
      assert.equal(attribute(first, "ChilliSpot-Max-Total-Octets"), "2000");
      await account_({ user: "data2000", session: "qv-1", mac: "02-00-00-00-09-09" }, "Stop", [
        ["Acct-Input-Octets", 1500],
        ["Acct-Output-Octets", 600],
        ["Acct-Session-Time", 10],
      ]);
      const second = await login("DATA2000", "DATA2000");
      assert.equal(second.type, "Access-Reject");
      assert.equal(attribute(second, "Reply-Message"), "quota exhausted: voucher data");
    });
  });
}

// /api/policies end to end: a real server on SQLite and PostgreSQL. CRUD, reorder, explain, bad
// input (never half-applied), account isolation, warnings.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

for (const { dialect, skip } of await dialects()) {
  describe(`policies API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;
    let readKey: string;
    let network: number;
    let otherNetwork: number;
    let staff: number;
    let otherGroup: number;

    before(async () => {
      server = await startTestServer({ dialect });
      const account = await server.account("default");
      const other = await server.account("other");
      key = await server.key(account, { rateLimit: 100_000 });
      otherKey = await server.key(other, { rateLimit: 100_000 });
      readKey = await server.key(account, { permissions: "policies:read", rateLimit: 100_000 });
      const { core } = server;
      network = (
        await core.networks.create(account.id, {
          name: "office",
          nas_ip: "127.0.0.9",
          time_zone: "Europe/Paris",
        })
      ).network.id;
      otherNetwork = (await core.networks.create(other.id, { name: "theirs", nas_ip: "127.0.0.10" })).network
        .id;
      staff = (await core.groups.create(account.id, { name: "staff" })).id;
      otherGroup = (await core.groups.create(other.id, { name: "theirs" })).id;
      const ann = await core.users.create(account.id, { username: "ann", password: "pw-ann-1234" });
      await core.groups.addMember(account.id, staff, { userid: ann.id });
    });
    after(() => server?.stop());

    const call = (method: string, path: string, body?: unknown, k = key) =>
      server.call(method, path, { key: k, ...(body === undefined ? {} : { body }) });
    const list = async () => (await call("GET", "/api/policies")).body;

    test("create, get, list in order with the default last; update; delete renumbers", async () => {
      const a = await call("POST", "/api/policies", {
        name: "staff vlan",
        conditions: { groups: [staff], ssids: ["Staff*"] },
        outcome: { action: "accept", vlan: 10, filter_id: "staff" },
      });
      assert.equal(a.status, 201, a.text);
      assert.equal(a.headers.get("location"), `/api/policies/${a.body.id}`);
      assert.equal(a.body.position, 1);
      const b = await call("POST", "/api/policies", {
        name: "night",
        position: 1,
        conditions: { times: ["22:00-06:00"] },
        outcome: { action: "reject", reason: "closed at night" },
      });
      assert.equal(b.status, 201, b.text);
      let l = await list();
      assert.deepEqual(
        l.data.map((p: { name: string; position: number }) => [p.name, p.position]),
        [
          ["night", 1],
          ["staff vlan", 2],
        ],
      );
      assert.deepEqual(l.default, {
        name: "default",
        position: 3,
        outcome: { action: "accept" },
        time_zone: null,
        warnings: [],
      });
      assert.equal((await call("GET", `/api/policies/${a.body.id}`)).body.outcome.vlan, 10);
      const up = await call("PATCH", `/api/policies/${a.body.id}`, { description: "VLAN 10", position: 1 });
      assert.equal(up.status, 200, up.text);
      assert.equal(up.body.position, 1);
      assert.equal(up.body.conditions.groups[0], staff, "conditions kept when not given");
      assert.equal((await call("DELETE", `/api/policies/${a.body.id}`)).status, 204);
      l = await list();
      assert.deepEqual(
        l.data.map((p: { name: string; position: number }) => [p.name, p.position]),
        [["night", 1]],
      );
      assert.equal((await call("GET", `/api/policies/${a.body.id}`)).status, 404);
      assert.equal((await call("DELETE", `/api/policies/${b.body.id}`)).status, 204);
    });

    test("reorder and move: one consistent order; a wrong list is refused whole", async () => {
      const ids: number[] = [];
      for (const name of ["p1", "p2", "p3"]) {
        ids.push(
          (
            await call("POST", "/api/policies", {
              name,
              conditions: { ssids: [name] },
              outcome: { action: "accept", vlan: ids.length + 1 },
            })
          ).body.id,
        );
      }
      const r = await call("PUT", "/api/policies/order", { ids: [ids[2], ids[0], ids[1]] });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.body.data.map((p: { id: number }) => p.id),
        [ids[2], ids[0], ids[1]],
      );
      const m = await call("POST", `/api/policies/${ids[1]}/move`, { position: 1 });
      assert.deepEqual(
        m.body.data.map((p: { id: number }) => p.id),
        [ids[1], ids[2], ids[0]],
      );
      const bad = await call("PUT", "/api/policies/order", { ids: [ids[0], ids[1]] });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.details[0].field, "ids");
      assert.equal((await call("POST", `/api/policies/${ids[1]}/move`, { position: 4 })).status, 400);
      assert.deepEqual(
        (await list()).data.map((p: { id: number }) => p.id),
        [ids[1], ids[2], ids[0]],
        "unchanged",
      );
      for (const id of ids) await call("DELETE", `/api/policies/${id}`);
    });

    test("bad input: the API's error shape, nothing written", async () => {
      const cases: [unknown, number, RegExp][] = [
        [{ name: "v", outcome: { action: "accept", vlan: 4095 } }, 400, /vlan/],
        [{ name: "v", outcome: { action: "accept", vlan: 0 } }, 400, /vlan/],
        [{ name: "t", conditions: { times: ["23:00-23:00"] }, outcome: { action: "accept" } }, 400, /times/],
        [{ name: "t", conditions: { times: ["25:00-01:00"] }, outcome: { action: "accept" } }, 400, /times/],
        [{ name: "e", conditions: { ssids: [] }, outcome: { action: "accept" } }, 400, /ssids/],
        [{ name: "r", outcome: { action: "reject", vlan: 3 } }, 400, /accept outcomes only/],
        [{ name: "default", outcome: { action: "accept" } }, 400, /name/],
        [
          { name: "n", conditions: { networks: [otherNetwork] }, outcome: { action: "accept" } },
          404,
          /network/,
        ],
        [{ name: "g", conditions: { groups: [otherGroup] }, outcome: { action: "accept" } }, 404, /group/],
      ];
      for (const [body, status, message] of cases) {
        const res = await call("POST", "/api/policies", body);
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.error, true);
        assert.match(res.body.message, message);
      }
      const zone = await call("PUT", "/api/policies/default", {
        outcome: { action: "reject" },
        time_zone: "Mars/Olympus",
      });
      assert.equal(zone.status, 400);
      assert.equal(zone.body.details[0].field, "time_zone");
      const l = await list();
      assert.equal(l.total, 0);
      assert.deepEqual(l.default.outcome, { action: "accept" }, "the valid half was not applied");
      assert.equal(
        (await call("POST", "/api/policies", { name: "x", outcome: { action: "accept" } }, readKey)).status,
        403,
      );
      const dup = await call("POST", "/api/policies", { name: "same", outcome: { action: "accept" } });
      assert.equal(
        (await call("POST", "/api/policies", { name: "same", outcome: { action: "accept" } })).status,
        409,
      );
      await call("DELETE", `/api/policies/${dup.body.id}`);
    });

    test("account isolation: another account's policies are 404 and not listed", async () => {
      const mine = await call("POST", "/api/policies", { name: "mine", outcome: { action: "accept" } });
      for (const [method, path, body] of [
        ["GET", `/api/policies/${mine.body.id}`],
        ["PATCH", `/api/policies/${mine.body.id}`, { name: "stolen" }],
        ["DELETE", `/api/policies/${mine.body.id}`],
        ["POST", `/api/policies/${mine.body.id}/move`, { position: 1 }],
        ["PUT", "/api/policies/order", { ids: [mine.body.id] }],
      ] as [string, string, unknown?][]) {
        assert.equal((await call(method, path, body, otherKey)).status, 404, `${method} ${path}`);
      }
      assert.equal((await call("GET", "/api/policies", undefined, otherKey)).body.total, 0);
      assert.equal(
        (await call("POST", "/api/policies/explain", { network_id: network }, otherKey)).status,
        404,
      );
      await call("DELETE", `/api/policies/${mine.body.id}`);
    });

    test("warnings: a rule shadowed by an earlier one with fewer conditions says why", async () => {
      const wide = await call("POST", "/api/policies", {
        name: "staff ssid",
        conditions: { ssids: ["Staff*"] },
        outcome: { action: "accept", vlan: 10 },
      });
      const narrow = await call("POST", "/api/policies", {
        name: "staff ssid contractors",
        conditions: { ssids: ["Staff"], groups: [staff] },
        outcome: { action: "reject", reason: "no contractors" },
      });
      assert.equal(narrow.status, 201);
      assert.equal(narrow.body.warnings[0].kind, "unreachable");
      assert.equal(narrow.body.warnings[0].earlier_id, wide.body.id);
      assert.match(narrow.body.warnings[0].message, /subset/);
      await call("DELETE", `/api/policies/${wide.body.id}`);
      await call("DELETE", `/api/policies/${narrow.body.id}`);
    });

    test("explain: the matched rule, why the earlier ones missed, the exact reply; nothing recorded", async () => {
      const night = await call("POST", "/api/policies", {
        name: "night",
        conditions: { times: ["22:00-06:00"] },
        outcome: { action: "reject", reason: "closed" },
      });
      const vlan = await call("POST", "/api/policies", {
        name: "staff",
        conditions: { groups: [staff], methods: ["PAP", "PEAP"], days: ["mon"] },
        outcome: { action: "accept", vlan: 10, session_timeout: 3600 },
      });
      const before = await server.core.database.db
        .selectFrom("radpostauth")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirst();
      // Monday 2024-01-01 09:00 in Paris is 08:00Z.
      const res = await call("POST", "/api/policies/explain", {
        network_id: network,
        username: "ann",
        method: "PAP",
        time: "2024-01-01T08:00:00Z",
        ssid: "Staff",
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.matched, { id: vlan.body.id, name: "staff", position: 2, default: false });
      assert.equal(res.body.skipped[0].condition, "times");
      assert.equal(res.body.skipped[0].actual, "09:00");
      assert.equal(res.body.facts.time_zone, "Europe/Paris");
      assert.deepEqual(res.body.reply, [
        { attribute: "Tunnel-Type:1", value: "VLAN" },
        { attribute: "Tunnel-Medium-Type:1", value: "IEEE-802" },
        { attribute: "Tunnel-Private-Group-Id:1", value: "10" },
        { attribute: "Session-Timeout", value: "3600" },
      ]);
      const atNight = await call("POST", "/api/policies/explain", {
        network_id: network,
        username: "ann",
        method: "PAP",
        time: "2024-01-01T22:30:00Z",
      });
      assert.equal(atNight.body.decision, "reject");
      assert.equal(atNight.body.reason, "closed");
      const tuesday = await call("POST", "/api/policies/explain", {
        network_id: network,
        username: "ann",
        method: "PAP",
        time: "2024-01-02T08:00:00Z",
      });
      assert.equal(tuesday.body.matched.default, true);
      assert.deepEqual(
        tuesday.body.skipped.map((s: { condition: string }) => s.condition),
        ["times", "days"],
      );
      const after = await server.core.database.db
        .selectFrom("radpostauth")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirst();
      assert.equal(Number(after?.n), Number(before?.n), "nothing recorded");
      assert.equal((await call("POST", "/api/policies/explain", { network_id: 999_999 })).status, 404);
      assert.equal(
        (await call("POST", "/api/policies/explain", { network_id: network, time: "yesterday" })).status,
        400,
      );
      await call("DELETE", `/api/policies/${night.body.id}`);
      await call("DELETE", `/api/policies/${vlan.body.id}`);
    });
  });
}

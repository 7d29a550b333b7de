// /api/devices end to end: a real server on a real database (SQLite, and PostgreSQL when running).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const FIELDS = [
  "created",
  "description",
  "expires",
  "group_id",
  "id",
  "kind",
  "last_network_id",
  "last_seen",
  "mac",
  "name",
  "portal_id",
  "status",
  "updated",
  "user_id",
  "voucher_id",
].sort();

for (const { dialect, skip } of await dialects()) {
  describe(`devices API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;
    let accountId: number;

    before(async () => {
      server = await startTestServer({ dialect });
      key = await server.key("default", { rateLimit: 100_000 });
      otherKey = await server.key("other", { rateLimit: 100_000 });
      accountId = (await server.account("default")).id;
    });
    after(() => server?.stop());

    const create = (body: unknown, k = key) => server.call("POST", "/api/devices", { key: k, body });
    const events = async (kind: string) =>
      (
        await server.core.database.db
          .selectFrom("events")
          .select("data")
          .where("account_id", "=", accountId)
          .where("kind", "=", kind)
          .orderBy("id")
          .execute()
      ).map((e) => JSON.parse(e.data));

    test("create: 201, Location, the MAC in canonical form whatever the notation", async () => {
      const notations = [
        "AA-BB-CC-00-00-01",
        "aabbcc000002",
        "aabb.cc00.0003",
        "AA:BB:CC:00:00:04",
        "aabbcc-000005",
      ];
      for (const [i, mac] of notations.entries()) {
        const res = await create({ mac, name: `printer ${i}` });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.headers.get("location"), `/api/devices/${res.body.id}`);
        assert.deepEqual(Object.keys(res.body).sort(), FIELDS);
        assert.equal(res.body.mac, `aa:bb:cc:00:00:0${i + 1}`);
        assert.equal(res.body.status, "enabled");
        assert.equal(res.body.kind, "registered");
        assert.equal(res.body.last_seen, null);
      }
      const created = await events("device.created");
      assert.equal(created.at(-1).mac, "aa:bb:cc:00:00:05");
    });

    test("malformed MACs: 400 naming the field, nothing written", async () => {
      const before = (await server.call("GET", "/api/devices", { key })).body.total;
      const bad: [string, RegExp][] = [
        ["aabbccddee", /must be a MAC address/],
        ["aabbccddeeffaa", /must be a MAC address/],
        ["gg:bb:cc:dd:ee:ff", /must be a MAC address/],
        ["01:00:5e:00:00:01", /multicast/],
        ["ff:ff:ff:ff:ff:ff", /multicast/],
        ["00:00:00:00:00:00", /all zeros/],
        ["", /must be a MAC address/],
      ];
      for (const [mac, message] of bad) {
        const res = await create({ mac });
        assert.equal(res.status, 400, mac);
        assert.equal(res.body.error, true);
        assert.equal(res.body.details[0].field, "mac");
        assert.match(res.body.message, message, mac);
      }
      const res = await create({ mac: "02:00:00:00:00:09", colour: "red" });
      assert.equal(res.status, 400);
      assert.match(res.body.message, /colour/);
      assert.equal((await server.call("GET", "/api/devices", { key })).body.total, before);
    });

    test("a MAC twice in one account: 409 in any notation; another account may have it and sees only its own", async () => {
      const first = await create({ mac: "02:11:22:33:44:55" });
      assert.equal(first.status, 201);
      const again = await create({ mac: "02-11-22-33-44-55" });
      assert.equal(again.status, 409);
      assert.match(again.body.message, /already exists/);
      const other = await create({ mac: "021122334455", name: "theirs" }, otherKey);
      assert.equal(other.status, 201, other.text);
      assert.equal((await server.call("GET", `/api/devices/${other.body.id}`, { key })).status, 404);
      assert.equal(
        (await server.call("GET", `/api/devices/${first.body.id}`, { key: otherKey })).status,
        404,
      );
      const theirs = await server.call("GET", "/api/devices", { key: otherKey });
      assert.deepEqual(
        theirs.body.data.map((d: { name: string }) => d.name),
        ["theirs"],
      );
      const del = await server.call("DELETE", `/api/devices/${first.body.id}`, { key: otherKey });
      assert.equal(del.status, 404);
    });

    test("owner and group must be this account's; one owner at most", async () => {
      const user = await server.call("POST", "/api/users", { key, body: { username: "dev-owner" } });
      const foreignUser = await server.call("POST", "/api/users", {
        key: otherKey,
        body: { username: "stranger" },
      });
      const voucher = await server.call("POST", "/api/vouchers", { key, body: { validity: 3600 } });
      const owned = await create({ mac: "02:00:00:00:01:01", user_id: user.body.id });
      assert.equal(owned.status, 201, owned.text);
      assert.equal(owned.body.user_id, user.body.id);
      const foreign = await create({ mac: "02:00:00:00:01:02", user_id: foreignUser.body.id });
      assert.equal(foreign.status, 400);
      assert.equal(foreign.body.details[0].field, "user_id");
      const both = await create({
        mac: "02:00:00:00:01:03",
        user_id: user.body.id,
        voucher_id: voucher.body.id,
      });
      assert.equal(both.status, 400);
      assert.match(both.body.message, /one owner/);
      const group = await create({ mac: "02:00:00:00:01:04", group_id: 999_999 });
      assert.equal(group.status, 400);
      assert.equal(group.body.details[0].field, "group_id");
      // Giving a voucher as owner replaces the user.
      const moved = await server.call("PUT", `/api/devices/${owned.body.id}`, {
        key,
        body: { voucher_id: voucher.body.id },
      });
      assert.equal(moved.status, 200, moved.text);
      assert.equal(moved.body.user_id, null);
      assert.equal(moved.body.voucher_id, voucher.body.id);
    });

    test("list: paging, filters, search in any MAC notation, sort; bad parameters 400", async () => {
      const page = await server.call("GET", "/api/devices?limit=2&page=2", { key });
      assert.equal(page.status, 200);
      assert.equal(page.body.page, 2);
      assert.equal(page.body.limit, 2);
      assert.equal(page.body.data.length, 2);
      const all = await server.call("GET", "/api/devices?limit=1000", { key });
      assert.equal(all.body.total, all.body.data.length);
      const found = await server.call("GET", "/api/devices?search=AA-BB-CC-00-00-03", { key });
      assert.deepEqual(
        found.body.data.map((d: { mac: string }) => d.mac),
        ["aa:bb:cc:00:00:03"],
      );
      const byName = await server.call("GET", "/api/devices?search=PRINTER&sort=-name", { key });
      assert.deepEqual(
        byName.body.data.map((d: { name: string }) => d.name),
        ["printer 4", "printer 3", "printer 2", "printer 1", "printer 0"],
      );
      const disabled = await server.call("GET", "/api/devices?status=disabled", { key });
      assert.equal(disabled.body.total, 0);
      for (const query of ["sort=colour", "status=gone", "limit=0", "page=x", "kind=stolen"]) {
        const res = await server.call("GET", `/api/devices?${query}`, { key });
        assert.equal(res.status, 400, query);
      }
    });

    test("update is partial (PUT and PATCH); a MAC taken is 409; expiry parsed", async () => {
      const a = await create({ mac: "02:00:00:00:02:01", name: "tv", description: "lobby" });
      await create({ mac: "02:00:00:00:02:02" });
      const res = await server.call("PATCH", `/api/devices/${a.body.id}`, {
        key,
        body: { name: "lobby tv", expires: "2030-01-02" },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.description, "lobby");
      assert.equal(res.body.expires, "2030-01-02T00:00:00Z");
      const clash = await server.call("PUT", `/api/devices/${a.body.id}`, {
        key,
        body: { mac: "02-00-00-00-02-02" },
      });
      assert.equal(clash.status, 409);
      const badExpiry = await server.call("PUT", `/api/devices/${a.body.id}`, {
        key,
        body: { expires: "soon" },
      });
      assert.equal(badExpiry.status, 400);
      const updated = await events("device.updated");
      assert.equal(updated.at(-1).name, "lobby tv");
    });

    test("delete: 204, then 404; device.deleted raised", async () => {
      const a = await create({ mac: "02:00:00:00:03:01" });
      const res = await server.call("DELETE", `/api/devices/${a.body.id}`, { key });
      assert.equal(res.status, 204);
      assert.equal((await server.call("GET", `/api/devices/${a.body.id}`, { key })).status, 404);
      assert.equal((await server.call("DELETE", `/api/devices/${a.body.id}`, { key })).status, 404);
      assert.equal((await events("device.deleted")).at(-1).mac, "02:00:00:00:03:01");
    });

    test("permissions: devices:read reads, devices:write writes, others are refused", async () => {
      const reader = await server.key("default", { permissions: "devices:read" });
      const usersOnly = await server.key("default", { permissions: "users:write" });
      assert.equal((await server.call("GET", "/api/devices", { key: reader })).status, 200);
      const write = await create({ mac: "02:00:00:00:04:01" }, reader);
      assert.equal(write.status, 403);
      assert.match(write.body.message, /devices:write/);
      const read = await server.call("GET", "/api/devices", { key: usersOnly });
      assert.equal(read.status, 403);
      assert.equal((await server.call("GET", "/api/devices")).status, 401);
    });
  });
}

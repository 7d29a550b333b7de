// The endpoints IronWiFi's own clients call beside the specification (issue 31): /api/nodes (the
// access points seen over real RADIUS accounting and authentication), /api/guests (users a portal
// registration created), /api/account, /api/keys and the /api/captive-portals alias; with their
// permissions, paging, sorting, bad input and account isolation.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { accountingSender, loginSender } from "../support/accounting.ts";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "integrator-Secret-7";

for (const { dialect, skip } of await dialects()) {
  describe(`integrator endpoints on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;
    let networkId: number;
    let portalId: number;

    before(async () => {
      const [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
      server = await startTestServer({
        dialect,
        env: {
          RADIUS_HOST: "127.0.0.1",
          RADIUS_AUTH_PORT: String(authPort),
          RADIUS_ACCT_PORT: String(acctPort),
          WORKER: "0",
        },
      });
      const account = await server.account("default");
      key = await server.key(account);
      const { network } = await server.core.networks.create(account.id, {
        name: "Lobby",
        nas_ip: "127.0.0.1",
        secret: SECRET,
      });
      networkId = network.id;
      await server.core.users.create(account.id, { username: "ana", password: "ana password 1" });
      // Two access points: 02-00-00-00-00-01 (SSID lab, two open sessions, one closed) and
      // 02-00-00-00-00-02 (SSID cafe, one accepted and one refused authentication).
      const send = accountingSender(acctPort, SECRET);
      await send({ user: "ana", session: "s-1", mac: "02-00-00-00-04-01" }, "Start");
      await send({ user: "ana", session: "s-2", mac: "02-00-00-00-04-02" }, "Start");
      await send({ user: "ana", session: "s-3", mac: "02-00-00-00-04-03" }, "Stop");
      const login = loginSender(authPort, SECRET);
      const cafe: [string, string] = ["Called-Station-Id", "02-00-00-00-00-02:cafe"];
      assert.equal((await login("ana", "ana password 1", [cafe])).type, "Access-Accept");
      assert.equal((await login("ana", "wrong password", [cafe])).type, "Access-Reject");

      // Another account, its own AP: never seen by the first account's key.
      const other = await server.account("other-tenant");
      otherKey = await server.key(other);
      await server.core.networks.create(other.id, { name: "Elsewhere", nas_ip: "192.0.2.77" });

      // A guest registers on a captive portal over HTTP (the real form).
      const group = await server.core.groups.create(account.id, { name: "registered" });
      portalId = (
        await server.core.portals.create(account.id, {
          name: "Guest portal",
          network_id: networkId,
          vendor: "mikrotik",
          methods: ["registration"],
          guest_group_id: group.id,
        })
      ).id;
      const client = new ConsoleClient(server.url);
      const gw = "link-login-only=http%3A%2F%2F10.5.50.1%2Flogin&mac=AA%3ABB%3ACC%3ADD%3AF1%3A01";
      await client.get(`/portal/${portalId}?${gw}`);
      const registered = await client.post(`/portal/${portalId}`, {
        method: "registration",
        name: "Bea Guest",
        email: "bea@example.org",
        terms: "yes",
        gw,
      });
      assert.ok(registered.status < 400, `registration answered ${registered.status}: ${registered.text}`);
    });
    after(() => server?.stop());

    test("/api/nodes lists each access point with its SSIDs, network, sessions and authentications", async () => {
      const { status, body } = await server.call("GET", "/api/nodes", { key });
      assert.equal(status, 200);
      assert.equal(body.total, 2);
      const [lab, cafe] = body.data;
      assert.equal(lab.id, "02:00:00:00:00:01");
      assert.deepEqual(lab.ssids, [{ ssid: "lab", seen: 3 }]);
      assert.equal(lab.network_id, networkId);
      assert.equal(lab.network_name, "Lobby");
      assert.equal(lab.sessions_now, 2, "the stopped session is not open");
      assert.equal(lab.authentications_24h, 0);
      assert.equal(cafe.mac, "02:00:00:00:00:02");
      assert.deepEqual(cafe.ssids, [{ ssid: "cafe", seen: 2 }]);
      assert.equal(cafe.sessions_now, 0);
      assert.equal(cafe.authentications_24h, 2);
      assert.equal(cafe.failures_24h, 1);
      assert.ok(Date.parse(lab.first_seen) <= Date.parse(lab.last_seen));
      assert.ok(Date.now() - Date.parse(cafe.last_seen) < 600_000, "seen just now");
    });

    test("/api/nodes sorts, filters and pages like every list; bad input is a 400", async () => {
      const bySessions = await server.call("GET", "/api/nodes?sort=-sessions_now", { key });
      assert.deepEqual(
        bySessions.body.data.map((n: { mac: string }) => n.mac),
        ["02:00:00:00:00:01", "02:00:00:00:00:02"],
      );
      const byAuth = await server.call("GET", "/api/nodes?sort=-authentications_24h&limit=1", { key });
      assert.deepEqual(
        [byAuth.body.data[0].mac, byAuth.body.total, byAuth.body.limit],
        ["02:00:00:00:00:02", 2, 1],
      );
      const bySsid = await server.call("GET", "/api/nodes?ssid=cafe", { key });
      assert.deepEqual(
        bySsid.body.data.map((n: { mac: string }) => n.mac),
        ["02:00:00:00:00:02"],
      );
      const search = await server.call("GET", "/api/nodes?search=00:01", { key });
      assert.equal(search.body.total, 1);
      const elsewhere = await server.call("GET", `/api/nodes?network_id=${networkId + 1000}`, { key });
      assert.deepEqual([elsewhere.body.data, elsewhere.body.total], [[], 0]);
      const beyond = await server.call("GET", "/api/nodes?page=9&limit=1", { key });
      assert.deepEqual(
        [beyond.status, beyond.body.data, beyond.body.total, beyond.body.page],
        [200, [], 2, 9],
      );
      const badSort = await server.call("GET", "/api/nodes?sort=ssid", { key });
      assert.equal(badSort.status, 400);
      assert.match(badSort.body.message, /sort/);
      const unknown = await server.call("GET", "/api/nodes?colour=red", { key });
      assert.equal(unknown.status, 400);
      assert.match(unknown.body.message, /colour/);
    });

    test("/api/nodes/{id} takes the MAC in any notation; unknown is 404, not a MAC is 400", async () => {
      const found = await server.call("GET", "/api/nodes/02-00-00-00-00-02", { key });
      assert.equal(found.status, 200);
      assert.equal(found.body.id, "02:00:00:00:00:02");
      assert.equal((await server.call("GET", "/api/nodes/0200.0000.0009", { key })).status, 404);
      const bad = await server.call("GET", "/api/nodes/not-a-mac", { key });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /MAC/);
    });

    test("another account's key sees none of it; a key without the grant gets 403", async () => {
      const nodes = await server.call("GET", "/api/nodes", { key: otherKey });
      assert.deepEqual([nodes.body.data, nodes.body.total], [[], 0]);
      assert.equal((await server.call("GET", "/api/nodes/02:00:00:00:00:01", { key: otherKey })).status, 404);
      const guests = await server.call("GET", "/api/guests", { key: otherKey });
      assert.equal(guests.body.total, 0);
      const keys = await server.call("GET", "/api/keys", { key: otherKey });
      assert.equal(keys.body.total, 1, "only its own key");
      const narrow = await server.key("default", { permissions: "users:read" });
      for (const path of ["/api/nodes", "/api/guests", "/api/account", "/api/keys", "/api/captive-portals"]) {
        const refused = await server.call("GET", path, { key: narrow });
        assert.equal(refused.status, 403, path);
        assert.match(refused.body.message, /lacks the \w+:read permission/);
      }
    });

    test("/api/guests lists the portal's registrations with how and where", async () => {
      const { status, body } = await server.call("GET", "/api/guests", { key });
      assert.equal(status, 200);
      assert.equal(body.total, 1, "ana, created by an operator, is not a guest");
      const [guest] = body.data;
      assert.equal(guest.email, "bea@example.org");
      assert.equal(guest.fullname, "Bea Guest");
      assert.deepEqual([guest.source, guest.method], ["portal", "registration"]);
      assert.deepEqual(guest.portal, { id: portalId, name: "Guest portal", network_id: networkId });
      assert.equal(guest.identity_provider, null);
      assert.equal(guest.client_mac, "aa:bb:cc:dd:f1:01");
      const user = await server.call("GET", `/api/users/${guest.id}`, { key });
      assert.equal(user.body.username, guest.username);
      assert.equal((await server.call("GET", "/api/guests?method=idp", { key })).body.total, 0);
      assert.equal((await server.call("GET", "/api/guests?search=BEA@", { key })).body.total, 1);
      assert.equal((await server.call("GET", "/api/guests?sort=-email&page=2", { key })).body.data.length, 0);
      assert.equal((await server.call("GET", "/api/guests?sort=password", { key })).status, 400);
      assert.equal((await server.call("GET", "/api/guests?portal=1", { key })).status, 400);
    });

    test("/api/account: name, limits and counts; /api/keys: masked, never the key", async () => {
      const account = await server.call("GET", "/api/account", { key });
      assert.equal(account.status, 200);
      assert.equal(account.body.name, "default");
      assert.equal(account.body.limits.max_page_size, 1000);
      assert.ok(account.body.limits.requests_per_minute > 0);
      assert.deepEqual(
        [account.body.counts.users, account.body.counts.guests, account.body.counts.networks],
        [2, 1, 1],
      );
      assert.equal(account.body.counts.sessions_open, 2);
      assert.equal(account.body.counts.captive_portals, 1);
      const keys = await server.call("GET", "/api/keys?limit=1", { key });
      assert.equal(keys.status, 200);
      assert.ok(keys.body.total >= 2);
      assert.equal(keys.body.data.length, 1);
      assert.match(keys.body.data[0].masked, /^\S+…[A-Za-z0-9]{4}$/);
      assert.ok(!keys.text.includes(key), "the key never appears");
      assert.ok(!keys.text.includes(key.slice(0, -4)), "nor its body");
      assert.equal((await server.call("GET", "/api/keys?page=99", { key })).body.data.length, 0);
      assert.equal((await server.call("GET", "/api/keys?sort=id", { key })).status, 400);
    });

    test("/api/captive-portals answers as /api/captiveportals", async () => {
      const plain = await server.call("GET", "/api/captiveportals", { key });
      const hyphen = await server.call("GET", "/api/captive-portals", { key });
      assert.equal(hyphen.status, 200);
      assert.deepEqual(hyphen.body, plain.body);
      const one = await server.call("GET", `/api/captive-portals/${portalId}`, { key });
      assert.deepEqual(one.body, (await server.call("GET", `/api/captiveportals/${portalId}`, { key })).body);
      assert.equal((await server.call("GET", "/api/captive-portals?bogus=1", { key })).status, 400);
    });
  });
}

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { NetworksRepo } from "../../src/core/networks/repo.ts";
import { type Network, NetworksService } from "../../src/core/networks/service.ts";
import type { CaptivePortal } from "../../src/core/portals/service.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../src/core/shared/errors.ts";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { type ApiResponse, startTestServer, type TestServer } from "../support/server.ts";

const PUBLIC_URL = "https://guest.example.org/wisp";

for (const { dialect, skip } of await dialects()) {
  describe(`networks and captive portals API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;
    let accountId: number;
    let otherAccountId: number;
    /** Every secret set in this suite: none may ever appear in an API response. */
    const secrets: string[] = [];
    let lobby: Network;
    let cafe: Network;
    let office: Network;
    let theirs: Network;
    let guest: CaptivePortal;
    let staff: CaptivePortal;
    let cafePortal: CaptivePortal;
    let theirPortal: CaptivePortal;

    async function network(account: number, input: Parameters<TestServer["core"]["networks"]["create"]>[1]) {
      const created = await server.core.networks.create(account, input);
      secrets.push(created.secret);
      return created.network;
    }

    /** A GET whose raw text is checked for every secret. */
    async function get(path: string, as = key): Promise<ApiResponse> {
      const res = await server.call("GET", path, { key: as });
      for (const secret of secrets) assert.ok(!res.text.includes(secret), `${path} leaked a secret`);
      assert.ok(!res.text.includes('"secret"'), `${path} has a secret field`);
      return res;
    }

    const names = (res: ApiResponse) => res.body.data.map((item: { name: string }) => item.name);

    before(async () => {
      server = await startTestServer({ dialect, env: { PUBLIC_URL } });
      key = await server.key("default", { rateLimit: 100_000 });
      otherKey = await server.key("other-tenant", { rateLimit: 100_000 });
      accountId = (await server.account("default")).id;
      otherAccountId = (await server.account("other-tenant")).id;
      lobby = await network(accountId, {
        name: "Lobby APs",
        nas_ip: "192.0.2.0/24",
        secret: "Lobby-Secret-123",
      });
      cafe = await network(accountId, { name: "Café 100% Wi-Fi", nas_ip: "198.51.100.7" });
      office = await network(accountId, {
        name: "Office_Controller",
        nas_ip: "2001:DB8:10::/48",
        nas_identifier: "ctrl-1",
        description: "the controller in the server room",
        require_message_authenticator: true,
        eap_method: "TTLS",
      });
      theirs = await network(otherAccountId, { name: "Lobby elsewhere", nas_ip: "203.0.113.0/24" });
      const portals = server.core.portals;
      guest = await portals.create(accountId, { name: "Guest Wi-Fi", network_id: lobby.id });
      staff = await portals.create(accountId, {
        name: "Staff",
        network_id: lobby.id,
        success_url: "https://intranet.example.com/welcome?from=wifi",
      });
      cafePortal = await portals.create(accountId, { name: "Café guests", network_id: cafe.id });
      theirPortal = await portals.create(otherAccountId, { name: "Guest elsewhere", network_id: theirs.id });
    });
    after(() => server?.stop());

    test("list answers the list shape, in id order, with the documented fields and no secret", async () => {
      const res = await get("/api/networks");
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ["data", "limit", "page", "total"]);
      assert.deepEqual(
        { page: res.body.page, limit: res.body.limit, total: res.body.total },
        { page: 1, limit: 50, total: 3 },
      );
      assert.deepEqual(names(res), ["Lobby APs", "Café 100% Wi-Fi", "Office_Controller"]);
      assert.deepEqual(res.body.data[2], {
        id: office.id,
        name: "Office_Controller",
        nas_ip: "2001:db8:10::/48",
        transport: "udp",
        nas_identifier: "ctrl-1",
        description: "the controller in the server room",
        require_message_authenticator: true,
        coa_enabled: false,
        coa_port: 3799,
        coa_fallback: "none",
        coa_rate: 20,
        interim_interval: 0,
        stale_after: 0,
        eap_method: "ttls",
        mab_mode: "off",
        mab_password: "mac",
        mab_secret_set: false,
        vendor: "generic",
        time_zone: null,
        created: office.created,
        updated: office.updated,
      });
      assert.match(res.body.data[0].created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(res.body.data[1].nas_ip, "198.51.100.7", "a single address is stored without /32");
      assert.equal(res.body.data[1].require_message_authenticator, false);
      assert.equal(res.body.data[1].eap_method, "peap", "PEAP unless set");
    });

    test("get answers the bare network", async () => {
      const res = await get(`/api/networks/${lobby.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, lobby);
      assert.equal(res.body.nas_ip, "192.0.2.0/24");
      assert.equal(res.body.description, "");
    });

    test("network search: case-insensitive substring of the name; pages keep true totals", async () => {
      assert.deepEqual(names(await get("/api/networks?search=LOBBY")), ["Lobby APs"]);
      assert.deepEqual(names(await get("/api/networks?search=caf%C3%A9")), ["Café 100% Wi-Fi"]);
      // LIKE wildcards are literal characters.
      assert.deepEqual(names(await get("/api/networks?search=100%25")), ["Café 100% Wi-Fi"]);
      assert.deepEqual(names(await get("/api/networks?search=_")), ["Office_Controller"]);
      assert.equal((await get("/api/networks?search=nothing-like-it")).body.total, 0);
      const second = await get("/api/networks?limit=2&page=2");
      assert.deepEqual(names(second), ["Office_Controller"]);
      assert.deepEqual(
        { page: second.body.page, limit: second.body.limit, total: second.body.total },
        {
          page: 2,
          limit: 2,
          total: 3,
        },
      );
      const past = await get("/api/networks?limit=2&page=5");
      assert.deepEqual(past.body.data, []);
      assert.equal(past.body.total, 3);
    });

    test("captive portals: list, get, login_url from PUBLIC_URL, network_id and search filters", async () => {
      const list = await get("/api/captiveportals");
      assert.equal(list.status, 200);
      assert.deepEqual(names(list), ["Guest Wi-Fi", "Staff", "Café guests"]);
      assert.equal(list.body.total, 3);
      const one = await get(`/api/captiveportals/${staff.id}`);
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, {
        id: staff.id,
        name: "Staff",
        network_id: lobby.id,
        login_url: `${PUBLIC_URL}/portal/${staff.id}`,
        success_url: "https://intranet.example.com/welcome?from=wifi",
        enabled: true,
        vendor: "generic",
        uam_secret_set: false,
        uam_auth: "chap",
        title: "",
        welcome_text: "",
        terms: "",
        methods: ["voucher"],
        language: "auto",
        color_primary: "#1b5e9e",
        color_background: "#f4f6f8",
        generic_login_param: "login_url",
        generic_username_field: "username",
        generic_password_field: "password",
        generic_redirect_field: "",
        generic_extra_fields: "",
        allowed_gateways: [],
        clickthrough_validity: 86_400,
        clickthrough_session_timeout: 3_600,
        registration_validity: 604_800,
        guest_group_id: null,
        identity_providers: [],
        remember_devices: "never",
        remember_days: 30,
        random_macs: "refuse",
        created: staff.created,
        updated: staff.updated,
      });
      assert.equal((await get(`/api/captiveportals/${guest.id}`)).body.success_url, "");
      assert.deepEqual(names(await get(`/api/captiveportals?network_id=${lobby.id}`)), [
        "Guest Wi-Fi",
        "Staff",
      ]);
      assert.deepEqual(names(await get(`/api/captiveportals?network_id=${cafe.id}&search=GUESTS`)), [
        "Café guests",
      ]);
      assert.equal((await get(`/api/captiveportals?network_id=${office.id}`)).body.total, 0);
      const paged = await get("/api/captiveportals?limit=1&page=3");
      assert.deepEqual(names(paged), ["Café guests"]);
      assert.equal(paged.body.total, 3);
    });

    test("another account's networks and portals answer 404 and appear in no list", async () => {
      for (const path of [
        `/api/networks/${theirs.id}`,
        `/api/captiveportals/${theirPortal.id}`,
        "/api/networks/999999",
        "/api/captiveportals/999999",
      ]) {
        const res = await get(path);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.code, 404);
      }
      assert.deepEqual((await get(`/api/networks/${theirs.id}`)).body, {
        error: true,
        message: `network ${theirs.id} not found`,
        code: 404,
      });
      assert.equal((await get(`/api/captiveportals?network_id=${theirs.id}`)).body.total, 0);
      const mine = await get("/api/networks", otherKey);
      assert.deepEqual(names(mine), ["Lobby elsewhere"]);
      assert.deepEqual(names(await get("/api/captiveportals", otherKey)), ["Guest elsewhere"]);
      assert.equal((await get(`/api/networks/${lobby.id}`, otherKey)).status, 404);
      assert.equal((await get(`/api/captiveportals/${cafePortal.id}`, otherKey)).status, 404);
    });

    test("keys need networks:read and captiveportals:read", async () => {
      const usersOnly = await server.key("default", { permissions: "users:read,vouchers:write" });
      const networksOnly = await server.key("default", { permissions: "networks:read" });
      const portalsWrite = await server.key("default", { permissions: "captiveportals:write" });
      const reader = await server.key("default", { permissions: "read" });
      const cases: [string, string, number][] = [
        [usersOnly, "/api/networks", 403],
        [usersOnly, `/api/networks/${lobby.id}`, 403],
        [usersOnly, "/api/captiveportals", 403],
        [usersOnly, `/api/captiveportals/${guest.id}`, 403],
        [networksOnly, "/api/networks", 200],
        [networksOnly, "/api/captiveportals", 403],
        [portalsWrite, "/api/captiveportals", 200],
        [portalsWrite, "/api/networks", 403],
        [reader, `/api/networks/${lobby.id}`, 200],
        [reader, `/api/captiveportals/${guest.id}`, 200],
      ];
      for (const [as, path, status] of cases) {
        const res = await get(path, as);
        assert.equal(res.status, status, `${path}: ${res.text}`);
      }
      // Change the last character to another one (a key may already end in "x").
      const tampered = networksOnly.replace(/.$/, (c) => (c === "x" ? "y" : "x"));
      const refused = await get("/api/networks", tampered);
      assert.equal(refused.status, 401);
      const denied = await get("/api/captiveportals", networksOnly);
      assert.match(denied.body.message, /captiveportals:read/);
    });

    test("writes answer 405 with Allow: GET and change nothing", async () => {
      const before = (await get("/api/networks")).body.total;
      for (const path of [
        "/api/networks",
        `/api/networks/${lobby.id}`,
        "/api/captiveportals",
        `/api/captiveportals/${guest.id}`,
      ]) {
        for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
          const res = await server.call(method, path, {
            key,
            ...(method === "DELETE" ? {} : { body: { name: "x", nas_ip: "10.1.1.1", network_id: lobby.id } }),
          });
          assert.equal(res.status, 405, `${method} ${path}: ${res.text}`);
          assert.equal(res.headers.get("allow"), "GET");
          assert.deepEqual(Object.keys(res.body).sort(), ["code", "error", "message"]);
        }
      }
      assert.equal((await get("/api/networks")).body.total, before);
      assert.equal((await get(`/api/networks/${lobby.id}`)).status, 200);
      assert.equal((await get(`/api/captiveportals/${guest.id}`)).status, 200);
    });

    test("bad query parameters and ids answer 400", async () => {
      for (const path of [
        "/api/networks?page=0",
        "/api/networks?limit=1001",
        "/api/networks?status=enabled",
        `/api/networks?search=${"s".repeat(101)}`,
        "/api/networks/abc",
        "/api/networks/0",
        "/api/networks/99999999999",
        "/api/captiveportals?network_id=abc",
        "/api/captiveportals?network_id=0",
        "/api/captiveportals?limit=2.5",
        "/api/captiveportals/-1",
      ]) {
        const res = await get(path);
        assert.equal(res.status, 400, `${path}: ${res.text}`);
        assert.equal(res.body.code, 400);
      }
    });

    test("nas_ip is stored in canonical form and unique across all accounts", async () => {
      const networks = server.core.networks;
      const count = async () => (await networks.listAll()).length;
      const before = await count();
      const created: [string, string][] = [
        ["10.20.30.40/32", "10.20.30.40"],
        [" 10.20.31.77/24 ", "10.20.31.0/24"],
        ["2001:0DB8:0:0:0:0:0:0042", "2001:db8::42"],
        ["2001:db8:aaaa::1/64", "2001:db8:aaaa::/64"],
        ["fe80:0:0:0:1:0:0:1/128", "fe80::1:0:0:1"],
      ];
      for (const [given, stored] of created) {
        const made = await network(accountId, { name: `canonical ${given}`, nas_ip: given });
        assert.equal(made.nas_ip, stored, given);
      }
      // The same address in another spelling, from this account or another, is taken.
      for (const [account, nasIp] of [
        [accountId, "192.0.2.99/24"],
        [otherAccountId, "192.0.2.0/24"],
        [otherAccountId, "2001:db8::0042"],
        [accountId, "203.0.113.0/24"],
      ] as const) {
        await assert.rejects(
          networks.create(account, { name: "dup", nas_ip: nasIp }),
          (error: unknown) =>
            error instanceof ConflictError &&
            /^nas_ip \S+ is already used by another network$/.test(error.message),
          `${account} ${nasIp}`,
        );
      }
      // "" is no address: a network reached over RadSec only (test/http/radsec.test.ts).
      for (const bad of [
        " ",
        "10.0.0",
        "10.0.0.256",
        "010.0.0.1",
        "127.1",
        "0x7f000001",
        "10.0.0.1/33",
        "2001:db8::/129",
        "::ffff:10.0.0.1",
        "::ffff:a00:2",
        "fe80::1%eth0",
        "wifi.example.com",
        "10.0.0.1/24/8",
        "10.0.0.1/ 24",
      ]) {
        await assert.rejects(
          networks.create(accountId, { name: "bad", nas_ip: bad }),
          (error: unknown) => error instanceof ValidationError && error.details[0]?.field === "nas_ip",
          JSON.stringify(bad),
        );
      }
      assert.equal(await count(), before + created.length);
      // Moving a network onto a taken address is refused the same way; onto its own address is fine.
      await assert.rejects(networks.update(accountId, cafe.id, { nas_ip: "203.0.113.9/24" }), ConflictError);
      const same = await networks.update(accountId, cafe.id, { nas_ip: "198.51.100.7/32" });
      assert.equal(same.network.nas_ip, "198.51.100.7");
      assert.equal(same.secret, undefined);
    });

    test("secrets: generated ones are long and random, given ones follow FreeRADIUS-safe rules", async () => {
      const networks = server.core.networks;
      const generated = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const { network: made, secret } = await networks.create(accountId, {
          name: "gen",
          nas_ip: `10.77.0.${i}`,
        });
        secrets.push(secret);
        assert.match(secret, /^[A-Za-z2-9]{24,}$/);
        generated.add(secret);
        await networks.delete(accountId, made.id);
      }
      assert.equal(generated.size, 3);
      for (const bad of [
        "short7!",
        "has space1",
        'quote"d12',
        "quote'd12",
        "back`tick1",
        "back\\slash",
        "per%cent12",
        "tab\tsecret",
        "ünïcode-secret",
        "x".repeat(129),
      ]) {
        await assert.rejects(
          networks.create(accountId, { name: "bad", nas_ip: "10.78.0.1", secret: bad }),
          (error: unknown) => error instanceof ValidationError && error.details[0]?.field === "secret",
          JSON.stringify(bad),
        );
      }
      const ok = await networks.create(accountId, {
        name: "ok",
        nas_ip: "10.78.0.1",
        secret: "a!#$&()*+,-./:;<=>?@[]^_{|}~Z",
      });
      secrets.push(ok.secret);
      const row = (await networks.findClientByAddress("10.78.0.1"))!;
      assert.equal(row.secret, "a!#$&()*+,-./:;<=>?@[]^_{|}~Z");
      assert.equal(row.shortname, "ok");
      const rotated = await networks.rotateSecret(accountId, ok.network.id);
      secrets.push(rotated.secret);
      assert.equal((await networks.findClientByAddress("10.78.0.1"))!.secret, rotated.secret);
      await networks.delete(accountId, ok.network.id);
    });

    test("findClientByAddress: exact address, then the most specific CIDR of the account", async () => {
      const networks = server.core.networks;
      // Inside the default account's 192.0.2.0/24: a host and a /25 of this account. Another
      // account's networks cannot be there (see the overlap test).
      const host = await network(accountId, {
        name: "their AP",
        nas_ip: "192.0.2.10",
        secret: "Their-Secret-1",
      });
      const half = await network(accountId, { name: "upper half", nas_ip: "192.0.2.128/25" });
      const v6 = await network(accountId, { name: "v6 lab", nas_ip: "2001:db8:10:1::/64" });
      const find = async (ip: string) => {
        const row = await networks.findClientByAddress(ip);
        return row && { id: row.id, account_id: row.account_id };
      };
      assert.deepEqual(await find("192.0.2.10"), { id: host.id, account_id: accountId });
      assert.equal((await networks.findClientByAddress("192.0.2.10"))?.secret, "Their-Secret-1");
      assert.deepEqual(await find("192.0.2.11"), { id: lobby.id, account_id: accountId });
      assert.equal((await networks.findClientByAddress("192.0.2.11"))?.secret, "Lobby-Secret-123");
      assert.deepEqual(await find("::ffff:192.0.2.12"), { id: lobby.id, account_id: accountId });
      assert.deepEqual(await find("192.0.2.200"), { id: half.id, account_id: accountId });
      assert.deepEqual(await find("192.0.2.128"), { id: half.id, account_id: accountId });
      assert.deepEqual(await find("198.51.100.7"), { id: cafe.id, account_id: accountId });
      assert.deepEqual(await find("203.0.113.250"), { id: theirs.id, account_id: otherAccountId });
      assert.deepEqual(await find("2001:db8:10:1::5"), { id: v6.id, account_id: accountId });
      assert.deepEqual(await find("2001:DB8:10:2:0:0:0:5"), { id: office.id, account_id: accountId });
      assert.deepEqual(await find("2001:db8:10::"), { id: office.id, account_id: accountId });
      for (const unknown of [
        "198.51.100.8",
        "10.255.255.1",
        "2001:db9::1",
        "not-an-ip",
        "",
        "192.0.2.0/24",
      ]) {
        assert.equal(await networks.findClientByAddress(unknown), undefined, unknown);
      }
      // Deleting the host hands its address back to the enclosing network.
      await networks.delete(accountId, host.id);
      assert.deepEqual(await find("192.0.2.10"), { id: lobby.id, account_id: accountId });
      await networks.delete(accountId, half.id);
      await networks.delete(accountId, v6.id);
    });

    test("a network may not overlap another account's networks; the refusal names none of them", async () => {
      // With the width limits off (NETWORK_MIN_PREFIX_*=0, a one-account deployment), so that the
      // widest claims are refused for the overlap alone.
      const { db, dialect: name } = server.core.database;
      const networks = new NetworksService(new NetworksRepo(db, name), { ipv4: 0, ipv6: 0 });
      const count = async () => (await networks.listAll()).length;
      const before = await count();
      const stored = async () =>
        JSON.stringify(await server.core.database.db.selectFrom("nas").selectAll().orderBy("id").execute());
      const rows = await stored();
      // Every way of sharing an address with another account's network: inside it, around it,
      // the whole address space, both families; from either account.
      const refusals: [number, string, string][] = [
        [otherAccountId, "192.0.2.10", "192.0.2.10"],
        [otherAccountId, "192.0.2.128/25", "192.0.2.128/25"],
        [otherAccountId, "192.0.2.255", "192.0.2.255"],
        [otherAccountId, "192.0.0.0/16", "192.0.0.0/16"],
        [otherAccountId, "192.0.2.77/23", "192.0.2.0/23"],
        [otherAccountId, "0.0.0.0/0", "0.0.0.0/0"],
        [otherAccountId, "198.51.100.6/31", "198.51.100.6/31"],
        [otherAccountId, "198.51.100.0/24", "198.51.100.0/24"],
        [otherAccountId, "2001:db8:10:5::/64", "2001:db8:10:5::/64"],
        [otherAccountId, "2001:DB8:10:FFFF:FFFF:FFFF:FFFF:FFFF", "2001:db8:10:ffff:ffff:ffff:ffff:ffff"],
        [otherAccountId, "2001:db8::/32", "2001:db8::/32"],
        [otherAccountId, "::/0", "::/0"],
        [accountId, "203.0.113.77", "203.0.113.77"],
        [accountId, "203.0.113.0/25", "203.0.113.0/25"],
        [accountId, "203.0.112.0/22", "203.0.112.0/22"],
      ];
      for (const [account, given, canonical] of refusals) {
        await assert.rejects(
          networks.create(account, { name: "overlap", nas_ip: given, secret: "Overlap-Secret-1" }),
          (error: unknown) => {
            assert.ok(error instanceof ConflictError, `${given}: ${error}`);
            assert.equal(error.message, `nas_ip ${canonical} overlaps another account's network`);
            return true;
          },
          given,
        );
      }
      // Moving a network onto another account's addresses is refused the same way.
      for (const [account, id, nasIp] of [
        [otherAccountId, theirs.id, "192.0.2.0/23"],
        [otherAccountId, theirs.id, "192.0.2.0/24"],
        [accountId, cafe.id, "203.0.113.128/25"],
        [accountId, office.id, "203.0.113.1"],
      ] as const) {
        await assert.rejects(
          networks.update(account, id, { nas_ip: nasIp, name: "moved" }),
          ConflictError,
          nasIp,
        );
      }
      assert.equal(await count(), before, "nothing was created");
      assert.equal(await stored(), rows, "nothing was changed");

      // Next to another account's addresses is fine, and so is any overlap within one account.
      const fine: [number, string][] = [
        [otherAccountId, "192.0.3.0/24"],
        [otherAccountId, "192.0.1.255"],
        [otherAccountId, "198.51.100.0/30"],
        [otherAccountId, "198.51.100.8"],
        [otherAccountId, "2001:db8:11::/48"],
        // IPv6 networks never hold IPv4 sources (those are matched as IPv4), not even ::/64.
        [otherAccountId, "::/64"],
        [accountId, "192.0.2.64/26"],
        [accountId, "192.0.2.0/25"],
        [accountId, "2001:db8:10:5::/64"],
      ];
      const made: [number, number][] = [];
      for (const [account, nasIp] of fine) {
        made.push([account, (await network(account, { name: "fine", nas_ip: nasIp })).id]);
      }
      // Updating everything but the address of a network is no move.
      const renamed = await networks.update(otherAccountId, theirs.id, { name: "Lobby elsewhere" });
      assert.equal(renamed.network.nas_ip, "203.0.113.0/24");
      for (const [account, id] of made) await networks.delete(account, id);
    });

    test("the console refuses an overlapping network with a message that names no other network", async () => {
      const other = await server.account("other-tenant");
      await server.core.admins.create(other, {
        email: "overlap@example.com",
        password: "a long enough password",
      });
      const client = new ConsoleClient(server.url);
      assert.equal((await client.login("overlap@example.com", "a long enough password")).status, 303);
      await client.get("/console/networks/new");
      const fields = (nasIp: string) => ({
        name: "Squatter",
        nas_ip: nasIp,
        secret: "",
        nas_identifier: "",
        description: "",
      });
      for (const [nasIp, canonical] of [
        ["192.0.2.10", "192.0.2.10"],
        ["192.0.0.0/16", "192.0.0.0/16"],
        ["2001:db8:10::1", "2001:db8:10::1"],
      ] as const) {
        const res = await client.post("/console/networks", fields(nasIp));
        assert.equal(res.status, 400, nasIp);
        assert.ok(res.text.includes(`nas_ip ${canonical} overlaps another account&#39;s network`), res.text);
        // (The form's placeholder is an example that happens to be the lobby's address.)
        const page = res.text.replace(/ placeholder="[^"]*"/g, "");
        for (const leak of ["Lobby APs", "192.0.2.0/24", "Office_Controller", "2001:db8:10::/48", "Café"]) {
          assert.ok(!page.includes(leak), `${nasIp}: the page names ${leak}`);
        }
        assert.ok(
          !new RegExp(`networks/(${lobby.id}|${office.id})\\b`).test(page),
          "no link to their network",
        );
      }
      const edit = await client.get(`/console/networks/${theirs.id}/edit`);
      assert.equal(edit.status, 200);
      const moved = await client.post(`/console/networks/${theirs.id}`, fields("192.0.2.0/25"));
      assert.equal(moved.status, 400);
      assert.ok(!moved.text.includes("Lobby APs"));
      assert.equal((await server.core.networks.get(otherAccountId, theirs.id)).nas_ip, "203.0.113.0/24");
    });

    /** A console session of a new admin of the account. */
    async function consoleOf(account: string, email: string): Promise<ConsoleClient> {
      const row = await server.account(account);
      await server.core.admins.create(row, { email, password: "a long enough password" });
      const client = new ConsoleClient(server.url);
      assert.equal((await client.login(email, "a long enough password")).status, 303);
      return client;
    }
    const formOf = (nasIp: string, name = "Wide") => ({
      name,
      nas_ip: nasIp,
      secret: "",
      nas_identifier: "",
      description: "",
    });
    /** The refusal of a range wider than the limits, as the service words it (escaped for a page). */
    const tooWide = (canonical: string, min = canonical.includes(":") ? 48 : 16) =>
      `nas_ip ${canonical} is wider than this server allows: ${canonical.includes(":") ? "IPv6" : "IPv4"} ` +
      `networks may be /${min} at the widest (give the range of the site's access points or controller)`;
    /** The same at the console form's address field, escaped as the page has it. */
    const atField = (message: string) => `Address ${message.slice("nas_ip ".length)}`.replace(/'/g, "&#39;");

    test("ranges wider than /16 (IPv4) or /48 (IPv6) are refused by the service and the console, writing nothing", async () => {
      const networks = server.core.networks;
      const stored = async () =>
        JSON.stringify(await server.core.database.db.selectFrom("nas").selectAll().orderBy("id").execute());
      const rows = await stored();
      const wide: [string, string][] = [
        ["0.0.0.0/0", "0.0.0.0/0"],
        ["10.1.2.3/8", "10.0.0.0/8"],
        ["172.17.0.0/15", "172.16.0.0/15"],
        ["::/0", "::/0"],
        ["2001:DB8::/32", "2001:db8::/32"],
        ["2001:db8:21::/47", "2001:db8:20::/47"],
      ];
      const refused = (message: string) => (error: unknown) => {
        assert.ok(error instanceof ValidationError, String(error));
        assert.equal(error.message, message);
        assert.deepEqual(error.details, [{ field: "nas_ip", message: message.slice("nas_ip ".length) }]);
        return true;
      };
      for (const [given, canonical] of wide) {
        for (const account of [accountId, otherAccountId]) {
          await assert.rejects(
            networks.create(account, { name: "Wide", nas_ip: given }),
            refused(tooWide(canonical)),
          );
        }
        // The CLI's check before it writes anything (even the default account).
        assert.throws(
          () => networks.validateNew({ name: "Wide", nas_ip: given }),
          refused(tooWide(canonical)),
        );
        // Moving a network to such a range is refused the same way.
        await assert.rejects(
          networks.update(otherAccountId, theirs.id, { nas_ip: given, name: "moved" }),
          refused(tooWide(canonical)),
        );
      }
      // The console: the form comes back with the message at the address field.
      const client = await consoleOf("default", "wide@example.com");
      await client.get("/console/networks/new");
      for (const [given, canonical] of wide) {
        const res = await client.post("/console/networks", formOf(given));
        assert.equal(res.status, 400, given);
        assert.ok(res.text.includes(atField(tooWide(canonical))), res.text);
      }
      await client.get(`/console/networks/${lobby.id}/edit`);
      const moved = await client.post(`/console/networks/${lobby.id}`, formOf("192.0.0.0/8", "Lobby APs"));
      assert.equal(moved.status, 400);
      assert.ok(moved.text.includes(atField(tooWide("192.0.0.0/8"))));
      assert.equal(await stored(), rows, "nothing was written");

      // At the limits and narrower: accepted by both.
      const made: number[] = [];
      for (const nasIp of ["172.20.0.0/16", "172.21.5.0/24", "2001:db8:77::/48"]) {
        made.push((await network(otherAccountId, { name: "Narrow enough", nas_ip: nasIp })).id);
      }
      await client.get("/console/networks/new");
      for (const nasIp of ["172.22.0.0/16", "172.23.1.0/24", "2001:db8:78::/48"]) {
        assert.equal(
          (await client.post("/console/networks", formOf(nasIp, "Narrow enough"))).status,
          303,
          nasIp,
        );
      }
      const listed = (await networks.listAll()).filter((n) => n.name === "Narrow enough");
      assert.equal(listed.length, 6);
      assert.ok(listed.every((n) => !n.too_wide));
      for (const n of listed) await networks.delete(n.account_id, n.id);
    });

    test("a network made wider before the limits keeps working, is flagged, and moving it must narrow it", async () => {
      // Made as an older Wisp (or NETWORK_MIN_PREFIX_*=0) would have made it.
      const { db, dialect: name } = server.core.database;
      const before = new NetworksService(new NetworksRepo(db, name), { ipv4: 0, ipv6: 0 });
      const legacy = (await before.create(accountId, { name: "Campus", nas_ip: "100.64.0.0/10" })).network;
      const legacy6 = (await before.create(accountId, { name: "Campus v6", nas_ip: "2001:db8:8000::/33" }))
        .network;
      const networks = server.core.networks;
      assert.equal(
        (await networks.findClientByAddress("100.100.1.2"))?.id,
        legacy.id,
        "RADIUS still finds it",
      );
      assert.equal((await networks.findClientByAddress("2001:db8:9000::5"))?.id, legacy6.id);
      assert.deepEqual(
        (await networks.tooWide()).map((n) => [n.id, n.nas_ip, n.account, n.too_wide]),
        [
          [legacy.id, "100.64.0.0/10", "default", true],
          [legacy6.id, "2001:db8:8000::/33", "default", true],
        ],
      );
      const flags = new Map((await networks.listAll()).map((n) => [n.id, n.too_wide]));
      assert.deepEqual(
        [flags.get(legacy.id), flags.get(legacy6.id), flags.get(lobby.id)],
        [true, true, false],
      );
      assert.equal((await networks.locate(legacy.id)).too_wide, true);

      // Editing anything but the address works, also when the unchanged address is given again.
      await networks.update(accountId, legacy.id, { name: "Campus North" });
      await networks.update(accountId, legacy.id, { nas_ip: "100.64.1.1/10", description: "since 2019" });
      const client = await consoleOf("default", "campus@example.com");
      const page = await client.get(`/console/networks/${legacy.id}`);
      assert.ok(
        page.text.includes(tooWide("100.64.0.0/10").slice("nas_ip ".length).replace(/'/g, "&#39;")),
        page.text,
      );
      assert.ok(page.text.includes("a change of its address must narrow it"));
      assert.ok(!(await client.get(`/console/networks/${lobby.id}`)).text.includes("wider than this server"));
      await client.get(`/console/networks/${legacy.id}/edit`);
      const saved = await client.post(`/console/networks/${legacy.id}`, formOf("100.64.0.0/10", "Campus"));
      assert.equal(saved.status, 303, saved.text);
      assert.equal((await networks.get(accountId, legacy.id)).name, "Campus");

      // Moving it: only to a range within the limits.
      await assert.rejects(
        networks.update(accountId, legacy.id, { nas_ip: "100.64.0.0/11" }),
        ValidationError,
      );
      await assert.rejects(
        networks.update(accountId, legacy6.id, { nas_ip: "2001:db8:8000::/47" }),
        ValidationError,
      );
      // Until it is narrowed, no other account can add a network inside it; then they can.
      await assert.rejects(
        networks.create(otherAccountId, { name: "Next door", nas_ip: "100.100.0.0/24" }),
        ConflictError,
      );
      await networks.update(accountId, legacy.id, { nas_ip: "100.64.0.0/16" });
      await networks.update(accountId, legacy6.id, { nas_ip: "2001:db8:8000::/48" });
      assert.deepEqual(await networks.tooWide(), []);
      const next = await network(otherAccountId, { name: "Next door", nas_ip: "100.100.0.0/24" });
      for (const [account, id] of [
        [otherAccountId, next.id],
        [accountId, legacy.id],
        [accountId, legacy6.id],
      ] as const) {
        await networks.delete(account, id);
      }
    });

    test("two accounts creating overlapping networks at the same moment: exactly one succeeds", async () => {
      // Real concurrent requests through the console, one admin per account; on PostgreSQL each
      // runs on its own connection.
      const clients: ConsoleClient[] = [];
      for (const [name, email] of [
        ["default", "race-a@example.com"],
        ["other-tenant", "race-b@example.com"],
      ] as const) {
        await server.core.admins.create(await server.account(name), {
          email,
          password: "a long enough password",
        });
        const client = new ConsoleClient(server.url);
        assert.equal((await client.login(email, "a long enough password")).status, 303);
        await client.get("/console/networks/new");
        clients.push(client);
      }
      const [a, b] = clients as [ConsoleClient, ConsoleClient];
      const ROUNDS = 12;
      const post = (client: ConsoleClient, nasIp: string) =>
        client.post("/console/networks", {
          name: `race ${nasIp}`,
          nas_ip: nasIp,
          secret: "",
          nas_identifier: "",
          description: "",
        });
      const results = await Promise.all(
        Array.from({ length: ROUNDS }, (_, round) =>
          Promise.all([
            post(a, `10.90.${round}.0/24`),
            post(b, round % 2 === 0 ? `10.90.${round}.${round + 1}` : `10.90.${round}.0/25`),
          ]),
        ),
      );
      for (const [round, pair] of results.entries()) {
        const statuses = pair.map((res) => res.status).sort();
        assert.deepEqual(statuses, [303, 400], `round ${round}`);
      }
      const rows = await server.core.database.db
        .selectFrom("nas")
        .select(["account_id", "nasname"])
        .where("nasname", "like", "10.90.%")
        .execute();
      assert.equal(rows.length, ROUNDS);
      const accounts = new Set(rows.map((row) => row.account_id));
      assert.ok(accounts.size >= 1);
      for (const row of rows) {
        const network = await server.core.networks.findClientByAddress(row.nasname.split("/")[0]!);
        assert.equal(network?.account_id, row.account_id);
      }
    });

    test("captive portals hang off a network of their own account, with an http(s) success_url", async () => {
      const portals = server.core.portals;
      const before = await portals.listAll();
      const refusals: [Parameters<typeof portals.create>[1], string][] = [
        [{ name: "x", network_id: theirs.id }, "network_id"],
        [{ name: "x", network_id: 999_999 }, "network_id"],
        [{ name: "x" }, "network_id"],
        [{ network_id: lobby.id }, "name"],
        [{ name: "   ", network_id: lobby.id }, "name"],
        [{ name: "a\u0000b", network_id: lobby.id }, "name"],
        [{ name: "x".repeat(101), network_id: lobby.id }, "name"],
      ];
      for (const bad of [
        "ftp://example.com",
        "javascript:alert(1)",
        "http:example.com",
        "/welcome",
        "https://user:pw@example.com",
        "https://example.com/a b",
        `https://example.com/${"x".repeat(2000)}`,
      ]) {
        refusals.push([{ name: "x", network_id: lobby.id, success_url: bad }, "success_url"]);
      }
      for (const [input, field] of refusals) {
        await assert.rejects(
          portals.create(accountId, input),
          (error: unknown) => error instanceof ValidationError && error.details[0]?.field === field,
          JSON.stringify(input),
        );
      }
      await assert.rejects(
        portals.update(accountId, guest.id, { network_id: theirs.id }),
        (error: unknown) =>
          error instanceof ValidationError && /not a network of this account/.test(error.message),
      );
      await assert.rejects(portals.update(otherAccountId, guest.id, { name: "mine now" }), NotFoundError);
      await assert.rejects(portals.delete(otherAccountId, guest.id), NotFoundError);
      assert.deepEqual(await portals.listAll(), before);

      const made = await portals.create(accountId, {
        name: "  Terrace  ",
        network_id: office.id,
        success_url: "http://example.com/",
      });
      assert.equal(made.name, "Terrace");
      assert.equal(made.login_url, `${PUBLIC_URL}/portal/${made.id}`);
      const moved = await portals.update(accountId, made.id, { network_id: cafe.id, success_url: "" });
      assert.deepEqual([moved.network_id, moved.success_url, moved.name], [cafe.id, "", "Terrace"]);
      assert.equal((await portals.delete(accountId, made.id)).id, made.id);
      assert.equal((await get(`/api/captiveportals/${made.id}`)).status, 404);
    });

    test("PUBLIC_URL: http(s), no trailing slash; defaults to the port, on HOST when that is one address", () => {
      assert.equal(loadConfig({ PORT: "9000" }).publicUrl, "http://localhost:9000");
      assert.equal(loadConfig({}).publicUrl, "http://localhost:8080");
      for (const [host, url] of [
        ["127.0.0.2", "http://127.0.0.2:18081"],
        ["192.168.1.10", "http://192.168.1.10:18081"],
        ["::1", "http://[::1]:18081"],
        ["2001:db8::5", "http://[2001:db8::5]:18081"],
        // Every address, a zoned link-local one, or a name (it would become the EAP server name).
        ["0.0.0.0", "http://localhost:18081"],
        ["::", "http://localhost:18081"],
        ["fe80::1%eth0", "http://localhost:18081"],
        ["wisp-box", "http://localhost:18081"],
      ]) {
        assert.equal(loadConfig({ HOST: host, PORT: "18081" }).publicUrl, url, host);
      }
      assert.equal(
        loadConfig({ HOST: "10.0.0.1", PUBLIC_URL: "https://wifi.example.com" }).publicUrl,
        "https://wifi.example.com",
      );
      assert.equal(
        loadConfig({ PUBLIC_URL: "https://wifi.example.com/wisp" }).publicUrl,
        "https://wifi.example.com/wisp",
      );
      for (const bad of [
        "https://wifi.example.com/",
        "ftp://wifi.example.com",
        "wifi.example.com",
        "https://wifi.example.com?x=1",
        "https://wifi.example.com#top",
        "https://u:p@wifi.example.com",
      ]) {
        assert.throws(() => loadConfig({ PUBLIC_URL: bad }), ConfigError, bad);
      }
    });
  });
}

describe("NETWORK_MIN_PREFIX_IPV4 and NETWORK_MIN_PREFIX_IPV6", () => {
  test("are whole prefix lengths, /16 and /48 unless set", () => {
    assert.deepEqual(loadConfig({}).networkMinPrefix, { ipv4: 16, ipv6: 48 });
    const set = { NETWORK_MIN_PREFIX_IPV4: "24", NETWORK_MIN_PREFIX_IPV6: "0" };
    assert.deepEqual(loadConfig(set).networkMinPrefix, { ipv4: 24, ipv6: 0 });
    for (const [name, bad] of [
      ["NETWORK_MIN_PREFIX_IPV4", "33"],
      ["NETWORK_MIN_PREFIX_IPV4", "-1"],
      ["NETWORK_MIN_PREFIX_IPV4", "/16"],
      ["NETWORK_MIN_PREFIX_IPV6", "129"],
      ["NETWORK_MIN_PREFIX_IPV6", "48.5"],
    ] as const) {
      assert.throws(() => loadConfig({ [name]: bad }), ConfigError, `${name}=${bad}`);
    }
  });

  for (const [env, refused, accepted] of [
    [
      { NETWORK_MIN_PREFIX_IPV4: "24", NETWORK_MIN_PREFIX_IPV6: "64" },
      ["10.0.0.0/16", "10.1.0.0/23", "2001:db8::/48", "2001:db8:1::/63"],
      ["10.2.0.0/24", "10.3.0.0/30", "2001:db8:2::/64", "10.4.0.1"],
    ],
    [
      { NETWORK_MIN_PREFIX_IPV4: "8", NETWORK_MIN_PREFIX_IPV6: "32" },
      ["0.0.0.0/0", "10.0.0.0/7", "::/0", "2001:db8::/31"],
      ["10.0.0.0/8", "2001:db8::/32"],
    ],
    // Off, for a deployment of one account: any range, the whole address space included.
    [{ NETWORK_MIN_PREFIX_IPV4: "0", NETWORK_MIN_PREFIX_IPV6: "0" }, [], ["0.0.0.0/0", "::/0"]],
  ] as const) {
    test(`the server enforces ${JSON.stringify(env)} in the service and the console`, async () => {
      const server = await startTestServer({ env });
      try {
        const account = await server.account("default");
        const min = (nasIp: string) =>
          nasIp.includes(":") ? env.NETWORK_MIN_PREFIX_IPV6 : env.NETWORK_MIN_PREFIX_IPV4;
        for (const nasIp of refused) {
          await assert.rejects(
            server.core.networks.create(account.id, { name: "Wide", nas_ip: nasIp }),
            (error: unknown) =>
              error instanceof ValidationError &&
              error.message.startsWith(`nas_ip ${nasIp} is wider than this server allows:`) &&
              error.message.includes(` networks may be /${min(nasIp)} at the widest `),
            nasIp,
          );
        }
        for (const nasIp of accepted) {
          const { network } = await server.core.networks.create(account.id, { name: "Ok", nas_ip: nasIp });
          assert.equal(network.nas_ip, nasIp);
        }
        // The console follows the same setting.
        await server.core.admins.create(account, {
          email: "limits@example.com",
          password: "a long enough password",
        });
        const client = new ConsoleClient(server.url);
        assert.equal((await client.login("limits@example.com", "a long enough password")).status, 303);
        await client.get("/console/networks/new");
        const form = (nasIp: string) => ({
          name: "Form",
          nas_ip: nasIp,
          secret: "",
          nas_identifier: "",
          description: "",
        });
        if (refused[0]) {
          const res = await client.post("/console/networks", form(refused[0]));
          assert.equal(res.status, 400);
          assert.ok(res.text.includes(`networks may be /${min(refused[0])} at the widest`), res.text);
        }
        assert.equal((await client.post("/console/networks", form("198.51.100.0/24"))).status, 303);
      } finally {
        await server.stop();
      }
    });
  }
});

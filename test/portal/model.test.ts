// The portal page model: every field validated with the API's error shape, the UAM secret sealed at
// rest and write-only (the API and the CLI never show it), the read-only API returning the fields,
// and the CLI's create/update options. On each dialect (PostgreSQL when it answers).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { normalizeMac } from "../../src/core/aaa/stations.ts";
import { ValidationError } from "../../src/core/shared/errors.ts";
import { dialects } from "../support/databases.ts";
import { databaseEnv, wisp } from "../support/processes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

for (const { dialect, skip } of await dialects()) {
  describe(`captive portal page model on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let accountId: number;
    let networkId: number;
    let key: string;

    before(async () => {
      server = await startTestServer({ dialect });
      accountId = (await server.account("default")).id;
      networkId = (await server.core.networks.create(accountId, { name: "lobby", nas_ip: "192.0.2.1" }))
        .network.id;
      key = await server.key("default", { permissions: "read" });
    });
    after(() => server?.stop());

    async function refused(input: Record<string, unknown>, field: string, message: RegExp) {
      const error = await server.core.portals
        .create(accountId, { name: "P", network_id: networkId, ...input })
        .then(
          () => null,
          (e: unknown) => e,
        );
      assert.ok(error instanceof ValidationError, `${JSON.stringify(input)} was accepted`);
      const detail = error.details.find((d) => d.field === field);
      assert.ok(detail, `${JSON.stringify(error.details)} names ${field}`);
      assert.match(detail.message, message);
    }

    test("each field is checked and named in the error details", async () => {
      await refused({ vendor: "cisco" }, "vendor", /coovachilli, mikrotik, generic/);
      await refused({ vendor: "coovachilli" }, "uam_secret", /required when vendor is coovachilli/);
      await refused({ vendor: "coovachilli", uam_secret: "has space" }, "uam_secret", /printable/);
      await refused({ uam_secret: "x".repeat(65) }, "uam_secret", /1-64/);
      await refused({ title: "a\u0007b" }, "title", /control characters/);
      await refused({ title: "two\nlines" }, "title", /one line/);
      await refused({ welcome_text: "x".repeat(2001) }, "welcome_text", /at most 2000/);
      await refused({ terms: "ok\u0000" }, "terms", /control characters/);
      await refused({ methods: [] }, "methods", /at least one of voucher, password/);
      await refused({ methods: ["voucher", "sms"] }, "methods", /not "sms"/);
      await refused({ clickthrough_validity: 0 }, "clickthrough_validity", /60 to 31536000/);
      await refused({ clickthrough_session_timeout: 1.5 }, "clickthrough_session_timeout", /whole number/);
      await refused({ registration_validity: 31_536_001 }, "registration_validity", /60 to 31536000/);
      await refused({ guest_group_id: -1 }, "guest_group_id", /group id/);
      await refused(
        { methods: ["registration"] },
        "guest_group_id",
        /required when methods include registration/,
      );
      await refused({ guest_group_id: 999999 }, "guest_group_id", /not a group of this account/);
      await refused({ language: "de" }, "language", /auto, en, es, fr/);
      await refused({ color_primary: "blue" }, "color_primary", /hex colour/);
      await refused({ color_background: "#fff" }, "color_background", /hex colour/);
      await refused({ generic_login_param: "a b" }, "generic_login_param", /A-Z a-z 0-9/);
      await refused({ generic_username_field: "" }, "generic_username_field", /1-64/);
      await refused({ generic_redirect_field: 'x"y' }, "generic_redirect_field", /or empty/);
      await refused({ success_url: "javascript:alert(1)" }, "success_url", /http/);
    });

    test("the UAM secret is sealed at rest, write-only in the API, open only for the guest page", async () => {
      const portal = await server.core.portals.create(accountId, {
        name: "Cafe",
        network_id: networkId,
        vendor: "coovachilli",
        uam_secret: "uam-Secret-1",
        title: "  Café Wi-Fi ",
        terms: "First.\r\n\r\nSecond https://example.com/terms",
        methods: ["password", "voucher", "voucher"],
        language: "FR",
        color_primary: "#FFCC00",
      });
      const row = await server.core.database.db
        .selectFrom("captive_portals")
        .selectAll()
        .where("id", "=", portal.id)
        .executeTakeFirstOrThrow();
      assert.doesNotMatch(row.uam_secret, /uam-Secret-1/);
      assert.match(row.uam_secret, /^v1\./);
      const api = await server.call("GET", `/api/captiveportals/${portal.id}`, { key });
      assert.equal(api.status, 200);
      assert.doesNotMatch(api.text, /uam-Secret-1|v1\./);
      assert.equal(api.body.uam_secret_set, true);
      assert.equal(api.body.title, "Café Wi-Fi");
      assert.equal(api.body.terms, "First.\n\nSecond https://example.com/terms");
      assert.deepEqual(api.body.methods, ["voucher", "password"]);
      assert.equal(api.body.language, "fr");
      assert.equal(api.body.color_primary, "#ffcc00");
      assert.equal(api.body.vendor, "coovachilli");
      const guest = await server.core.portals.forGuests(portal.id);
      assert.equal(guest?.uamSecret, "uam-Secret-1");

      // Removing the secret of a CoovaChilli portal is refused; switching vendor first is fine.
      await assert.rejects(
        server.core.portals.update(accountId, portal.id, { uam_secret: "" }),
        /uam_secret/,
      );
      const off = await server.core.portals.update(accountId, portal.id, {
        vendor: "mikrotik",
        uam_secret: "",
        enabled: false,
      });
      assert.equal(off.uam_secret_set, false);
      assert.equal(off.enabled, false);
      assert.equal(
        await server.core.portals.forGuests(portal.id),
        undefined,
        "a disabled portal has no page",
      );
      assert.equal(await server.core.portals.forGuests(999999), undefined);
    });

    test("click-through and registration settings: defaults, the API shape, a group of the same account", async () => {
      const group = await server.core.groups.create(accountId, { name: "portal-guests" });
      const other = await server.account("other-guests");
      const foreign = await server.core.groups.create(other.id, { name: "theirs" });
      const portal = await server.core.portals.create(accountId, {
        name: "Guests",
        network_id: networkId,
        methods: ["clickthrough", "registration", "voucher"],
        guest_group_id: group.id,
      });
      assert.deepEqual(portal.methods, ["voucher", "clickthrough", "registration"]);
      assert.equal(portal.clickthrough_validity, 86_400);
      assert.equal(portal.clickthrough_session_timeout, 3_600);
      assert.equal(portal.registration_validity, 604_800);
      const api = await server.call("GET", `/api/captiveportals/${portal.id}`, { key });
      assert.equal(api.status, 200);
      assert.equal(api.body.guest_group_id, group.id);
      assert.equal(api.body.clickthrough_session_timeout, 3_600);
      await assert.rejects(
        server.core.portals.update(accountId, portal.id, { guest_group_id: foreign.id }),
        /guest_group_id/,
      );
      await assert.rejects(
        server.core.portals.update(accountId, portal.id, { guest_group_id: null }),
        /required when methods include registration/,
      );
      const changed = await server.core.portals.update(accountId, portal.id, {
        methods: ["clickthrough"],
        guest_group_id: null,
        clickthrough_validity: 7_200,
      });
      assert.equal(changed.guest_group_id, null);
      assert.equal(changed.clickthrough_validity, 7_200);
    });

    test("a portal sign-in's RADIUS accept is recorded with the portal and method, once; an EAP login takes none", async () => {
      const portal = await server.core.portals.create(accountId, {
        name: "Linked",
        network_id: networkId,
        methods: ["password"],
      });
      const guest = await server.core.portals.forGuests(portal.id);
      assert.ok(guest);
      await server.core.users.create(accountId, { username: "linked.user", password: "Pw-12345" });
      const mac = "AA-BB-CC-00-00-01";
      await server.core.portals.expectLogin(guest, "password", "linked.user", normalizeMac(mac));
      const request = [
        { attribute: "User-Name", op: "=", value: "linked.user" },
        { attribute: "Calling-Station-Id", op: "=", value: mac },
      ];
      const client = { id: networkId, account_id: accountId };
      // An 802.1X (EAP) login of the same user never follows a portal sign-in: it takes nothing.
      const eap = await server.core.aaa.decide(client, request, { password: Buffer.from("Pw-12345") });
      assert.equal(eap.result.accepted, true);
      await server.core.aaa.record({ ...eap, attempt: { ...eap.attempt, method: "PEAP" } });
      for (let i = 0; i < 2; i++) {
        const result = await server.core.aaa.authenticate(client, request, {
          password: Buffer.from("Pw-12345"),
        });
        assert.equal(result.accepted, true);
      }
      const db = server.core.database.db;
      const rows = await db
        .selectFrom("radpostauth")
        .select("portal_id")
        .where("username", "=", "linked.user")
        .orderBy("id")
        .execute();
      assert.deepEqual(
        rows.map((r) => r.portal_id),
        [null, portal.id, null],
        "the first gateway accept only",
      );
      const events = (
        await db
          .selectFrom("events")
          .select("data")
          .where("kind", "=", "user.authenticated")
          .orderBy("id")
          .execute()
      )
        .map((e) => (typeof e.data === "string" ? JSON.parse(e.data) : e.data) as Record<string, unknown>)
        .filter((d) => d.username === "linked.user");
      assert.equal(events[0]?.portal_id, undefined);
      assert.equal(events[0]?.method, "PEAP");
      assert.equal(events[1]?.portal_id, portal.id);
      assert.equal(events[1]?.method, "password");
      assert.equal(events[2]?.portal_id, undefined);
      const pending = await db
        .selectFrom("portal_logins")
        .selectAll()
        .where("portal_id", "=", portal.id)
        .execute();
      assert.deepEqual(pending, [], "consumed");
    });

    test("the gateway allow-list: each entry checked, stored canonical, whole or not at all, applied to the page", async () => {
      const field = "allowed_gateways";
      await refused(
        { allowed_gateways: ["10.0.0.0/33"] },
        field,
        /"10\.0\.0\.0\/33" has an invalid prefix length/,
      );
      await refused({ allowed_gateways: ["hotspot.lan", "evil example"] }, field, /"evil example" is not an/);
      await refused({ allowed_gateways: ["http://hotspot.lan/"] }, field, /is a URL; give its host alone/);
      await refused({ allowed_gateways: ["fe80::1%eth0"] }, field, /zone/);
      await refused({ allowed_gateways: ["10.1.2"] }, field, /not an IPv4 or IPv6 address/);
      await refused({ allowed_gateways: ["under_score.lan"] }, field, /host name/);
      await refused({ allowed_gateways: ["::ffff:10.0.0.1"] }, field, /IPv4-mapped/);
      const many = Array.from({ length: 33 }, (_, i) => `10.0.${i}.0/24`);
      await refused({ allowed_gateways: many }, field, /at most 32/);

      const portal = await server.core.portals.create(accountId, {
        name: "By name",
        network_id: networkId,
        vendor: "mikrotik",
        allowed_gateways: [" Hotspot.LAN ", "10.5.50.7/24", "FD00::1", "10.5.50.0/24", ""],
      });
      const stored = ["hotspot.lan", "10.5.50.0/24", "fd00::1/128"];
      assert.deepEqual(portal.allowed_gateways, stored);
      const row = await server.core.database.db
        .selectFrom("captive_portals")
        .select("allowed_gateways")
        .where("id", "=", portal.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.allowed_gateways, "hotspot.lan,10.5.50.0/24,fd00::1/128");
      const api = await server.call("GET", `/api/captiveportals/${portal.id}`, { key });
      assert.deepEqual(api.body.allowed_gateways, stored);
      // A bad entry among good changes: nothing of the update is written.
      await assert.rejects(
        server.core.portals.update(accountId, portal.id, {
          title: "Changed",
          allowed_gateways: ["ok.lan", "a b"],
        }),
        /allowed_gateways/,
      );
      const after = await server.core.portals.get(accountId, portal.id);
      assert.equal(after.title, "");
      assert.deepEqual(after.allowed_gateways, stored);

      const link = (login: string) =>
        `${server.url}/portal/${portal.id}?${new URLSearchParams({ "link-login-only": login, mac: "aa:bb:cc:00:00:31" })}`;
      assert.equal((await fetch(link("http://hotspot.lan/login"))).status, 200);
      assert.equal((await fetch(link("http://10.5.50.1/login"))).status, 200);
      assert.equal((await fetch(link("http://[fd00::1]/login"))).status, 200);
      assert.equal((await fetch(link("http://192.168.88.1/login"))).status, 400, "outside the list");
      const evil = await fetch(link("https://evil.example/collect"));
      assert.equal(evil.status, 400);
      assert.match(await evil.text(), /must be opened by the Wi-Fi network/);

      // The CLI: set, refuse with the field named (nothing written), back to the default with ''.
      const env = databaseEnv(server.database);
      const id = String(portal.id);
      const set = await wisp(["portals", "update", id, "--allowed-gateways", "gw.lan, 192.168.88.1"], env);
      assert.equal(set.code, 0, set.stderr);
      const listed = await wisp(["portals", "list", "--json"], env);
      const mine = JSON.parse(listed.stdout).find((p: { id: number }) => p.id === portal.id);
      assert.deepEqual(mine.allowed_gateways, ["gw.lan", "192.168.88.1/32"]);
      const bad = await wisp(
        ["portals", "update", id, "--title", "X", "--allowed-gateways", "10.0.0.0/99"],
        env,
      );
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /allowed_gateways "10\.0\.0\.0\/99" has an invalid prefix length/);
      assert.equal((await server.core.portals.get(accountId, portal.id)).title, "");
      const reset = await wisp(["portals", "update", id, "--allowed-gateways", ""], env);
      assert.equal(reset.code, 0, reset.stderr);
      assert.deepEqual((await server.core.portals.get(accountId, portal.id)).allowed_gateways, []);
    });

    test("the CLI sets page fields, reads the UAM secret from stdin and never prints it", async () => {
      const env = { ...databaseEnv(server.database), PUBLIC_URL: "https://wifi.example.org" };
      const created = await wisp(
        [
          ...["portals", "create", "--name", "Hotel", "--network", String(networkId)],
          ...["--vendor", "coovachilli", "--uam-secret-stdin", "--methods", "voucher,password"],
          ...["--title", "Hotel guests", "--color-primary", "#224466", "--language", "es"],
        ],
        env,
        "stdin-Secret-9\n",
      );
      assert.equal(created.code, 0, created.stderr);
      const id = Number(/captive portal (\d+)/.exec(created.stdout)?.[1]);
      const listed = await wisp(["portals", "list", "--json"], env);
      assert.doesNotMatch(listed.stdout + created.stdout, /stdin-Secret-9/);
      const mine = JSON.parse(listed.stdout).find((p: { id: number }) => p.id === id);
      assert.equal(mine.uam_secret_set, true);
      assert.deepEqual(mine.methods, ["voucher", "password"]);
      assert.equal((await server.core.portals.forGuests(id))?.uamSecret, "stdin-Secret-9");
      const bad = await wisp(["portals", "update", String(id), "--color-background", "red"], env);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /color_background must be a hex colour/);
      const timed = await wisp(
        ["portals", "update", String(id), "--clickthrough-validity", "7200", "--methods", "clickthrough"],
        env,
      );
      assert.equal(timed.code, 0, timed.stderr);
      assert.equal((await server.core.portals.get(accountId, id)).clickthrough_validity, 7_200);
      const noSecret = await wisp(["portals", "update", String(id), "--uam-secret", ""], env);
      assert.match(noSecret.stderr, /uam_secret is required when vendor is coovachilli/);
    });
  });
}

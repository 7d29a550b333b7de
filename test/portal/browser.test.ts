// Guests in a real browser (Debian's chromium through playwright-core) against a real Wisp with its
// RADIUS port open, through test gateways written from each vendor's protocol (test/support/
// gateways.ts): the gateway redirects to the portal, the guest signs in, the portal hands off, the
// gateway asks Wisp's RADIUS server (PAP or CHAP) and sends the guest on to the success URL or the
// page first asked for. Errors stay on the page without a trip to the gateway.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { CaptivePortal, PortalInput } from "../../src/core/portals/service.ts";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import { browserUnavailable, launchBrowser, SCREENSHOT_DIR, type TestBrowser } from "../support/browser.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startGateway, type TestGateway, type Vendor } from "../support/gateways.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { Receiver } from "../webhooks/receiver.ts";

const SECRET = "portal-radius-secret";
const UAM_SECRET = "uam-shared-7";

describe("captive portal guests in a browser", { skip: browserUnavailable() ?? false }, () => {
  let server: TestServer;
  let radiusPort: number;
  let accountId: number;
  let networkId: number;
  let browser: TestBrowser;
  const gateways: TestGateway[] = [];
  const shots: string[] = [];

  before(async () => {
    radiusPort = await freeUdpPort();
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(radiusPort),
        RADIUS_ACCT_PORT: String(await freeUdpPort()),
      },
    });
    accountId = (await server.account("default")).id;
    networkId = (
      await server.core.networks.create(accountId, { name: "venue", nas_ip: "127.0.0.1", secret: SECRET })
    ).network.id;
    browser = await launchBrowser({ width: 390, height: 800 });
  });
  after(async () => {
    await browser?.close();
    for (const g of gateways) await g.close();
    await server?.stop();
    if (shots.length) console.log(`portal screenshots (${shots.length}) in ${SCREENSHOT_DIR}`);
  });

  async function setup(
    vendor: Vendor,
    input: PortalInput = {},
    gatewayOptions: { noChallenge?: boolean } = {},
  ) {
    const generic = {
      loginParam: "switch_url",
      usernameField: "user",
      passwordField: "pass",
      redirectField: "redirect_url",
    };
    const gateway = await startGateway({
      vendor,
      radiusPort,
      secret: SECRET,
      uamSecret: UAM_SECRET,
      generic,
      clientMac: `AA-BB-CC-00-11-${String(gateways.length + 10).padStart(2, "0")}`,
      ...gatewayOptions,
    });
    gateways.push(gateway);
    // The success URL is on another origin than the gateway (localhost vs 127.0.0.1).
    const portal = await server.core.portals.create(accountId, {
      name: `${vendor} portal`,
      network_id: networkId,
      vendor,
      // The test gateways listen on loopback, which no real gateway is (not allowed by default).
      allowed_gateways: ["127.0.0.1"],
      methods: ["voucher", "password"],
      success_url: `http://localhost:${new URL(gateway.url).port}/welcome`,
      ...(vendor === "coovachilli" ? { uam_secret: UAM_SECRET } : {}),
      ...(vendor === "generic"
        ? {
            generic_login_param: generic.loginParam,
            generic_username_field: generic.usernameField,
            generic_password_field: generic.passwordField,
            generic_redirect_field: generic.redirectField,
          }
        : {}),
      ...input,
    });
    return { gateway, portal };
  }

  const page = () => browser.page;
  const voucher = async (input: { usage_limit?: number } = {}) =>
    server.core.vouchers.create(accountId, { validity: 3600, ...input });

  async function open(gateway: TestGateway, portal: CaptivePortal) {
    await page().goto(gateway.startUrl(portal.login_url.replace(/^https?:\/\/[^/]+/, server.url)));
    assert.match(new URL(page().url()).pathname, new RegExp(`^/portal/${portal.id}$`));
  }

  async function signInWithCode(code: string) {
    await page().fill("#code", code);
    await Promise.all([
      page().waitForLoadState("load"),
      page().click("#h-voucher ~ form button[type=submit]"),
    ]);
  }

  async function landed(expected: RegExp) {
    await page().waitForURL(expected, { timeout: 10_000 });
    return page().textContent("#landed");
  }

  test("CoovaChilli: a voucher signs in through UAM CHAP, or PAP, and lands on the success URL", async () => {
    const { gateway, portal } = await setup("coovachilli");
    const code = (await voucher()).code;
    await open(gateway, portal);
    shots.push(await browser.screenshot("portal-coova"));
    await signInWithCode(code.toLowerCase());
    assert.equal(await landed(/localhost:\d+\/welcome$/), "/welcome");
    assert.equal(gateway.handoffs.length, 1);
    const [hand] = gateway.handoffs;
    assert.ok(hand?.params.response, "CHAP response sent");
    assert.equal(hand?.radius.type, "Access-Accept", hand?.radius.message);
    const row = (await server.core.vouchers.list(accountId, { search: code }, { page: 1, limit: 1 })).data[0];
    assert.equal(row?.status, "exhausted", "the RADIUS request, not the page, used the voucher");

    // The PAP hand-off: the password XOR-encoded with md5(challenge + uamsecret), which the gateway
    // decodes and sends to RADIUS as User-Password.
    const pap = await setup("coovachilli", { uam_auth: "pap" });
    const papCode = (await voucher()).code;
    await open(pap.gateway, pap.portal);
    await signInWithCode(papCode);
    assert.equal(await landed(/localhost:\d+\/welcome$/), "/welcome");
    const [papHand] = pap.gateway.handoffs;
    assert.ok(papHand?.params.password && !papHand.params.response, "PAP-encoded password sent");
    assert.notEqual(papHand.params.password, papCode, "never the password in clear");
    assert.equal(papHand.radius.type, "Access-Accept", papHand.radius.message);
  });

  test("MikroTik: HTTP-CHAP from chap-id/chap-challenge; PAP without a challenge", async () => {
    const chap = await setup("mikrotik");
    await open(chap.gateway, chap.portal);
    await signInWithCode((await voucher()).code);
    assert.equal(await landed(/\/welcome$/), "/welcome");
    const [hand] = chap.gateway.handoffs;
    assert.match(hand?.params.password ?? "", /^[0-9a-f]{32}$/, "the password went hashed");
    assert.equal(hand?.radius.type, "Access-Accept", hand?.radius.message);

    const pap = await setup("mikrotik", { success_url: "" }, { noChallenge: true });
    const code = (await voucher()).code;
    await open(pap.gateway, pap.portal);
    await signInWithCode(code);
    assert.equal(await landed(/\/original$/), "/original", "no success URL: the page first asked for");
    assert.equal(pap.gateway.handoffs[0]?.params.password, code);
    assert.equal(pap.gateway.handoffs[0]?.radius.type, "Access-Accept");
  });

  test("generic: a form POST with the portal's field names", async () => {
    const { gateway, portal } = await setup("generic");
    const code = (await voucher()).code;
    await open(gateway, portal);
    await signInWithCode(code);
    assert.equal(await landed(/\/welcome$/), "/welcome");
    const [hand] = gateway.handoffs;
    assert.deepEqual(Object.keys(hand?.params ?? {}).sort(), ["pass", "redirect_url", "user"]);
    assert.equal(hand?.radius.type, "Access-Accept");
  });

  test("a user signs in with username and password", async () => {
    const { gateway, portal } = await setup("coovachilli");
    await server.core.users.create(accountId, { username: "guest.anna", password: "Sunny-Day-42" });
    await open(gateway, portal);
    await page().fill("#username", "guest.anna");
    await page().fill("#password", "Sunny-Day-42");
    await page().click("#h-password ~ form button[type=submit]");
    assert.equal(await landed(/\/welcome$/), "/welcome");
    assert.equal(gateway.handoffs[0]?.radius.type, "Access-Accept");
  });

  test("wrong code, exhausted voucher, disabled user: an error on the page, no trip to the gateway", async () => {
    const { gateway, portal } = await setup("mikrotik");
    await open(gateway, portal);
    await signInWithCode("NOSUCHCODE");
    assert.match((await page().textContent("#error")) ?? "", /not valid/);
    assert.equal(new URL(page().url()).pathname, `/portal/${portal.id}`);

    const used = await voucher({ usage_limit: 1 });
    const other = await sendRadius({
      host: "127.0.0.1",
      port: radiusPort,
      secret: SECRET,
      ...accessRequestPap(used.code, used.code, [["Calling-Station-Id", "11-22-33-44-55-66"]]),
    });
    assert.equal(other.type, "Access-Accept");
    await signInWithCode(used.code);
    assert.match((await page().textContent("#error")) ?? "", /already in use/);

    const user = await server.core.users.create(accountId, { username: "gone.bob", password: "Pass-word-1" });
    await server.core.users.update(accountId, user.id, { status: "disabled" });
    for (const [username, password] of [
      ["gone.bob", "Pass-word-1"],
      ["nobody.here", "whatever-1"],
    ] as const) {
      await page().fill("#username", username);
      await page().fill("#password", password);
      await page().click("#h-password ~ form button[type=submit]");
      await page().waitForSelector("#error");
      assert.match((await page().textContent("#error")) ?? "", /username or password is not right/);
    }
    assert.equal(gateway.handoffs.length, 0, "nothing reached the gateway");
  });

  test("another account's code, a disabled or deleted portal: refused, 404", async () => {
    const theirs = await server.account("other");
    const theirVoucher = await server.core.vouchers.create(theirs.id, { validity: 600 });
    const { gateway, portal } = await setup("generic");
    await open(gateway, portal);
    await signInWithCode(theirVoucher.code);
    assert.match((await page().textContent("#error")) ?? "", /not valid/);
    await server.core.portals.update(accountId, portal.id, { enabled: false });
    const off = await page().goto(gateway.startUrl(`${server.url}/portal/${portal.id}`));
    assert.equal(off?.status(), 404);
    assert.match((await page().textContent("h1")) ?? "", /Page not found/);
    await server.core.portals.delete(accountId, portal.id);
    assert.equal((await page().goto(`${server.url}/portal/${portal.id}`))?.status(), 404);
  });

  test("a 320 px phone: no horizontal scroll; the language switch keeps the gateway's parameters", async () => {
    const { gateway, portal } = await setup("coovachilli", {
      terms:
        "Be kind.\n\nFull terms: https://example.com/terms-of-use-with-a-very-long-address-that-must-wrap",
      welcome_text: "Welcome to the café",
    });
    await page().setViewportSize({ width: 320, height: 640 });
    await page().setExtraHTTPHeaders({ "accept-language": "es-ES,es;q=0.9,en;q=0.5" });
    await open(gateway, portal);
    assert.equal(await page().getAttribute("html", "lang"), "es");
    assert.match((await page().textContent("#h-voucher")) ?? "", /Tengo un código/);
    const overflow = await page().evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `scrolls ${overflow} px sideways`);
    shots.push(await browser.screenshot("portal-320-es"));
    await page().click("nav a[lang=fr]");
    assert.equal(await page().getAttribute("html", "lang"), "fr");
    assert.match(page().url(), /challenge=[0-9a-f]{32}/);
    await signInWithCode((await voucher()).code);
    assert.equal(await landed(/\/welcome$/), "/welcome");
    await page().setExtraHTTPHeaders({});
  });
});

describe("captive portal click-through and registration in a browser", {
  skip: browserUnavailable() ?? false,
}, () => {
  let server: TestServer;
  let radiusPort: number;
  let accountId: number;
  let networkId: number;
  let groupId: number;
  let browser: TestBrowser;
  let receiver: Receiver;
  let key: string;
  const gateways: TestGateway[] = [];

  before(async () => {
    radiusPort = await freeUdpPort();
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(radiusPort),
        RADIUS_ACCT_PORT: String(await freeUdpPort()),
        WEBHOOK_ALLOW_PRIVATE: "1",
      },
    });
    receiver = await Receiver.start();
    accountId = (await server.account("default")).id;
    networkId = (
      await server.core.networks.create(accountId, { name: "venue", nas_ip: "127.0.0.1", secret: SECRET })
    ).network.id;
    groupId = (await server.core.groups.create(accountId, { name: "hotel-guests" })).id;
    key = await server.key("default", { permissions: "read" });
    await server.core.webhooks.create(accountId, { url: receiver.url("/guests"), events: "all" });
    browser = await launchBrowser({ width: 390, height: 800 });
  });
  after(async () => {
    await browser?.close();
    for (const g of gateways) await g.close();
    await server?.stop();
    await receiver?.close();
  });

  async function setup(vendor: Vendor, mac: string) {
    const gateway = await startGateway({
      vendor,
      radiusPort,
      secret: SECRET,
      uamSecret: UAM_SECRET,
      clientMac: mac,
    });
    gateways.push(gateway);
    const portal = await server.core.portals.create(accountId, {
      name: `${vendor} guests`,
      network_id: networkId,
      vendor,
      allowed_gateways: ["127.0.0.1"],
      methods: ["clickthrough", "registration"],
      guest_group_id: groupId,
      terms: "Be kind to the network.",
      clickthrough_validity: 7_200,
      clickthrough_session_timeout: 900,
      registration_validity: 86_400,
      success_url: `http://localhost:${new URL(gateway.url).port}/welcome`,
      ...(vendor === "coovachilli" ? { uam_secret: UAM_SECRET } : {}),
    });
    await browser.page.goto(gateway.startUrl(portal.login_url.replace(/^https?:\/\/[^/]+/, server.url)));
    return { gateway, portal };
  }

  const page = () => browser.page;
  const events = (kind: string) =>
    receiver
      .at("/guests")
      .map((r) => r.json as { type?: string; event?: string; data: Record<string, unknown> })
      .filter((b) => (b.event ?? b.type) === kind);

  async function register(name: string, email: string, phone = "") {
    await page().fill("#reg-name", name);
    await page().fill("#reg-email", email);
    if (phone) await page().fill("#reg-phone", phone);
    await page().check("#terms-register");
    await page().click("#h-register ~ form button[type=submit]");
  }

  test("CoovaChilli: click-through issues a one-time credential with the portal's limits", async () => {
    const { gateway, portal } = await setup("coovachilli", "AA-BB-CC-00-22-01");
    assert.equal(await page().getAttribute("#terms-click", "required"), "");
    await page().check("#terms-click");
    await page().click("#h-click ~ form button[type=submit]");
    await page().waitForURL(/localhost:\d+\/welcome$/, { timeout: 10_000 });
    const [hand] = gateway.handoffs;
    assert.equal(hand?.radius.type, "Access-Accept", hand?.radius.message);
    const code = hand?.params.username ?? "";
    const issued = await server.core.vouchers.findByCode(accountId, code);
    assert.ok(issued, `a voucher ${code} was issued`);
    assert.equal(issued.usage_limit, 1);
    assert.equal(issued.validity, 7_200);
    assert.equal(issued.session_timeout, 900);
    assert.equal(issued.status, "exhausted", "one device: used by the gateway's request");

    await receiver.waitFor(
      () => events("user.authenticated").some((e) => e.data.portal_id === portal.id),
      20_000,
      "user.authenticated with the portal",
    );
    const auth = events("user.authenticated").find((e) => e.data.portal_id === portal.id);
    assert.equal(auth?.data.method, "clickthrough");
    assert.equal(auth?.data.username, code);
  });

  test("MikroTik: registration creates a guest in the group, in report 115, with guest.registered", async () => {
    const { gateway, portal } = await setup("mikrotik", "AA-BB-CC-00-22-02");
    await register("Ana García", "Ana.Garcia@Example.org", "+34 600 000 000");
    await page().waitForURL(/\/welcome$/, { timeout: 10_000 });
    const [hand] = gateway.handoffs;
    assert.equal(hand?.radius.type, "Access-Accept", hand?.radius.message);
    const username = hand?.params.username ?? "";
    assert.match(username, new RegExp(`^guest-${portal.id}-[0-9a-f]{16}$`));

    const users = await server.call("GET", `/api/users?search=${username}`, { key });
    assert.equal(users.status, 200);
    const user = users.body.data[0];
    assert.equal(user?.email, "ana.garcia@example.org");
    assert.equal(user?.fullname, "Ana García");
    const members = await server.call("GET", `/api/groups/${groupId}/users`, { key });
    assert.ok(
      members.body.data.some((m: { username: string }) => m.username === username),
      "in the guest group",
    );
    const expiration = await server.core.database.db
      .selectFrom("radcheck")
      .select("value")
      .where("username", "=", username)
      .where("attribute", "=", "Expiration")
      .executeTakeFirstOrThrow();
    const expires = Number(expiration.value) - Date.now() / 1000;
    assert.ok(expires > 86_000 && expires <= 86_400, `expires in ${expires} s`);

    const report = await server.call("GET", "/api/reports/115?earliest=-1h", { key });
    assert.equal(report.status, 200);
    assert.ok(
      report.body.data.some((r: { username: string }) => r.username === username),
      "the guest is in report 115",
    );

    await receiver.waitFor(
      () =>
        events("guest.registered").length > 0 &&
        events("user.authenticated").some((e) => e.data.method === "registration"),
      20_000,
      "guest.registered and user.authenticated",
    );
    const registered = events("guest.registered")[0];
    assert.equal((registered?.data.user as { username?: string } | undefined)?.username, username);
    assert.equal(registered?.data.portal_id, portal.id);
    assert.equal(registered?.data.phone, "+34 600 000 000");
    const auth = events("user.authenticated").find((e) => e.data.method === "registration");
    assert.equal(auth?.data.portal_id, portal.id);
    assert.equal(auth?.data.username, username);

    // The same email again on this portal: the same guest, renewed (new password); no second user.
    await page().goto(gateway.startUrl(portal.login_url.replace(/^https?:\/\/[^/]+/, server.url)));
    await register("Ana G", "ana.garcia@EXAMPLE.org");
    await page().waitForURL(/\/welcome$/, { timeout: 10_000 });
    assert.equal(gateway.handoffs[1]?.radius.type, "Access-Accept", gateway.handoffs[1]?.radius.message);
    assert.equal(gateway.handoffs[1]?.params.username, username);
    const again = await server.call("GET", `/api/users?search=${username}`, { key });
    assert.equal(again.body.total, 1);
    assert.equal(again.body.data[0]?.fullname, "Ana G");
    assert.equal(events("guest.registered").length, 1, "a renewal is not a new registration");

    // Report 110 by portal: this portal's sign-in only.
    const mine = await server.call("GET", `/api/reports/110?portal_id=${portal.id}`, { key });
    assert.equal(mine.status, 200);
    assert.deepEqual(
      mine.body.data.map((r: { username: string }) => r.username),
      [username, username],
    );
    const bad = await server.call("GET", "/api/reports/110?portal_id=abc", { key });
    assert.equal(bad.status, 400);
  });
});

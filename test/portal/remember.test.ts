// Returning guests skip the portal (issue 24, point 3), in a real browser through the test gateways
// with MAC authentication before the portal (CoovaChilli macauth, MikroTik login-by=mac): sign in
// on the portal, disconnect, come back, and be let in by MAC without seeing the page. The portal
// remembers always, when asked, or never; randomised addresses are never remembered silently; a
// forgotten device, or a voucher disabled, brings the page back.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { PortalInput } from "../../src/core/portals/service.ts";
import { browserUnavailable, launchBrowser, type TestBrowser } from "../support/browser.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startGateway, type TestGateway, type Vendor } from "../support/gateways.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "remember-radius-secret";
const UAM_SECRET = "uam-shared-24";
/** The network-wide MAB password: CoovaChilli's macpasswd and MikroTik's mac-auth-password. */
const MAB_PASSWORD = "mab-shared-24";

describe("returning guests skip the portal", { skip: browserUnavailable() ?? false }, () => {
  let server: TestServer;
  let radiusPort: number;
  let accountId: number;
  let networkId: number;
  let browser: TestBrowser;
  const gateways: TestGateway[] = [];
  /** Every portal page the browser asked for. */
  const portalViews: string[] = [];

  before(async () => {
    radiusPort = await freeUdpPort();
    server = await startTestServer({
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(radiusPort), RADIUS_ACCT_PORT: "0" },
    });
    accountId = (await server.account("default")).id;
    networkId = (
      await server.core.networks.create(accountId, {
        name: "venue",
        nas_ip: "127.0.0.1",
        secret: SECRET,
        mab_mode: "guests",
        mab_password: "secret",
        mab_secret: MAB_PASSWORD,
      })
    ).network.id;
    browser = await launchBrowser({ width: 390, height: 800 });
    browser.page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith("/portal/") && !url.pathname.includes("/static/"))
        portalViews.push(url.pathname);
    });
  });
  after(async () => {
    await browser?.close();
    for (const g of gateways) await g.close();
    await server?.stop();
  });

  async function setup(vendor: Vendor, clientMac: string, input: PortalInput) {
    const gateway = await startGateway({
      vendor,
      radiusPort,
      secret: SECRET,
      uamSecret: UAM_SECRET,
      clientMac,
      macAuth: { password: MAB_PASSWORD },
    });
    gateways.push(gateway);
    const portal = await server.core.portals.create(accountId, {
      name: `${vendor} ${clientMac}`,
      network_id: networkId,
      vendor,
      allowed_gateways: ["127.0.0.1"],
      methods: ["voucher", "password"],
      ...(vendor === "coovachilli" ? { uam_secret: UAM_SECRET } : {}),
      ...input,
    });
    const start = gateway.startUrl(portal.login_url.replace(/^https?:\/\/[^/]+/, server.url));
    return { gateway, portal, start };
  }

  const page = () => browser.page;
  /** Opens the gateway's interception as a guest arriving; returns whether the portal was shown. */
  async function arrive(start: string): Promise<boolean> {
    portalViews.length = 0;
    await page().goto(start);
    await page().waitForLoadState("load");
    return new URL(page().url()).pathname.startsWith("/portal/");
  }
  async function landed() {
    await page().waitForURL(/\/(original|welcome)$/, { timeout: 10_000 });
    return page().textContent("#landed");
  }
  const remembered = (mac: string) =>
    server.core.devices.list(accountId, { search: mac, kind: "remembered" }, { page: 1, limit: 5 });

  test("CoovaChilli macauth, portal remembers always: a voucher guest comes back without the page", async () => {
    const mac = "00-1A-2B-3C-4D-01";
    const { gateway, start } = await setup("coovachilli", mac, {
      remember_devices: "always",
      remember_days: 7,
    });
    const voucher = await server.core.vouchers.create(accountId, { validity: 86_400, usage_limit: 1 });
    assert.equal(await arrive(start), true, "unknown device: the gateway shows the portal");
    assert.equal(gateway.handoffs[0]?.path, "/mab");
    assert.equal(gateway.handoffs[0]?.radius.message, "unknown device");
    assert.match((await page().textContent("#remember-note")) ?? "", /remembered for 7 days/);
    await page().fill("#code", voucher.code);
    await page().click("#h-voucher ~ form button[type=submit]");
    assert.equal(await landed(), "/original");
    const [device] = (await remembered("00:1a:2b:3c:4d:01")).data;
    assert.ok(device, "remembered");
    assert.equal(device.voucher_id, voucher.id);
    const days = (Date.parse(device.expires ?? "") - Date.now()) / 86_400_000;
    assert.ok(days > 6.9 && days <= 7, `expires in ${days} days`);

    // Disconnected; back later: MAC authentication lets the device in, the page never shows.
    await page().goto("about:blank");
    assert.equal(await arrive(start), false, "no portal page");
    assert.deepEqual(portalViews, []);
    assert.equal(await page().textContent("#landed"), "/original");
    const mab = gateway.handoffs.at(-1)!;
    assert.equal(mab.path, "/mab");
    assert.equal(mab.radius.type, "Access-Accept", mab.radius.message);
    assert.equal(mab.radius.attributes["User-Name"], voucher.code, "accounted as the voucher");
    const attempt = await server.core.database.db
      .selectFrom("radpostauth")
      .select(["method", "voucher_id"])
      .where("account_id", "=", accountId)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    assert.deepEqual(attempt, { method: "MAB", voucher_id: voucher.id });

    // The voucher disabled: the remembered login goes with it, and the page is back.
    await server.core.vouchers.setEnabled(accountId, voucher.id, false);
    assert.equal(await arrive(start), true);
    assert.equal(gateway.handoffs.at(-1)?.radius.message, "voucher disabled");
  });

  test("MikroTik login-by=mac, portal asks: remembered only when the guest ticks the box; forgotten brings the page back", async () => {
    await server.core.users.create(accountId, { username: "anna", password: "Sunny-Day-42" });
    const ticked = await setup("mikrotik", "00-1A-2B-3C-4D-02", {
      remember_devices: "ask",
      remember_days: 30,
    });
    assert.equal(await arrive(ticked.start), true);
    await page().fill("#username", "anna");
    await page().fill("#password", "Sunny-Day-42");
    await page().check("#remember-password");
    await page().click("#h-password ~ form button[type=submit]");
    assert.equal(await landed(), "/original");
    const [device] = (await remembered("00:1a:2b:3c:4d:02")).data;
    assert.ok(device);
    assert.equal(
      device.user_id,
      (await server.core.users.list(accountId, { search: "anna" }, { page: 1, limit: 1 })).data[0]?.id,
    );
    assert.equal(await arrive(ticked.start), false, "let in by MAC");
    assert.equal(ticked.gateway.handoffs.at(-1)?.radius.attributes["User-Name"], "anna");

    const unticked = await setup("mikrotik", "00-1A-2B-3C-4D-03", { remember_devices: "ask" });
    assert.equal(await arrive(unticked.start), true);
    await page().fill("#username", "anna");
    await page().fill("#password", "Sunny-Day-42");
    await page().click("#h-password ~ form button[type=submit]");
    assert.equal(await landed(), "/original");
    assert.equal((await remembered("00:1a:2b:3c:4d:03")).total, 0, "not ticked: not remembered");
    assert.equal(await arrive(unticked.start), true, "the page again");

    // Forgetting the device (console, API: a delete) brings the page back.
    await server.core.devices.delete(accountId, device.id);
    assert.equal(await arrive(ticked.start), true);
  });

  test("a randomised address: the page says how to turn it off; never remembered silently", async () => {
    // 0xAA: the locally administered bit is set (a private address).
    const refuse = await setup("coovachilli", "AA-1A-2B-3C-4D-04", { remember_devices: "always" });
    const voucher = await server.core.vouchers.create(accountId, { validity: 3600 });
    assert.equal(await arrive(refuse.start), true);
    const notice = (await page().textContent("#random-mac")) ?? "";
    assert.match(notice, /private Wi-Fi address/);
    assert.match(notice, /Private Wi-Fi Address: Off/);
    assert.equal(await page().locator("#remember-note").count(), 0, "no promise to remember");
    assert.equal(await page().locator("#remember-voucher").count(), 0, "no box: the operator refuses");
    await page().fill("#code", voucher.code);
    await page().click("#h-voucher ~ form button[type=submit]");
    assert.equal(await landed(), "/original");
    assert.equal((await remembered("aa:1a:2b:3c:4d:04")).total, 0);

    const allow = await setup("coovachilli", "AA-1A-2B-3C-4D-05", {
      remember_devices: "always",
      random_macs: "allow",
    });
    const second = await server.core.vouchers.create(accountId, { validity: 3600 });
    assert.equal(await arrive(allow.start), true);
    await page().fill("#code", second.code);
    await page().check("#remember-voucher");
    await page().click("#h-voucher ~ form button[type=submit]");
    assert.equal(await landed(), "/original");
    assert.equal((await remembered("aa:1a:2b:3c:4d:05")).total, 1, "remembered: the guest asked");
    assert.equal(await arrive(allow.start), false);
  });

  test("the portal's words in the other languages", async () => {
    const { start } = await setup("coovachilli", "AA-1A-2B-3C-4D-06", {
      remember_devices: "ask",
      language: "fr",
    });
    assert.equal(await arrive(start), true);
    assert.match((await page().textContent("#random-mac")) ?? "", /adresse Wi-Fi privée/);
    const es = await setup("coovachilli", "00-1A-2B-3C-4D-07", {
      remember_devices: "ask",
      language: "es",
      remember_days: 3,
    });
    assert.equal(await arrive(es.start), true);
    assert.match((await page().textContent("label[for=remember-voucher]")) ?? "", /durante 3 días/);
  });
});

// Verified guests in a real browser (issue 27 point 6): Debian's chromium through playwright-core,
// a MikroTik test gateway that asks Wisp's RADIUS port (test/support/gateways.ts), the test's own
// SMTP server. The guest registers, reads the code from the received mail and types it, and the
// gateway's Access-Request is accepted; a sponsor approves in a second browser while the guest's
// page waits and moves on by itself.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { PortalInput } from "../../src/core/portals/service.ts";
import { browserUnavailable, launchBrowser, type TestBrowser } from "../support/browser.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startGateway, type TestGateway } from "../support/gateways.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { codeIn, linkIn, TestSmtp } from "../support/smtp.ts";

const SECRET = "guests-radius-secret";

describe("verified guests in a browser", { skip: browserUnavailable() ?? false }, () => {
  let server: TestServer;
  let smtp: TestSmtp;
  let radiusPort: number;
  let accountId: number;
  let networkId: number;
  let groupId: number;
  let guest: TestBrowser;
  let sponsor: TestBrowser;
  const gateways: TestGateway[] = [];

  before(async () => {
    smtp = await TestSmtp.start();
    radiusPort = await freeUdpPort();
    server = await startTestServer({
      env: {
        ...smtp.env(),
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(radiusPort),
        RADIUS_ACCT_PORT: String(await freeUdpPort()),
      },
    });
    accountId = (await server.account("default")).id;
    networkId = (
      await server.core.networks.create(accountId, { name: "venue", nas_ip: "127.0.0.1", secret: SECRET })
    ).network.id;
    groupId = (await server.core.groups.create(accountId, { name: "verified" })).id;
    guest = await launchBrowser({ width: 390, height: 800 });
    sponsor = await launchBrowser({ width: 1024, height: 800 });
  });
  after(async () => {
    await guest?.close();
    await sponsor?.close();
    for (const g of gateways) await g.close();
    await server?.stop();
    await smtp?.close();
  });

  async function setup(mac: string, input: PortalInput) {
    const gateway = await startGateway({ vendor: "mikrotik", radiusPort, secret: SECRET, clientMac: mac });
    gateways.push(gateway);
    const portal = await server.core.portals.create(accountId, {
      name: `verified ${gateways.length}`,
      network_id: networkId,
      vendor: "mikrotik",
      allowed_gateways: ["127.0.0.1"],
      methods: ["registration"],
      guest_group_id: groupId,
      title: "Hotel Lobby",
      success_url: `http://localhost:${new URL(gateway.url).port}/welcome`,
      ...input,
    });
    await guest.page.goto(gateway.startUrl(portal.login_url.replace(/^https?:\/\/[^/]+/, server.url)));
    return { gateway, portal };
  }

  async function register(email: string, sponsorEmail?: string) {
    const page = guest.page;
    await page.fill("#reg-name", "Ana García");
    await page.fill("#reg-email", email);
    if (sponsorEmail) await page.fill("#reg-sponsor", sponsorEmail);
    await page.check("#terms-register");
    await page.click("#h-register ~ form button[type=submit]");
    await page.waitForURL(/\/guest\/[A-Za-z0-9_-]{43}/);
  }

  test("email code: typed from the received mail, then the gateway's RADIUS Access-Accept", async () => {
    const { gateway } = await setup("AA-BB-CC-27-B0-01", { email_verification: "code" });
    await register("browser@example.org");
    const mail = await smtp.waitFor((m) => m.to.includes("browser@example.org"));
    await guest.page.fill("#code", codeIn(mail.text));
    await guest.page.click("#code ~ button[type=submit]");
    // Verified: the page connects by itself (handoff.js), the gateway asks RADIUS, lands on /welcome.
    await guest.page.waitForURL(/localhost:\d+\/welcome$/, { timeout: 15_000 });
    const [hand] = gateway.handoffs;
    assert.equal(hand?.radius.type, "Access-Accept", hand?.radius.message);
    assert.match(hand?.params.username ?? "", /^guest-\d+-[0-9a-f]{16}$/);
  });

  test("sponsor: a second browser approves; the guest's waiting page moves on by itself", async () => {
    const { gateway } = await setup("AA-BB-CC-27-B0-02", {
      sponsor_required: true,
      sponsor_domains: ["example.com"],
      sponsor_durations: [3_600, 28_800],
    });
    await register("visitor@example.org", "host@example.com");
    assert.match((await guest.page.textContent("#state")) ?? "", /Waiting for approval/);
    const mail = await smtp.waitFor((m) => m.to.includes("host@example.com"));
    const approve = new URL(linkIn(mail.text, "decision=approve"));
    await sponsor.page.goto(`${server.url}${approve.pathname}${approve.search}`);
    await sponsor.page.selectOption("#duration", "28800");
    await sponsor.page.click("#approve");
    await sponsor.page.waitForSelector("#note");
    assert.match((await sponsor.page.textContent("#note")) ?? "", /can get online for 8 hours/);
    // The guest did nothing: the page looked again (meta refresh), connected, RADIUS accepted.
    await guest.page.waitForURL(/localhost:\d+\/welcome$/, { timeout: 20_000 });
    const [hand] = gateway.handoffs;
    assert.equal(hand?.radius.type, "Access-Accept", hand?.radius.message);
  });
});

// Sign-in through an identity provider in a real browser (issue 26 point 5): Debian's chromium
// through playwright-core walks the gateway's redirect -> the guest page -> the IdP's login (the
// real oidc-provider, or the test's SAML IdP whose page posts the Response back) -> Wisp's finish
// page -> the gateway's hand-off -> the gateway's RADIUS Access-Request -> Access-Accept, for each
// vendor's test gateway (test/support/gateways.ts). The gateway's parameters survive the round trip.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { browserUnavailable, launchBrowser, type TestBrowser } from "../support/browser.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startGateway, type TestGateway, type Vendor } from "../support/gateways.ts";
import { type IdpLab, RADIUS_SECRET, startIdpLab } from "../support/idp-lab.ts";

describe("identity provider sign-in in a browser", { skip: browserUnavailable() ?? false }, () => {
  let lab: IdpLab;
  let radiusPort: number;
  let browser: TestBrowser;
  const gateways: TestGateway[] = [];
  let devices = 0;

  before(async () => {
    radiusPort = await freeUdpPort();
    lab = await startIdpLab({
      RADIUS_HOST: "127.0.0.1",
      RADIUS_AUTH_PORT: String(radiusPort),
      RADIUS_ACCT_PORT: String(await freeUdpPort()),
    });
    browser = await launchBrowser({ width: 390, height: 800 });
  });
  after(async () => {
    await browser?.close();
    for (const g of gateways) await g.close();
    await lab?.stop();
  });

  async function setup(vendor: Vendor, providerId: number) {
    const mac = `AA-BB-CC-26-B0-${String(++devices).padStart(2, "0")}`;
    const uamSecret = vendor === "coovachilli" ? "idp-uam-secret" : undefined;
    const gateway = await startGateway({
      vendor,
      radiusPort,
      secret: RADIUS_SECRET,
      clientMac: mac,
      ...(uamSecret ? { uamSecret } : {}),
      ...(vendor === "generic"
        ? {
            generic: {
              loginParam: "login_url",
              usernameField: "username",
              passwordField: "password",
              redirectField: "redirect_url",
            },
          }
        : {}),
    });
    gateways.push(gateway);
    const portal = await lab.portal({
      vendor,
      identity_providers: [providerId],
      allowed_gateways: ["127.0.0.1"],
      success_url: `http://localhost:${new URL(gateway.url).port}/welcome`,
      ...(uamSecret ? { uam_secret: uamSecret } : {}),
      ...(vendor === "generic" ? { generic_redirect_field: "redirect_url" } : {}),
    });
    // Each guest comes fresh: no IdP session (it would skip the login page) or cookies of the last.
    await browser.page.context().clearCookies();
    await browser.page.goto(gateway.startUrl(portal.login_url));
    await browser.page.click(`#idp-${providerId}`);
    return { gateway, portal };
  }

  async function accepted(gateway: TestGateway, username: string, providerId: number) {
    await browser.page.waitForURL(/localhost:\d+\/welcome$/, { timeout: 20_000 });
    const [hand] = gateway.handoffs;
    assert.equal(hand?.radius.type, "Access-Accept", hand?.radius.message);
    assert.equal(hand?.params.username, username);
    // The accepted login's user.authenticated event names the method and the provider.
    for (let i = 0; i < 50; i++) {
      const rows = await lab.server.core.database.db
        .selectFrom("events")
        .select("data")
        .where("account_id", "=", lab.accountId)
        .where("kind", "=", "user.authenticated")
        .execute();
      const event = rows.map((r) => JSON.parse(r.data)).find((d) => d.username === username);
      if (event) {
        assert.equal(event.method, "idp");
        assert.equal(event.provider_id, providerId);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`no user.authenticated event for ${username}`);
  }

  for (const vendor of ["mikrotik", "coovachilli", "generic"] as const) {
    test(`OpenID Connect, ${vendor}: IdP login, back, hand-off, RADIUS Access-Accept`, async () => {
      const provider = await lab.oidcProvider();
      const { gateway } = await setup(vendor, provider.id);
      // oidc-provider's own login and consent pages.
      await browser.page.waitForURL(new RegExp(`^${lab.op.issuer}/interaction/`));
      await browser.page.fill('input[name="login"]', `guest-${vendor}`);
      await browser.page.fill('input[name="password"]', "any");
      await browser.page.click('button[type="submit"]');
      await browser.page.waitForSelector('input[name="prompt"][value="consent"]', { state: "attached" });
      await browser.page.click('button[type="submit"]');
      await accepted(gateway, `${provider.name}:guest-${vendor}`, provider.id);
    });

    test(`SAML, ${vendor}: IdP login, Response posted back, hand-off, RADIUS Access-Accept`, async () => {
      const provider = await lab.samlProvider();
      const { gateway } = await setup(vendor, provider.id);
      await browser.page.waitForURL(new RegExp(`^${lab.saml.url}/sso`));
      await browser.page.fill("#user", `saml-${vendor}`);
      await browser.page.click("#signin");
      await accepted(gateway, `${provider.name}:saml-${vendor}`, provider.id);
    });
  }
});

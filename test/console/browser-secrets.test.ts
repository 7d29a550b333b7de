// Secrets shown once, in a real browser (Debian's chromium through playwright-core): after an API key
// is generated, or a webhook or network secret rotated, reloading the page and going Back neither
// shows the secret again nor makes another key or rotates the secret again; nor does a page restored
// from the back/forward cache.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { browserUnavailable, launchBrowser, type TestBrowser } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "reload@example.com";
const PASSWORD = "correct horse battery staple";

describe("console secrets in a browser: reload and Back show nothing again", {
  skip: browserUnavailable() ?? false,
}, () => {
  let server: TestServer;
  let browser: TestBrowser;
  let accountId = 0;

  const url = (path: string) => `${server.url}${path}`;
  const page = () => browser.page;

  before(async () => {
    server = await startTestServer();
    const account = await server.account("default");
    accountId = account.id;
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    browser = await launchBrowser();
    const p = page();
    await p.goto(url("/console/login"));
    await p.fill("#f-email", EMAIL);
    await p.fill("#f-password", PASSWORD);
    await p.click("button[type=submit]");
    assert.equal(new URL(p.url()).pathname, "/console");
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const storedSecret = async (table: "nas" | "webhook_endpoints", id: number) => {
    const query = sql<{ secret: string }>`select secret from ${sql.table(table)} where id = ${id}`;
    return (await query.execute(server.core.database.db)).rows[0]?.secret;
  };

  /** The page on screen does not show `secret`, nor any secret box. */
  async function notShown(secret: string, when: string): Promise<void> {
    const p = page();
    assert.ok(!(await p.content()).includes(secret), `${when}: the secret is not on the page`);
    assert.equal(await p.locator("#secret-value").count(), 0, `${when}: no secret box`);
  }

  test("an API key: reload and Back make no second key and do not show it again", async () => {
    const p = page();
    const count = async () => (await server.core.keys.list(accountId)).length;
    const before = await count();
    await p.goto(url("/console/keys"));
    await p.fill("#f-name", "reloaded key");
    await p.click("button:has-text('Generate key')");
    const key = (await p.textContent("#secret-value"))?.trim() ?? "";
    assert.match(key, /^wisp_[0-9A-Za-z]{40}$/);
    assert.equal(await count(), before + 1);

    await p.reload();
    await notShown(key, "after reload");
    assert.match((await p.textContent(".notice")) ?? "", /shown only once/);
    assert.equal(await count(), before + 1, "the reload made no key");
    await p.goBack();
    await notShown(key, "after Back");
    assert.equal(await count(), before + 1, "going back made no key");
  });

  test("a webhook secret: rotated once, whatever reload and Back do", async () => {
    const p = page();
    const { webhook } = await server.core.webhooks.create(accountId, { url: "https://hooks.example.com/r" });
    await p.goto(url(`/console/webhooks/${webhook.id}/rotate`));
    const before = await storedSecret("webhook_endpoints", webhook.id);
    await p.click("button:has-text('Rotate secret')");
    const secret = (await p.textContent("#secret-value"))?.trim() ?? "";
    assert.match(secret, /^whsec_/);
    const rotated = await storedSecret("webhook_endpoints", webhook.id);
    assert.notEqual(rotated, before);

    await p.click("text=Done");
    await p.goBack();
    await notShown(secret, "after Back to the secret's page");
    await p.reload();
    await notShown(secret, "after reload");
    await p.goBack();
    await notShown(secret, "after Back again");
    assert.equal(await storedSecret("webhook_endpoints", webhook.id), rotated, "rotated once only");
  });

  test("a network secret: rotated once, whatever reload and Back do", async () => {
    const p = page();
    const { network } = await server.core.networks.create(accountId, { name: "Hall", nas_ip: "192.0.2.9" });
    await p.goto(url(`/console/networks/${network.id}/rotate`));
    await p.click("button:has-text('Rotate secret')");
    const secret = (await p.textContent("#secret-value"))?.trim() ?? "";
    assert.match(secret, /^[A-Za-z0-9]{24}$/);
    assert.equal(await storedSecret("nas", network.id), secret);

    await p.reload();
    await notShown(secret, "after reload");
    assert.match((await p.textContent(".notice")) ?? "", /shown only once/);
    await p.goBack();
    await notShown(secret, "after Back");
    await p.goForward();
    await notShown(secret, "after Forward");
    assert.equal(await storedSecret("nas", network.id), secret, "rotated once only");
  });

  test("a secret page restored from the back/forward cache reloads, and so shows nothing", async () => {
    const p = page();
    await p.goto(url("/console/keys"));
    await p.fill("#f-name", "cached key");
    await p.click("button:has-text('Generate key')");
    const key = (await p.textContent("#secret-value"))?.trim() ?? "";
    assert.match(key, /^wisp_/);
    // Playwright's chromium runs without that cache, so the restoration is told as the browser would.
    await Promise.all([
      p.waitForURL(/\/console\/keys\?notice=key-shown$/),
      p.evaluate(() => {
        window.dispatchEvent(new Event("pagehide"));
        window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true }));
      }),
    ]);
    await notShown(key, "after restoring from the cache");
  });
});

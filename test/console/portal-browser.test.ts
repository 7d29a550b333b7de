// The portal form in Chromium: editing the title and a colour updates the live preview (a
// sandboxed frame) without saving or reloading the page, and an uploaded logo appears in the
// preview and on the guest page.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Frame } from "playwright-core";
import { browserUnavailable, launchBrowser, type TestBrowser } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { png } from "./logo-fixtures.ts";

const EMAIL = "designer@example.com";
const PASSWORD = "a long enough password";

async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  let value = await read();
  while (!ok(value)) {
    if (Date.now() > deadline) assert.fail(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

describe("portal form in a browser", { skip: browserUnavailable() ?? false }, () => {
  let server: TestServer;
  let browser: TestBrowser;
  let accountId = 0;
  let portalId = 0;

  before(async () => {
    server = await startTestServer();
    const account = await server.account("default");
    accountId = account.id;
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    const { network } = await server.core.networks.create(account.id, {
      name: "Hall",
      nas_ip: "10.8.0.0/24",
    });
    portalId = (await server.core.portals.create(account.id, { name: "Hall portal", network_id: network.id }))
      .id;
    browser = await launchBrowser();
    const p = browser.page;
    await p.goto(`${server.url}/console/login`);
    await p.fill("#f-email", EMAIL);
    await p.fill("#f-password", PASSWORD);
    await p.click("button[type=submit]");
    await p.waitForURL(/\/console\/?$/);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const preview = (): Frame => {
    const frame = browser.page.frame({ name: "portal-preview" });
    assert.ok(frame, "the preview frame");
    return frame;
  };
  const previewHeading = () =>
    preview()
      .textContent("h1")
      .catch(() => "");
  const previewHeader = () =>
    preview()
      .evaluate(() => getComputedStyle(document.querySelector("header") as Element).backgroundColor)
      .catch(() => "");

  test("title and colour changes show in the live preview, unsaved, without a reload", async () => {
    const p = browser.page;
    await p.goto(`${server.url}/console/portals/${portalId}/edit`);
    await until("stored title in the preview", previewHeading, (t) => t === "Hall portal");
    await p.evaluate(() => {
      (window as unknown as { marker: number }).marker = 1;
    });
    // The vendor's fields: the generic gateway's names are shown, the UAM secret is not.
    assert.equal(await p.isVisible("#f-generic_username_field"), true);
    assert.equal(await p.isVisible("#f-uam_secret"), false);
    await p.selectOption("#f-vendor", "coovachilli");
    assert.equal(await p.isVisible("#f-uam_secret"), true);
    assert.equal(await p.isVisible("#f-generic_username_field"), false);
    await p.selectOption("#f-vendor", "generic");

    await p.fill("#f-title", "Welcome to the <Hall>");
    await until("new title in the preview", previewHeading, (t) => t === "Welcome to the <Hall>");
    await p.fill("#f-color_primary", "#aa0000");
    await until("new colour in the preview", previewHeader, (c) => c === "rgb(170, 0, 0)");
    assert.equal(
      await p.evaluate(() => (window as unknown as { marker?: number }).marker),
      1,
      "the console page was not reloaded",
    );
    assert.equal((await server.core.portals.get(accountId, portalId)).title, "", "nothing saved yet");
    await browser.screenshot("portal-preview");

    await p.click("button:has-text('Save')");
    await p.waitForURL(/notice=portal-updated/);
    const saved = await server.core.portals.get(accountId, portalId);
    assert.equal(saved.title, "Welcome to the <Hall>");
    assert.equal(saved.color_primary, "#aa0000");
  });

  test("an uploaded logo appears in the preview and on the guest page", async () => {
    const p = browser.page;
    await p.goto(`${server.url}/console/portals/${portalId}/edit`);
    await p.setInputFiles("#f-logo", {
      name: "logo.png",
      mimeType: "image/png",
      buffer: png(24, 16, [0, 90, 200]),
    });
    await p.click("button:has-text('Upload logo')");
    await p.waitForURL(/notice=logo-uploaded/);
    assert.match((await p.textContent(".notice")) ?? "", /logo was uploaded/);
    assert.equal(
      await p.evaluate(() => (document.querySelector("img.portal-logo") as HTMLImageElement)?.naturalWidth),
      24,
    );
    await until(
      "logo in the preview",
      () =>
        preview()
          .evaluate(() => (document.querySelector("img.logo") as HTMLImageElement | null)?.naturalWidth ?? 0)
          .catch(() => 0),
      (w) => w === 24,
    );

    await p.goto(`${server.url}/portal/${portalId}?login_url=${encodeURIComponent("http://10.8.0.1/login")}`);
    const width = await until(
      "logo on the guest page",
      () =>
        p.evaluate(() => (document.querySelector("img.logo") as HTMLImageElement | null)?.naturalWidth ?? 0),
      (w) => w > 0,
    );
    assert.equal(width, 24);
    assert.equal(await p.textContent("h1"), "Welcome to the <Hall>");
    await browser.screenshot("portal-guest-logo");
  });
});

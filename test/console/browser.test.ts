// The console in a real browser (Debian's chromium through playwright-core), against a real server
// process: first-run setup with the code from the server's log, login, API key generation (the key
// works against the API, then revocation through the UI makes it fail), a network (secret shown
// once), users, a voucher batch printed as cards, and CSRF rejection. Screenshots of the main
// pages go to SCREENSHOT_DIR, printed at the end.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { browserUnavailable, launchBrowser, SCREENSHOT_DIR, type TestBrowser } from "../support/browser.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type ServerProcess, startServerProcess } from "../support/processes.ts";

const EMAIL = "ops@example.com";
const PASSWORD = "correct horse battery staple";
const PUBLIC_URL = "https://wifi.example.org";

describe("console in a browser", { skip: browserUnavailable() ?? false }, () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: TestBrowser;
  let setupCode: string;
  const shots: string[] = [];

  const url = (path: string) => `${server.url}${path}`;
  const page = () => browser.page;
  const shot = async (name: string) => shots.push(await browser.screenshot(name));

  async function api(path: string, key: string): Promise<number> {
    const response = await fetch(url(path), { headers: { authorization: `Bearer ${key}` } });
    await response.arrayBuffer();
    return response.status;
  }

  before(async () => {
    database = await createTestDatabase("sqlite");
    // Loopback webhook receivers are refused unless WEBHOOK_ALLOW_PRIVATE=1.
    server = await startServerProcess({ ...databaseEnv(database), PUBLIC_URL, WEBHOOK_ALLOW_PRIVATE: "1" });
    const line = await server.waitForLog((l) => /^console setup code: /.test(String(l.msg)));
    assert.equal(line.level, 40, "the setup code is logged at warn level");
    setupCode = String(line.msg).replace("console setup code: ", "");
    assert.match(setupCode, /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await database?.drop();
    if (shots.length > 0) console.log(`console screenshots (${shots.length}) in ${SCREENSHOT_DIR}`);
  });

  test("first run: /console asks for the setup code, then creates the first user and logs in", async () => {
    const p = page();
    await p.goto(url("/console"));
    assert.equal(new URL(p.url()).pathname, "/console/setup");
    await shot("01-setup");
    await p.fill("#f-code", "AAAA-AAAA");
    await p.fill("#f-email", EMAIL);
    await p.fill("#f-password", PASSWORD);
    await p.fill("#f-password_confirm", PASSWORD);
    await p.click("button[type=submit]");
    assert.match((await p.textContent("#e-code")) ?? "", /does not match/);
    assert.equal(await p.inputValue("#f-email"), EMAIL, "the form keeps what was typed");
    await p.fill("#f-code", setupCode.toLowerCase());
    await p.fill("#f-password", PASSWORD);
    await p.fill("#f-password_confirm", PASSWORD);
    await p.click("button[type=submit]");
    assert.equal(new URL(p.url()).pathname, "/console");
    assert.match((await p.textContent("header")) ?? "", /ops@example\.com/);
    await shot("02-overview");
  });

  test("logout, then login with email and password", async () => {
    const p = page();
    await p.click("text=Log out");
    assert.equal(new URL(p.url()).pathname, "/console/login");
    await p.goto(url("/console/users"));
    assert.equal(new URL(p.url()).pathname, "/console/login", "pages need a session");
    await p.fill("#f-email", EMAIL);
    await p.fill("#f-password", "not the password");
    await p.click("button[type=submit]");
    assert.match((await p.textContent("[role=alert]")) ?? "", /Wrong email or password/);
    await shot("03-login");
    await p.fill("#f-password", PASSWORD);
    await p.click("button[type=submit]");
    assert.equal(new URL(p.url()).pathname, "/console/users", "back to the page asked for");
  });

  let key = "";

  test("generate an API key: shown once with a warning, and it works against the API", async () => {
    const p = page();
    await p.goto(url("/console/keys"));
    await p.fill("#f-name", "   ");
    await p.click("button:has-text('Generate key')");
    assert.match(
      (await p.textContent("#e-name")) ?? "",
      /Name must be 1-100 characters/,
      "error next to the field",
    );
    await p.fill("#f-name", "billing system");
    await p.check("input[name=access][value=custom]");
    await p.check("input[name=grant_users][value=read]");
    await p.fill("#f-rate_limit", "500");
    await p.click("button:has-text('Generate key')");
    key = (await p.textContent("#secret-value"))?.trim() ?? "";
    assert.match(key, /^wisp_[0-9A-Za-z]{40}$/);
    assert.match((await p.textContent(".warning")) ?? "", /cannot be shown again/);
    assert.ok(await p.isVisible("button.copy"), "the copy button appears with JavaScript");
    await shot("04-key-created");
    assert.equal(await api("/api/users", key), 200);
    assert.equal(await api("/api/networks", key), 403, "only users:read was granted");

    await p.goto(url("/console/keys"));
    const html = await p.content();
    assert.ok(!html.includes(key), "the list never shows the key again");
    assert.match(html, new RegExp(`wisp_…${key.slice(-4)}`), "masked with its last characters");
    assert.match((await p.textContent("table")) ?? "", /billing system[\s\S]*users:read[\s\S]*500\/min/);
    await shot("05-keys");
  });

  test("revoking the key through the UI (with a confirmation page) makes the API answer 401", async () => {
    const p = page();
    await p.goto(url("/console/keys"));
    await p.click("text=Revoke…");
    assert.match(new URL(p.url()).pathname, /^\/console\/keys\/\d+\/revoke$/);
    await shot("06-key-revoke-confirm");
    assert.equal(await api("/api/users", key), 200, "nothing changes before the confirmation");
    await p.click("button:has-text('Revoke key')");
    assert.match((await p.textContent(".notice")) ?? "", /revoked/);
    assert.equal(await api("/api/users", key), 401);
  });

  test("create a network: the secret is shown once, the network page shows RADIUS settings", async () => {
    const p = page();
    await p.goto(url("/console/networks"));
    await p.click("text=New network");
    await p.fill("#f-name", "Lobby");
    await p.fill("#f-nas_ip", "not an address");
    await p.click("button:has-text('Create network')");
    assert.ok((await p.textContent("#e-nas_ip"))?.startsWith("Address "), "error next to the address");
    await p.fill("#f-nas_ip", "192.0.2.0/24");
    await p.click("button:has-text('Create network')");
    const secret = (await p.textContent("#secret-value"))?.trim() ?? "";
    assert.match(secret, /^[A-Za-z0-9]{24}$/);
    assert.match((await p.textContent(".warning")) ?? "", /shown only this once/);
    assert.match((await p.textContent(".radius")) ?? "", /wifi\.example\.org/);
    await shot("07-network-secret");
    await p.click("text=Done");
    const html = await p.content();
    assert.ok(!html.includes(secret), "the network page never shows the secret");
    assert.match((await p.textContent(".radius")) ?? "", /shown once, at creation or rotation/);
    await shot("08-network");
  });

  test("a captive portal on the network, with its login URL under PUBLIC_URL", async () => {
    const p = page();
    await p.goto(url("/console/portals"));
    await p.click("text=New portal");
    await p.fill("#f-name", "Guest Wi-Fi");
    await p.selectOption("#f-network_id", { label: "Lobby (192.0.2.0/24)" });
    await p.fill("#f-success_url", "ftp://example.com/");
    await p.click("button:has-text('Create portal')");
    assert.match((await p.textContent("#e-success_url")) ?? "", /must be an http:\/\/ or https:\/\/ URL/);
    await p.fill("#f-success_url", "https://example.com/welcome");
    await p.click("button:has-text('Create portal')");
    assert.match((await p.textContent(".notice")) ?? "", /portal was created/);
    assert.match(
      (await p.textContent("table")) ?? "",
      /Guest Wi-Fi[\s\S]*Lobby[\s\S]*https:\/\/wifi\.example\.org\/portal\/\d+/,
    );
    await shot("09-portals");
  });

  test("users: create, edit, disable, attributes and groups", async () => {
    const p = page();
    await p.goto(url("/console/groups"));
    await p.fill("#f-name", "staff");
    await p.click("button:has-text('Create group')");
    await p.goto(url("/console/users/new"));
    await p.fill("#f-username", "alice");
    await p.fill("#f-password", "s3cret-pass");
    await p.fill("#f-fullname", "Alice <b>Liddell</b>");
    await p.click("button:has-text('Create user')");
    assert.match(new URL(p.url()).pathname, /^\/console\/users\/\d+$/);
    assert.equal(await p.locator("b").count(), 0, "names are escaped, not markup");
    await p.fill("#f-attribute", "Session-Timeout");
    await p.selectOption("#f-table", "radreply");
    await p.fill("#f-value", "not a number");
    await p.click("#attributes button:has-text('Add')");
    assert.ok(await p.isVisible("#attributes .has-error"), "the attribute error is next to its form");
    await p.fill("#f-value", "3600");
    await p.click("#attributes button:has-text('Add')");
    assert.match((await p.textContent("#attributes table")) ?? "", /Session-Timeout[\s\S]*3600/);
    await p.selectOption("#f-group_id", { label: "staff" });
    await p.click("#groups button:has-text('Add')");
    assert.match((await p.textContent("#groups table")) ?? "", /staff/);
    await p.click("button:has-text('Disable')");
    assert.match((await p.textContent("h1")) ?? "", /disabled/);
    await shot("10-user");
    await p.goto(url("/console/groups"));
    await shot("11-groups");
    await p.goto(url("/console/users?search=ali"));
    assert.match((await p.textContent("table")) ?? "", /alice/);
    await shot("12-users");
  });

  test("a voucher batch printed as a sheet of cards, and exported as CSV", async () => {
    const p = page();
    await p.goto(url("/console/vouchers"));
    await p.fill("#f-quantity", "0");
    await p.click("button:has-text('Create batch')");
    assert.match(
      (await p.textContent("#e-quantity")) ?? "",
      /How many must be a whole number from 1 to 10000/,
    );
    await p.fill("#f-quantity", "12");
    await p.fill("#f-prefix", "CAFE");
    await p.fill("#f-validity", "2");
    await p.selectOption("select[name=validity_unit]", "hours");
    await p.click("button:has-text('Create batch')");
    assert.match(new URL(p.url()).pathname, /^\/console\/vouchers\/batches\/\d+$/);
    await shot("13-batch");
    const batchPath = new URL(p.url()).pathname;
    await p.goto(url("/console/vouchers"));
    await shot("14-vouchers");
    await p.goto(url(batchPath));
    const csvUrl = `${new URL(p.url()).pathname}/csv`;
    const csv = await p.request.get(url(csvUrl));
    assert.equal(csv.status(), 200);
    assert.match(csv.headers()["content-disposition"] ?? "", /attachment/);
    const codes = (await csv.text())
      .trim()
      .split("\r\n")
      .slice(1)
      .map((row) => row.split(",")[0]!);
    assert.equal(codes.length, 12);
    assert.ok(codes.every((c) => /^CAFE[A-Z0-9]{8}$/.test(c)));

    await p.click("button:has-text('Print cards')");
    assert.match(new URL(p.url()).pathname, /\/print$/);
    const cards = await p.locator(".card-code").allTextContents();
    assert.deepEqual([...cards].sort(), [...codes].sort(), "the print page lists every code");
    assert.match((await p.textContent(".card")) ?? "", /Lobby[\s\S]*Valid for 2 hours/);
    await shot("15-vouchers-print");
    await p.emulateMedia({ media: "print" });
    assert.equal(await p.isVisible("header.top"), false, "the console's chrome is not printed");
    await shot("16-vouchers-print-media");
    await p.emulateMedia({ media: "screen" });
  });

  test("a webhook endpoint: secret shown once, a test event arrives signed, the delivery log", async () => {
    const hits: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        hits.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
        response.writeHead(200, { "content-type": "application/json" }).end('{"received":true}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/wisp`;
      const p = page();
      await p.goto(url("/console"));
      await p.click("nav >> text=Webhooks");
      await p.fill("#f-url", "not a url");
      await p.click("button:has-text('Add endpoint')");
      assert.match((await p.textContent("#e-url")) ?? "", /URL must be an absolute http/);
      await p.fill("#f-url", hookUrl);
      await p.uncheck("input[name=events][value=all]");
      await p.check("input[name=events][value='user.created']");
      await p.check("input[name=events][value='session.started']");
      await p.click("button:has-text('Add endpoint')");
      const secret = (await p.textContent("#secret-value"))?.trim() ?? "";
      assert.match(secret, /^whsec_/);
      assert.match((await p.textContent(".warning")) ?? "", /cannot be shown again/);
      await shot("19-webhook-created");
      await p.click("text=Done");
      assert.ok(!(await p.content()).includes(secret), "the endpoint page never shows the secret");
      await p.click("button:has-text('Send test event')");
      assert.match((await p.textContent(".notice")) ?? "", /test event/);
      const deadline = Date.now() + 60_000;
      while (hits.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const hit = hits[0];
      assert.ok(hit, "the test event reached the receiver");
      const body = new Webhook(secret).verify(hit.body, {
        "webhook-id": String(hit.headers["webhook-id"]),
        "webhook-timestamp": String(hit.headers["webhook-timestamp"]),
        "webhook-signature": String(hit.headers["webhook-signature"]),
      }) as { event: string };
      assert.equal(body.event, "webhook.test");
      for (let i = 0; i < 40; i++) {
        await p.reload();
        if (/succeeded/.test((await p.textContent("#deliveries")) ?? "")) break;
        await p.waitForTimeout(100);
      }
      assert.match(
        (await p.textContent("#deliveries")) ?? "",
        /webhook\.test[\s\S]*succeeded[\s\S]*HTTP 200/,
      );
      assert.match((await p.textContent("#deliveries pre")) ?? "", /"received":true/);
      await shot("20-webhook-deliveries");
      await p.goto(url("/console/webhooks"));
      assert.match((await p.textContent("table")) ?? "", /succeeded/);
      await shot("21-webhooks");
      await p.goto(url("/console"));
      assert.equal(await p.locator("svg.chart").count(), 2, "two charts on the dashboard");
      await shot("22-dashboard");
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  test("a POST without the CSRF token is rejected with 403", async () => {
    const p = page();
    await p.goto(url("/console/keys"));
    const status = await p.evaluate(async () => {
      const response = await fetch("/console/keys", {
        method: "POST",
        body: new URLSearchParams({ name: "forged", access: "full" }),
      });
      return response.status;
    });
    assert.equal(status, 403);
    const forged = await p.evaluate(async () => {
      const response = await fetch("/console/keys", {
        method: "POST",
        body: new URLSearchParams({ name: "forged", access: "full", _csrf: "x".repeat(43) }),
      });
      return response.status;
    });
    assert.equal(forged, 403);
    await p.goto(url("/console/keys"));
    assert.ok(!(await p.content()).includes("forged"), "no key was made");
  });

  test("usable on a phone", async () => {
    const p = page();
    await p.setViewportSize({ width: 390, height: 844 });
    await p.goto(url("/console/users"));
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `no sideways scrolling of the page (${overflow}px)`);
    await shot("17-users-phone");
    await p.goto(url("/console/keys"));
    await shot("18-keys-phone");
  });
});

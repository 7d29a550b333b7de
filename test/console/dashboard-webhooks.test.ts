// The console's webhooks pages and dashboard over plain HTTP (a browser without JavaScript):
// endpoints created with the secret shown once, rotate, enable/disable, test send, delivery log
// with resend, delete; CSRF on every new form; other accounts' ids answer 404; and the dashboard
// (charts as inline SVG, top access points) in under 300 ms on an account seeded with demo data.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { createDemoSeeder } from "../../src/core/reports/demo.ts";
import { ConsoleClient } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const PASSWORD = "a long enough password";
const BUDGET_MS = 300;

interface Hit {
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function startReceiver(): Promise<{ url: string; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    request.on("end", () => {
      hits.push({ headers: request.headers, body });
      response.writeHead(200, { "content-type": "text/plain" }).end("<b>thanks</b>");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("console webhooks and dashboard over HTTP (sqlite)", () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let client: ConsoleClient;
  let other: ConsoleClient;
  let otherHookId = 0;

  before(async () => {
    server = await startTestServer({ env: { WEBHOOK_ALLOW_PRIVATE: "1" } });
    receiver = await startReceiver();
    const account = await server.account("default");
    const second = await server.account("second");
    await server.core.admins.create(account, { email: "a@example.com", password: PASSWORD });
    await server.core.admins.create(second, { email: "b@example.com", password: PASSWORD });
    otherHookId = (await server.core.webhooks.create(second.id, { url: "https://second.example/h" })).webhook
      .id;
    client = new ConsoleClient(server.url);
    other = new ConsoleClient(server.url);
    assert.equal((await client.login("a@example.com", PASSWORD)).status, 303);
    assert.equal((await other.login("b@example.com", PASSWORD)).status, 303);
  });
  after(async () => {
    await server?.stop();
    await receiver?.close();
  });

  let hookId = 0;

  test("create: errors next to the fields, then the secret shown once", async () => {
    await client.get("/console/webhooks");
    const bad = await client.post("/console/webhooks", { url: "ftp://x", events: "all" });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /id="e-url">URL must be an absolute http/);
    assert.match(bad.text, /value="ftp:\/\/x"/, "the form keeps what was typed");
    const none = await client.post("/console/webhooks", { url: receiver.url, events: [] });
    assert.equal(none.status, 400);
    assert.match(none.text, /id="e-events">Events must be &quot;all&quot; or/);
    const both = await client.post("/console/webhooks", {
      url: receiver.url,
      events: ["all", "user.created"],
    });
    assert.match(both.text, /id="e-events">Events &quot;all&quot; stands alone/);
    const made = await client.post("/console/webhooks", {
      url: receiver.url,
      events: ["webhook.test", "user.created", "session.started"].slice(1),
    });
    assert.equal(made.status, 303);
    const shown = await client.get(made.location!);
    const secret = /id="secret-value"[^>]*>([^<]+)</.exec(shown.text)?.[1] ?? "";
    assert.match(secret, /^whsec_/);
    assert.match(shown.text, /cannot be shown again/);
    hookId = Number(/\/console\/webhooks\/(\d+)"/.exec(shown.text)?.[1]);
    const list = await client.get("/console/webhooks");
    assert.ok(!list.text.includes(secret), "the list never shows the secret");
    assert.match(
      list.text,
      /(user\.created, session\.started|session\.started, user\.created)<\/td>[\s\S]*none yet/,
    );
    const page = await client.get(`/console/webhooks/${hookId}`);
    assert.ok(!page.text.includes(secret));

    // The test event reaches the receiver, signed with that secret; the log shows it, escaped.
    assert.equal((await client.post(`/console/webhooks/${hookId}/test`)).status, 303);
    const hit = await until(() => receiver.hits[0]);
    const payload = new Webhook(secret).verify(hit.body, {
      "webhook-id": String(hit.headers["webhook-id"]),
      "webhook-timestamp": String(hit.headers["webhook-timestamp"]),
      "webhook-signature": String(hit.headers["webhook-signature"]),
    }) as { event: string };
    assert.equal(payload.event, "webhook.test");
    const log = await until(async () => {
      const res = await client.get(`/console/webhooks/${hookId}`);
      return /succeeded/.test(res.text) ? res : undefined;
    });
    assert.match(log.text, /webhook\.test[\s\S]*HTTP 200[\s\S]*&lt;b&gt;thanks&lt;\/b&gt;/);
    assert.ok(!log.text.includes("<b>thanks</b>"), "response excerpts are escaped");
    const deliveryId = Number(/deliveries\/(\d+)\/resend/.exec(log.text)?.[1]);
    assert.equal(
      (await client.post(`/console/webhooks/${hookId}/deliveries/${deliveryId}/resend`)).status,
      303,
    );
    await until(() => receiver.hits[1]);
    assert.equal(receiver.hits[1]?.headers["webhook-id"], hit.headers["webhook-id"], "same webhook-id");
    assert.match((await client.get("/console/webhooks")).text, /succeeded<\/span> \(HTTP 200\)/);

    // Rotate: confirm page, new secret shown once.
    assert.match((await client.get(`/console/webhooks/${hookId}/rotate`)).text, /Rotate secret/);
    const rotated = await client.post(`/console/webhooks/${hookId}/rotate`);
    assert.equal(rotated.status, 303);
    const fresh =
      /id="secret-value"[^>]*>([^<]+)</.exec((await client.get(rotated.location!)).text)?.[1] ?? "";
    assert.match(fresh, /^whsec_/);
    assert.notEqual(fresh, secret);
  });

  test("disable, enable; a disabled endpoint refuses the test send with a message", async () => {
    await client.get(`/console/webhooks/${hookId}`);
    const off = await client.post(`/console/webhooks/${hookId}/enabled`, { enabled: "0" });
    assert.equal(off.location, `/console/webhooks/${hookId}?notice=webhook-disabled`);
    const refused = await client.post(`/console/webhooks/${hookId}/test`);
    assert.equal(refused.status, 400);
    assert.match(refused.text, /is disabled; enable it first/);
    await client.post(`/console/webhooks/${hookId}/enabled`, { enabled: "1" });
    assert.match((await client.get(`/console/webhooks/${hookId}`)).text, /<dt>Enabled<\/dt><dd>yes/);
  });

  test("every new form refuses a missing or wrong CSRF token", async () => {
    await client.get("/console/webhooks");
    const posts: [string, Record<string, string>][] = [
      ["/console/webhooks", { url: receiver.url, events: "all" }],
      [`/console/webhooks/${hookId}/enabled`, { enabled: "0" }],
      [`/console/webhooks/${hookId}/test`, {}],
      [`/console/webhooks/${hookId}/rotate`, {}],
      [`/console/webhooks/${hookId}/delete`, {}],
      [`/console/webhooks/${hookId}/deliveries/1/resend`, {}],
    ];
    for (const [path, fields] of posts) {
      assert.equal((await client.post(path, fields, { csrf: null })).status, 403, path);
      assert.equal((await client.post(path, fields, { csrf: "x".repeat(43) })).status, 403, path);
    }
    assert.equal((await server.core.webhooks.list((await server.account("default")).id)).length, 1);
  });

  test("another account's endpoints and deliveries answer 404", async () => {
    for (const path of ["", "/rotate", "/delete"]) {
      assert.equal((await client.get(`/console/webhooks/${otherHookId}${path}`)).status, 404, path);
    }
    await client.get("/console/webhooks");
    for (const path of ["/enabled", "/test", "/rotate", "/delete", "/deliveries/1/resend"]) {
      assert.equal((await client.post(`/console/webhooks/${otherHookId}${path}`)).status, 404, path);
    }
    const theirs = await other.get("/console/webhooks");
    assert.ok(!theirs.text.includes(receiver.url), "each account lists its own endpoints");
    // A delivery of this account through another endpoint's path: 404 too.
    const mine = await client.get(`/console/webhooks/${hookId}`);
    const deliveryId = /deliveries\/(\d+)\/resend/.exec(mine.text)?.[1];
    await other.get("/console/webhooks");
    const res = await other.post(`/console/webhooks/${otherHookId}/deliveries/${deliveryId}/resend`);
    assert.equal(res.status, 404);
  });

  test("delete after the confirmation page", async () => {
    assert.match((await client.get(`/console/webhooks/${hookId}/delete`)).text, /Delete endpoint/);
    const gone = await client.post(`/console/webhooks/${hookId}/delete`);
    assert.equal(gone.location, "/console/webhooks?notice=webhook-deleted");
    assert.equal((await client.get(`/console/webhooks/${hookId}`)).status, 404);
  });

  test(`dashboard: charts and top access points, under ${BUDGET_MS} ms with demo data`, async () => {
    const account = await server.account("default");
    const outcome = await createDemoSeeder(server.core.database).seed(account.id, {
      users: 2000,
      days: 7,
      aps: 20,
    });
    assert.ok(outcome.seeded);
    assert.equal((await client.get("/console")).status, 200);
    const times: number[] = [];
    let html = "";
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const res = await client.get("/console");
      times.push(performance.now() - started);
      assert.equal(res.status, 200);
      html = res.text;
    }
    const best = Math.min(...times);
    console.log(
      `dashboard with ${outcome.summary.sessions} sessions: ${times.map((t) => t.toFixed(0)).join(", ")} ms`,
    );
    assert.ok(best < BUDGET_MS, `the dashboard took ${best.toFixed(0)} ms`);
    assert.match(html, /<svg class="chart"[\s\S]*<rect class="bar-accepted"/);
    assert.match(html, /<rect class="bar-sessions"/);
    assert.match(html, /<table class="chart-table">/, "a table fallback");
    const rows =
      html.match(
        /<tr><td><a href="\/console\/access-points\/[0-9a-f:]{17}"><code>[0-9a-f:]{17}<\/code><\/a><\/td>/g,
      ) ?? [];
    assert.ok(rows.length > 0, "top access points listed");
    // The other account sees none of it.
    const theirs = await other.get("/console");
    assert.match(theirs.text, /No authentications with an access point/);
    assert.ok(!/<rect class="bar-accepted"/.test(theirs.text));
  });
});

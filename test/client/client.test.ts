// @wisp/client against a live Wisp: typed calls, paging through a whole list, a voucher batch, a
// report file, 429 retried after Retry-After (on the server's rate-limit clock) and no other 4xx
// retried, a revoked key and an older server named clearly, webhook signatures checked with the
// Standard Webhooks library, and the key never printed.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  createWispClient,
  GENERATED_FROM_WISP,
  verifyWebhook,
  WispAuthError,
  WispRateLimitError,
  WispVersionError,
} from "../../client/src/index.ts";
import { generateSecret } from "../../src/core/webhooks/crypto.ts";
import { signedHeaders } from "../../src/core/webhooks/signing.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

describe("@wisp/client against a live Wisp", () => {
  let server: TestServer;
  let key: string;
  let now = Date.now();
  const printed: string[] = [];
  const consoleMethods = ["log", "info", "warn", "error", "debug"] as const;
  const originals = consoleMethods.map((m) => console[m]);

  before(async () => {
    // The rate limit counts on this clock: the client's "sleep" moves it on, as time would.
    server = await startTestServer({ clock: () => now });
    key = await server.key("default");
    for (const m of consoleMethods)
      console[m] = (...args: unknown[]) => void printed.push(args.map(String).join(" "));
  });
  after(async () => {
    consoleMethods.forEach((m, i) => {
      console[m] = originals[i]!;
    });
    await server?.stop();
  });

  test("typed calls and every item of a list, page after page", async () => {
    const wisp = createWispClient({ baseUrl: server.url, apiKey: key });
    for (let i = 1; i <= 5; i++) {
      const { data, error } = await wisp.api.POST("/api/users", { body: { username: `page-user-${i}` } });
      assert.equal(error, undefined);
      assert.equal(data?.username, `page-user-${i}`);
    }
    const names: string[] = [];
    for await (const user of wisp.all("/api/users", { query: { sort: "-username" }, pageSize: 2 }))
      names.push(user.username);
    assert.deepEqual(names, ["page-user-5", "page-user-4", "page-user-3", "page-user-2", "page-user-1"]);
    const missing = await wisp.api.GET("/api/users/{user_id}", { params: { path: { user_id: 999_999 } } });
    assert.equal(missing.response.status, 404);
    assert.match(missing.error?.message ?? "", /not found/);
  });

  test("a voucher batch, then a report file downloaded once built", async () => {
    const wisp = createWispClient({ baseUrl: server.url, apiKey: key });
    const batch = await wisp.createVoucherBatch({ quantity: 3, validity: 3600, prefix: "EVT" });
    assert.equal(batch.quantity, 3);
    assert.equal(batch.data.length, 3);
    assert.ok(batch.data.every((v) => v.code.startsWith("EVT") && v.batch_id === batch.batch_id));
    const report = await wisp.downloadReport("115", {}, { pollMs: 50 });
    assert.match(report.csv.split("\n")[0] ?? "", /username/);
    assert.match(report.csv, /page-user-3/);
    assert.match(report.filename ?? "", /\.csv$/);
  });

  test("429 is retried after Retry-After, boundedly; no other 4xx is retried", async () => {
    const limited = await server.key("default", { rateLimit: 1 });
    let requests = 0;
    const waits: number[] = [];
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const sleep = async (ms: number) => {
      waits.push(ms);
      now += ms;
    };
    const wisp = createWispClient({ baseUrl: server.url, apiKey: limited, fetch: counting, sleep });
    assert.equal((await wisp.api.GET("/api/users", {})).response.status, 200);
    const retried = await wisp.api.GET("/api/users", {});
    assert.equal(retried.response.status, 200, "the second call waited for the next window");
    assert.equal(requests, 3);
    assert.equal(waits.length, 1);
    assert.ok(waits[0]! > 0 && waits[0]! <= 60_000, `waited ${waits[0]} ms`);

    const bounded = createWispClient({
      baseUrl: server.url,
      apiKey: limited,
      fetch: counting,
      sleep: async () => {},
      maxAttempts: 3,
    });
    requests = 0;
    await assert.rejects(bounded.api.GET("/api/users", {}), (error: unknown) => {
      assert.ok(error instanceof WispRateLimitError);
      assert.match(error.message, /rate limit/);
      return true;
    });
    assert.equal(requests, 3, "three attempts, then it gives up");

    const plain = createWispClient({ baseUrl: server.url, apiKey: key, fetch: counting, sleep });
    requests = 0;
    const bad = await plain.api.GET("/api/nodes", { params: { query: { sort: "bogus" as never } } });
    assert.equal(bad.response.status, 400);
    assert.equal(requests, 1, "a 400 is not retried");
  });

  test("a revoked key is a WispAuthError saying so, without the key", async () => {
    const doomed = await server.key("default");
    const id = (await server.core.keys.list()).find((k) => doomed.endsWith(k.masked.slice(-4)))!.id;
    await server.core.keys.revoke(id);
    const wisp = createWispClient({ baseUrl: server.url, apiKey: doomed });
    await assert.rejects(wisp.api.GET("/api/account"), (error: unknown) => {
      assert.ok(error instanceof WispAuthError);
      assert.equal(error.status, 401);
      assert.match(error.message, /revoked/);
      assert.ok(!JSON.stringify({ ...error, message: error.message, stack: error.stack }).includes(doomed));
      return true;
    });
  });

  test("an older server without a route is a WispVersionError naming both versions", async () => {
    // An older Wisp in front of this one: no /api/nodes, an older Wisp-Version.
    const older: Server = createServer(async (request, response) => {
      if (request.url?.startsWith("/api/nodes")) {
        response.writeHead(404, { "content-type": "application/json", "wisp-version": "0.0.9" });
        response.end(JSON.stringify({ error: true, message: `no route GET ${request.url}`, code: 404 }));
        return;
      }
      const answer = await fetch(`${server.url}${request.url}`, {
        headers: { authorization: request.headers.authorization ?? "" },
      });
      response.writeHead(answer.status, {
        "content-type": answer.headers.get("content-type") ?? "",
        "wisp-version": "0.0.9",
      });
      response.end(await answer.text());
    });
    await new Promise<void>((resolve) => older.listen(0, "127.0.0.1", resolve));
    try {
      const wisp = createWispClient({
        baseUrl: `http://127.0.0.1:${(older.address() as AddressInfo).port}`,
        apiKey: key,
      });
      assert.equal((await wisp.api.GET("/api/account")).response.status, 200, "routes it has still work");
      await assert.rejects(wisp.api.GET("/api/nodes"), (error: unknown) => {
        assert.ok(error instanceof WispVersionError);
        assert.match(error.message, /has no GET \/api\/nodes/);
        assert.match(error.message, /Wisp 0\.0\.9/);
        assert.ok(error.message.includes(`Wisp ${GENERATED_FROM_WISP}`));
        assert.match(error.message, /upgrade the server/);
        return true;
      });
    } finally {
      await new Promise((resolve) => older.close(resolve));
    }
  });

  test("webhook signatures: Wisp's signing verified by the Standard Webhooks library; tampering refused", () => {
    const secret = generateSecret();
    const body = JSON.stringify({ type: "user.created", data: { username: "ana" } });
    const headers = signedHeaders(secret, "msg_1", Math.floor(Date.now() / 1000), body);
    assert.deepEqual(verifyWebhook(secret, body, headers), JSON.parse(body));
    assert.deepEqual(verifyWebhook(secret, body, new Headers({ ...headers })), JSON.parse(body));
    assert.throws(() => verifyWebhook(secret, body.replace("ana", "eve"), headers), /signature/i);
    assert.throws(() => verifyWebhook(generateSecret(), body, headers), /signature/i);
    const stale = signedHeaders(secret, "msg_2", Math.floor(Date.now() / 1000) - 3600, body);
    assert.throws(() => verifyWebhook(secret, body, stale), /timestamp/i);
    assert.throws(() => verifyWebhook(secret, body, { "webhook-id": "x" }), /webhook-timestamp/);
  });

  test("nothing the client did printed a key", () => {
    for (const line of printed) assert.ok(!line.includes(key) && !line.includes("Bearer"), line);
  });
});

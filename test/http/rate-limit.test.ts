// 100 requests per minute per key by default, per-key limits, 429 with Retry-After, the headers,
// and counters shared through Redis by several instances.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { Redis } from "ioredis";
import { REDIS_URL, redisUnavailable } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/** Counters use fixed one-minute windows: start a test well inside one, so it never straddles two. */
async function freshWindow(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

async function expectLimited(server: TestServer, key: string, limit: number) {
  const res = await server.call("GET", "/api/users", { key });
  assert.equal(res.status, 429);
  assert.deepEqual(Object.keys(res.body).sort(), ["code", "error", "message"]);
  assert.equal(res.body.code, 429);
  const retryAfter = Number(res.headers.get("retry-after"));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal(res.headers.get("x-ratelimit-limit"), String(limit));
  assert.equal(res.headers.get("x-ratelimit-remaining"), "0");
}

describe("rate limit in one process", () => {
  test("the default is 100 per minute per key, with the headers on every answer", async () => {
    const server = await startTestServer();
    try {
      await freshWindow();
      const key = await server.key("default");
      const other = await server.key("default");
      for (let i = 1; i <= 100; i++) {
        const res = await server.call("GET", "/api/users", { key });
        assert.equal(res.status, 200, `request ${i}`);
        assert.equal(res.headers.get("x-ratelimit-limit"), "100");
        assert.equal(res.headers.get("x-ratelimit-remaining"), String(100 - i));
        const reset = Number(res.headers.get("x-ratelimit-reset"));
        assert.ok(reset * 1000 > Date.now() && reset * 1000 <= Date.now() + 61_000);
        assert.equal(res.headers.get("ratelimit-policy"), '"default";q=100;w=60');
        assert.match(res.headers.get("ratelimit") ?? "", new RegExp(`^"default";r=${100 - i};t=\\d+$`));
      }
      await expectLimited(server, key, 100);
      // Another key has its own budget.
      assert.equal((await server.call("GET", "/api/users", { key: other })).status, 200);
    } finally {
      await server.stop();
    }
  });

  test("a key's own limit replaces the default; refused requests also count", async () => {
    const server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: "50" } });
    try {
      await freshWindow();
      const key = await server.key("default", { rateLimit: 3 });
      for (let i = 0; i < 3; i++) assert.equal((await server.call("GET", "/api/users", { key })).status, 200);
      await expectLimited(server, key, 3);
      await expectLimited(server, key, 3);
      const plain = await server.key("default");
      assert.equal(
        (await server.call("GET", "/api/users", { key: plain })).headers.get("x-ratelimit-limit"),
        "50",
      );
    } finally {
      await server.stop();
    }
  });
});

const redisSkip = (await redisUnavailable()) ?? false;

describe("rate limit shared through Redis", { skip: redisSkip }, () => {
  test("two instances count against one budget", async () => {
    const prefix = `wisp:test:${randomBytes(6).toString("hex")}:`;
    const first = await startTestServer({ env: { REDIS_URL }, redisPrefix: prefix });
    const second = await startTestServer({
      env: { REDIS_URL },
      redisPrefix: prefix,
      database: first.database,
    });
    const redis = new Redis(REDIS_URL);
    try {
      await freshWindow();
      const key = await first.key("default", { rateLimit: 4 });
      for (const server of [first, second, first, second]) {
        assert.equal((await server.call("GET", "/api/users", { key })).status, 200);
      }
      await expectLimited(second, key, 4);
      await expectLimited(first, key, 4);
      const stored = await redis.keys(`${prefix}*`);
      assert.ok(
        stored.some((name) => name.startsWith(`${prefix}key:`)),
        stored.join(","),
      );
      assert.ok((await redis.pttl(stored[0]!)) > 0, "counters expire");
    } finally {
      await second.stop();
      await first.stop();
      const stored = await redis.keys(`${prefix}*`);
      if (stored.length > 0) await redis.del(...stored);
      redis.disconnect();
    }
  });

  test("revocation through one instance is seen by the other at once", async () => {
    const first = await startTestServer({ env: { REDIS_URL } });
    const second = await startTestServer({ env: { REDIS_URL }, database: first.database });
    try {
      const key = await first.key("default");
      assert.equal((await second.call("GET", "/api/users", { key })).status, 200);
      const [row] = await first.core.keys.list();
      await first.core.keys.revoke(row!.id);
      assert.equal((await second.call("GET", "/api/users", { key })).status, 401);
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});

describe("rate limit store failure", () => {
  test("an unreachable Redis does not take the API down", async () => {
    const server = await startTestServer({ env: { REDIS_URL: "redis://127.0.0.1:1" } });
    try {
      const key = await server.key("default");
      const res = await server.call("GET", "/api/users", { key });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-ratelimit-limit"), null, "uncounted requests carry no limit headers");
    } finally {
      await server.stop();
    }
  });
});

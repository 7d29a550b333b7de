// 100 requests per minute per key by default, per-key limits, 429 with Retry-After, the headers,
// counters shared through Redis by several instances (on Redis 6.2 as on 7), never shared by two
// databases, and counted in memory while Redis is away.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { describe, test } from "node:test";
import { Redis } from "ioredis";
import { type CounterLog, REDIS_SCRIPTS, RedisCounterStore } from "../../src/http/rate-limit.ts";
import { REDIS_URL, redisUnavailable } from "../support/databases.ts";
import { RedisProxy, refusedByRedis62 } from "../support/redis-proxy.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Counters use fixed one-minute windows. The servers here count on a clock that stands 10 s into a
 * minute, so a test never straddles two windows however slow the machine.
 */
const STILL_AT = Math.floor(Date.now() / 60_000) * 60_000 + 10_000;
const clock = () => STILL_AT;

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
    const server = await startTestServer({ clock });
    try {
      const key = await server.key("default");
      const other = await server.key("default");
      for (let i = 1; i <= 100; i++) {
        const res = await server.call("GET", "/api/users", { key });
        assert.equal(res.status, 200, `request ${i}`);
        assert.equal(res.headers.get("x-ratelimit-limit"), "100");
        assert.equal(res.headers.get("x-ratelimit-remaining"), String(100 - i));
        const reset = Number(res.headers.get("x-ratelimit-reset"));
        assert.equal(reset * 1000, STILL_AT + 50_000, "the end of the clock's minute");
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
    const server = await startTestServer({ clock, env: { RATE_LIMIT_PER_MINUTE: "50" } });
    try {
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
    const first = await startTestServer({ clock, env: { REDIS_URL }, redisPrefix: prefix });
    const second = await startTestServer({
      clock,
      env: { REDIS_URL },
      redisPrefix: prefix,
      database: first.database,
    });
    const redis = new Redis(REDIS_URL);
    try {
      const key = await first.key("default", { rateLimit: 4 });
      for (const server of [first, second, first, second]) {
        assert.equal((await server.call("GET", "/api/users", { key })).status, 200);
      }
      await expectLimited(second, key, 4);
      await expectLimited(first, key, 4);
      const stored = await redis.keys(`${prefix}*`);
      assert.ok(
        // prefix, the database's deployment identity, the counter, the window
        stored.some((name) => /^[0-9a-f]{24}:key:1:\d+$/.test(name.slice(prefix.length))),
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
    const first = await startTestServer({ clock, env: { REDIS_URL } });
    const second = await startTestServer({ clock, env: { REDIS_URL }, database: first.database });
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

const redisTarget = (() => {
  const url = new URL(REDIS_URL);
  return { host: url.hostname, port: Number(url.port || 6379) };
})();

async function cleanRedis(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const stored = await redis.keys(`${prefix}*`);
    if (stored.length > 0) await redis.del(...stored);
  } finally {
    redis.disconnect();
  }
}

describe("Redis 6.2 and two databases on one Redis", { skip: redisSkip }, () => {
  test("the stand-in for Redis 6.2 refuses what 6.2 does not know, and the store's scripts pass it", () => {
    assert.match(refusedByRedis62(["PEXPIRE", "k", "1000", "NX"]) ?? "", /Redis 7/);
    assert.match(refusedByRedis62(["EVAL", "redis.call('PEXPIRE', KEYS[1], 10, 'NX')", "1", "k"]) ?? "", /7/);
    assert.match(refusedByRedis62(["FUNCTION", "LOAD", "x"]) ?? "", /Redis 7/);
    assert.equal(refusedByRedis62(["PEXPIRE", "k", "1000"]), null);
    for (const script of Object.values(REDIS_SCRIPTS))
      assert.equal(refusedByRedis62(["EVAL", script, "1", "k"]), null);
  });

  test("limits hold on a Redis that knows only 6.2's commands", async () => {
    const proxy = new RedisProxy({ target: redisTarget, asRedis62: true });
    await proxy.listen();
    const prefix = `wisp:test:${randomBytes(6).toString("hex")}:`;
    const server = await startTestServer({
      clock,
      env: { REDIS_URL: proxy.url, AUTH_FAILURE_LIMIT_PER_MINUTE: "5" },
      redisPrefix: prefix,
    });
    const redis = new Redis(REDIS_URL);
    try {
      const key = await server.key("default", { rateLimit: 3 });
      for (let i = 0; i < 3; i++) assert.equal((await server.call("GET", "/api/users", { key })).status, 200);
      await expectLimited(server, key, 3);
      const wrong = await Promise.all(
        Array.from({ length: 20 }, () =>
          server.call("GET", "/api/users", { key: `wisp_${randomBytes(20).toString("hex")}` }),
        ),
      );
      assert.deepEqual(
        wrong.map((r) => r.status).sort(),
        [...Array(5).fill(401), ...Array(15).fill(429)],
        "failed authentications are limited through Redis too",
      );
      const stored = await redis.keys(`${prefix}*`);
      assert.ok(stored.length >= 2, stored.join(","));
      for (const name of stored) assert.ok((await redis.pttl(name)) > 0, `${name} expires`);
      // The store's own commands all went through (ioredis's CLIENT SETINFO is refused by 6.2 too).
      assert.deepEqual(
        proxy.refused.filter((r) => r.command[0]?.toLowerCase() !== "client"),
        [],
        "commands Redis 6.2 refuses",
      );
      assert.ok(
        proxy.commands.some((c) => /^eval(sha)?$/i.test(c[0] ?? "")),
        "counted by a script",
      );
    } finally {
      await server.stop();
      await proxy.close();
      redis.disconnect();
      await cleanRedis(prefix);
    }
  });

  test("two databases sharing one Redis never share a counter", async () => {
    // Same prefix for both (isolated from other test runs); only the databases differ.
    const prefix = `wisp:test:${randomBytes(6).toString("hex")}:`;
    const first = await startTestServer({ clock, env: { REDIS_URL }, redisPrefix: prefix });
    const second = await startTestServer({ clock, env: { REDIS_URL }, redisPrefix: prefix });
    const redis = new Redis(REDIS_URL);
    try {
      const key = await first.key("default", { rateLimit: 2 });
      const otherKey = await second.key("default", { rateLimit: 2 });
      const [a] = await first.core.keys.list();
      const [b] = await second.core.keys.list();
      assert.equal(a!.id, b!.id, "both databases number their keys from 1");
      for (let i = 0; i < 2; i++) assert.equal((await first.call("GET", "/api/users", { key })).status, 200);
      await expectLimited(first, key, 2);
      const res = await second.call("GET", "/api/users", { key: otherKey });
      assert.equal(res.status, 200, "the other database's key with the same id has its own budget");
      assert.equal(res.headers.get("x-ratelimit-remaining"), "1");
      const identities = new Set(
        (await redis.keys(`${prefix}*`)).map((name) => name.slice(prefix.length).split(":")[0]),
      );
      assert.equal(identities.size, 2, "one deployment identity per database in the keys");
    } finally {
      await first.stop();
      await second.stop();
      redis.disconnect();
      await cleanRedis(prefix);
    }
  });

  test("instances on one database share one deployment identity", async () => {
    const first = await startTestServer({ clock, env: { REDIS_URL } });
    const second = await startTestServer({ clock, env: { REDIS_URL }, database: first.database });
    try {
      const read = async (server: TestServer) =>
        (await server.core.database.db
          .withTables<{ deployment: { identity: string } }>()
          .selectFrom("deployment")
          .select("identity")
          .execute()) as { identity: string }[];
      const rows = await read(first);
      assert.equal(rows.length, 1);
      assert.match(rows[0]!.identity, /^[0-9a-f]{24}$/);
      assert.deepEqual(await read(second), rows);
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});

/** A port on this host with nothing listening. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function logSpy() {
  const lines: { level: string; message: string }[] = [];
  const log: CounterLog = {
    warn: (_object, message) => lines.push({ level: "warn", message }),
    info: (_object, message) => lines.push({ level: "info", message }),
  };
  return { lines, log };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("rate limit store failure", () => {
  test("an unreachable Redis does not take the API down: limits hold in this process's memory", async () => {
    const server = await startTestServer({
      clock,
      env: { REDIS_URL: `redis://127.0.0.1:${await deadPort()}`, AUTH_FAILURE_LIMIT_PER_MINUTE: "2" },
    });
    try {
      const key = await server.key("default", { rateLimit: 3 });
      for (let i = 0; i < 3; i++) {
        const res = await server.call("GET", "/api/users", { key });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("x-ratelimit-remaining"), String(2 - i));
      }
      await expectLimited(server, key, 3);
      const wrong = `wisp_${"z".repeat(40)}`;
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await server.call("GET", "/api/users", { key: wrong })).status);
      assert.deepEqual(statuses, [401, 401, 429]);
    } finally {
      await server.stop();
    }
  });

  test("a Redis with nothing listening is logged once a minute, not per request", async () => {
    const { lines, log } = logSpy();
    const store = new RedisCounterStore(`redis://127.0.0.1:${await deadPort()}`, {
      identity: "test",
      log,
    });
    try {
      const counts = [];
      for (let i = 0; i < 50; i++) counts.push((await store.hit("k", 60_000)).count);
      assert.deepEqual(
        counts,
        Array.from({ length: 50 }, (_, i) => i + 1),
        "counted in memory meanwhile",
      );
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.equal(lines[0]!.level, "warn");
      assert.match(lines[0]!.message, /memory/);
    } finally {
      await store.close();
    }
    const fast = logSpy();
    const often = new RedisCounterStore(`redis://127.0.0.1:${await deadPort()}`, {
      identity: "test",
      log: fast.log,
      logEveryMs: 300,
    });
    try {
      for (let i = 0; i < 20; i++) await often.hit("k", 60_000);
      await new Promise((resolve) => setTimeout(resolve, 350));
      for (let i = 0; i < 20; i++) await often.hit("k", 60_000);
      assert.equal(fast.lines.length, 2, "once per interval");
    } finally {
      await often.close();
    }
  });

  test("Redis dropping its connections: counted in memory, logged once, shared again when it is back", {
    skip: redisSkip,
  }, async () => {
    const proxy = new RedisProxy({ target: redisTarget });
    await proxy.listen();
    const { lines, log } = logSpy();
    const identity = randomBytes(6).toString("hex");
    const prefix = "wisp:test:";
    const store = new RedisCounterStore(proxy.url, { identity, prefix, log, now: clock });
    const redis = new Redis(REDIS_URL);
    try {
      // The store's window is the clock's minute (STILL_AT), not the wall clock's, which has moved on
      // when a loaded machine took the file past a minute's end.
      const index = Math.floor(clock() / 60_000);
      const stored = `${prefix}${identity}:k:${index}`;
      for (let i = 0; i < 3; i++) await store.hit("k", 60_000);
      assert.equal(await redis.get(stored), "3", "counted in Redis");

      await proxy.close();
      const counts = [];
      for (let i = 0; i < 30; i++) counts.push((await store.hit("k", 60_000)).count);
      assert.deepEqual(counts.slice(-3), [28, 29, 30], "counted in memory while Redis is away");
      assert.equal(lines.filter((l) => l.level === "warn").length, 1, JSON.stringify(lines));

      await proxy.listen();
      await until(async () => (await store.hit("k", 60_000)) && (await redis.get(stored)) !== "3", "back");
      assert.equal(lines.filter((l) => l.level === "warn").length, 1, JSON.stringify(lines));
      assert.equal(lines.at(-1)?.level, "info");
      assert.match(lines.at(-1)!.message, /again/);
    } finally {
      await store.close();
      await proxy.close();
      await cleanRedis(`${prefix}${identity}`);
      redis.disconnect();
    }
  });
});

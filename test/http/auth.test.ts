// The key pipeline and the error shape on every path: 400/401/403/404/405/413/415/429/500, and
// the limit on failed authentications under bursts.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ValidationError } from "../../src/core/shared/errors.ts";
import { burst } from "../support/burst.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

function assertErrorShape(res: { status: number; body: unknown }, status: number) {
  const body = res.body as { error: unknown; message: unknown; code: unknown };
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(body.error, true);
  assert.equal(body.code, status);
  assert.equal(typeof body.message, "string");
  assert.ok((body.message as string).length > 0);
}

for (const { dialect, skip } of await dialects()) {
  describe(`authentication and errors on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;

    before(async () => {
      server = await startTestServer({ dialect, env: { AUTH_FAILURE_LIMIT_PER_MINUTE: "1000" } });
      key = await server.key("default", { rateLimit: 100_000 });
    });
    after(() => server?.stop());

    test("401 for a missing, malformed, unknown or revoked key, with WWW-Authenticate", async () => {
      const attempts: Record<string, string>[] = [
        {},
        { authorization: "" },
        { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` },
        { authorization: "Bearer" },
        { authorization: `Bearer ${key} extra` },
        { authorization: key },
        { authorization: "Bearer wisp_short" },
        { authorization: `Bearer wisp_${"A".repeat(40)}` },
        { authorization: `Bearer ${key.slice(0, -1)}${key.endsWith("a") ? "b" : "a"}` },
      ];
      for (const headers of attempts) {
        const res = await server.call("GET", "/api/users", { headers });
        assertErrorShape(res, 401);
        assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
      }
      assert.equal(
        (await server.call("GET", "/api/users", { headers: { authorization: `bearer ${key}` } })).status,
        200,
      );
    });

    test("revocation takes effect on the very next request", async () => {
      const doomed = await server.key("default");
      assert.equal((await server.call("GET", "/api/users", { key: doomed })).status, 200);
      const [listed] = (await server.core.keys.list()).filter(
        (k) => doomed.endsWith(k.masked.slice(-4)) && !k.revoked,
      );
      assert.ok(listed);
      await server.core.keys.revoke(listed.id);
      const res = await server.call("GET", "/api/users", { key: doomed });
      assertErrorShape(res, 401);
      assert.match(res.body.message, /revoked/);
    });

    test("last use is recorded; listings mask the key", async () => {
      const fresh = await server.key("default", { name: "last-used probe" });
      const find = async () => (await server.core.keys.list()).find((k) => k.name === "last-used probe")!;
      assert.equal((await find()).lastUsed, null);
      await server.call("GET", "/api/users", { key: fresh });
      // last_used is written after the answer, off the request's path: wait for it.
      let listed = await find();
      for (let i = 0; i < 100 && listed.lastUsed === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        listed = await find();
      }
      assert.match(listed.lastUsed ?? "", /Z$/);
      assert.equal(listed.masked, `wisp_…${fresh.slice(-4)}`);
      assert.ok(!JSON.stringify(await server.core.keys.list()).includes(fresh));
    });

    test("403 when the key lacks the permission, naming it", async () => {
      const readOnly = await server.key("default", { permissions: "read" });
      assert.equal((await server.call("GET", "/api/users", { key: readOnly })).status, 200);
      const denied = await server.call("POST", "/api/users", { key: readOnly, body: { username: "nope" } });
      assertErrorShape(denied, 403);
      assert.match(denied.body.message, /users:write/);
      const vouchersOnly = await server.key("default", { permissions: "vouchers:write" });
      assertErrorShape(await server.call("GET", "/api/users/1", { key: vouchersOnly }), 403);
      const usersWrite = await server.key("default", { permissions: "users:write" });
      assert.equal(
        (await server.call("GET", "/api/users", { key: usersWrite })).status,
        200,
        "write implies read",
      );
      const usersRead = await server.key("default", { permissions: "users:read" });
      assertErrorShape(await server.call("DELETE", "/api/users/1", { key: usersRead }), 403);
      assert.equal((await server.call("GET", "/api/users?search=nope", { key })).body.total, 0);
    });

    test("403 from an address outside the key's allow-list; X-Forwarded-For is not believed", async () => {
      const elsewhere = await server.key("default", { allowIps: "10.0.0.0/8,2001:db8::/32" });
      const res = await server.call("GET", "/api/users", {
        key: elsewhere,
        headers: { "x-forwarded-for": "10.1.2.3" },
      });
      assertErrorShape(res, 403);
      assert.match(res.body.message, /127\.0\.0\.1/);
      const local = await server.key("default", { allowIps: "192.168.0.0/16,127.0.0.1" });
      assert.equal((await server.call("GET", "/api/users", { key: local })).status, 200);
      const v6 = await server.key("default", { allowIps: "::1,127.0.0.0/8" });
      assert.equal((await server.call("GET", "/api/users", { key: v6 })).status, 200);
      const full = await server.key("default", { allowIps: "0:0:0:0:0:0:0:1, 127.0.0.1/8" });
      assert.equal((await server.call("GET", "/api/users", { key: full })).status, 200);
      // inet_aton's forms, IPv4-mapped IPv6 and zones are refused, not read as something else.
      for (const bad of [
        "127.1",
        "0x7f000001",
        "010.0.0.1",
        "::ffff:127.0.0.1",
        "::1%lo",
        "fe80::%eth0/64",
      ]) {
        await assert.rejects(
          server.key("default", { allowIps: bad }),
          (error: unknown) => error instanceof ValidationError && error.details[0]?.field === "allow_ips",
          bad,
        );
      }
    });

    test("404 for unknown routes, 405 with Allow for a wrong method", async () => {
      for (const path of ["/api/nothing", "/nothing", "/api/users/1/extra", "/api"]) {
        assertErrorShape(await server.call("GET", path, { key }), 404);
      }
      const wrong = await server.call("DELETE", "/api/users", { key });
      assertErrorShape(wrong, 405);
      assert.equal(wrong.headers.get("allow"), "GET, POST");
      const onItem = await server.call("POST", "/api/users/5", { key, body: {} });
      assertErrorShape(onItem, 405);
      assert.equal(onItem.headers.get("allow"), "GET, PUT, PATCH, DELETE");
    });

    test("413 for a body over 1 MiB, 415 for a body that is not JSON, 400 for malformed JSON", async () => {
      const big = JSON.stringify({ username: "big", fullname: "x".repeat(1024 * 1024) });
      assertErrorShape(await server.call("POST", "/api/users", { key, rawBody: big }), 413);
      for (const type of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin1",
        "application/jsonx",
      ]) {
        const res = await server.call("POST", "/api/users", {
          key,
          rawBody: '{"username":"typed"}',
          headers: { "content-type": type },
        });
        assertErrorShape(res, 415);
      }
      const untyped = await fetch(`${server.url}/api/users`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(untyped.status, 415);
      for (const rawBody of [
        "{",
        '{"username": "x",}',
        "",
        '{"username":"x"} trailing',
        '{"__proto__": {"admin": true}, "username": "p"}',
      ]) {
        assertErrorShape(await server.call("POST", "/api/users", { key, rawBody }), 400);
      }
      assert.equal((await server.call("GET", "/api/users?search=typed", { key })).body.total, 0);
      const accepted = await server.call("POST", "/api/users", {
        key,
        rawBody: '{"username":"typed"}',
        headers: { "content-type": "application/json; charset=UTF-8" },
      });
      assert.equal(accepted.status, 201);
    });

    test("/healthz and the OpenAPI document need no key; everything under /api else does", async () => {
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      const doc = await server.call("GET", "/api/openapi.json");
      assert.equal(doc.status, 200);
      assert.equal(doc.body.openapi, "3.1.0");
      assertErrorShape(await server.call("GET", "/api/users/1"), 401);
    });
  });
}

describe("failures of the server itself", () => {
  test("a crash answers 500 in the error shape without internals", async () => {
    const server = await startTestServer();
    try {
      const key = await server.key("default");
      await server.call("POST", "/api/users", { key, body: { username: "before-crash" } });
      await server.core.database.db.schema.dropTable("users").execute();
      const res = await server.call("GET", "/api/users", { key });
      assertErrorShape(res, 500);
      assert.equal(res.body.message, "internal server error");
      assert.doesNotMatch(res.text, /sqlite|users|select|stack/i);
    } finally {
      await server.stop();
    }
  });

  test("failed authentications from one address are limited (429 with Retry-After)", async () => {
    const server = await startTestServer({ env: { AUTH_FAILURE_LIMIT_PER_MINUTE: "3" } });
    try {
      const key = await server.key("default");
      for (let i = 0; i < 3; i++)
        assertErrorShape(await server.call("GET", "/api/users", { key: `wisp_${"x".repeat(40)}` }), 401);
      const limited = await server.call("GET", "/api/users", { key: `wisp_${"y".repeat(40)}` });
      assertErrorShape(limited, 429);
      assert.ok(Number(limited.headers.get("retry-after")) >= 1);
      // Others' failures at this address never refuse a valid key.
      assert.equal((await server.call("GET", "/api/users", { key })).status, 200);
      assertErrorShape(await server.call("GET", "/api/users", { key: `wisp_${"z".repeat(40)}` }), 429);
    } finally {
      await server.stop();
    }
  });

  test("behind a trusted proxy the client address comes from X-Forwarded-For", async () => {
    const server = await startTestServer({ env: { TRUSTED_PROXIES: "127.0.0.1,::1" } });
    try {
      const key = await server.key("default", { allowIps: "203.0.113.0/24" });
      const forwarded = await server.call("GET", "/api/users", {
        key,
        headers: { "x-forwarded-for": "203.0.113.9" },
      });
      assert.equal(forwarded.status, 200);
      assertErrorShape(await server.call("GET", "/api/users", { key }), 403);
      assertErrorShape(
        await server.call("GET", "/api/users", { key, headers: { "x-forwarded-for": "198.51.100.1" } }),
        403,
      );
    } finally {
      await server.stop();
    }
  });
});

const wrongKey = () => `wisp_${randomBytes(20).toString("hex")}`;

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/**
 * The failure counters' clock held in the middle of a minute: these tests count a burst, then one
 * request more, and on the wall clock a window could end between them (seen once in a full run).
 */
const clock = () => Date.UTC(2026, 0, 1, 12, 0, 30);

for (const { dialect, skip } of await dialects()) {
  describe(`failed authentications under bursts on ${dialect}`, { skip }, () => {
    test("60 wrong keys at once from one address: exactly the limit get 401, the rest 429", async () => {
      const server = await startTestServer({ dialect, clock, env: { AUTH_FAILURE_LIMIT_PER_MINUTE: "10" } });
      try {
        const answers = await burst(
          server.url,
          Array.from({ length: 60 }, () => ({
            method: "GET",
            path: "/api/users",
            headers: { authorization: `Bearer ${wrongKey()}` },
          })),
        );
        assert.deepEqual(tally(answers.map((a) => a.status)), { 401: 10, 429: 50 });
        for (const answer of answers) {
          assertErrorShape({ status: answer.status, body: JSON.parse(answer.text) }, answer.status);
          if (answer.status === 401) assert.match(answer.headers.get("www-authenticate") ?? "", /Bearer/);
          else assert.ok(Number(answer.headers.get("retry-after")) >= 1);
        }
        // No key and a malformed header are failures of the same address too.
        assertErrorShape(await server.call("GET", "/api/users"), 429);
        assertErrorShape(
          await server.call("GET", "/api/users", { headers: { authorization: "Basic eDp5" } }),
          429,
        );
      } finally {
        await server.stop();
      }
    });

    test("a valid key is never refused for other clients' failures at its address", async () => {
      const server = await startTestServer({ dialect, clock, env: { AUTH_FAILURE_LIMIT_PER_MINUTE: "3" } });
      try {
        const key = await server.key("default", { rateLimit: 1000 });
        // A careless client and a working integration behind one NAT, at the same time.
        const answers = await burst(
          server.url,
          Array.from({ length: 60 }, (_, i) => ({
            method: "GET",
            path: "/api/users",
            headers: { authorization: `Bearer ${i % 2 === 0 ? key : wrongKey()}` },
          })),
        );
        const valid = answers.filter((_, i) => i % 2 === 0).map((a) => a.status);
        const wrong = answers.filter((_, i) => i % 2 === 1).map((a) => a.status);
        assert.deepEqual(tally(valid), { 200: 30 });
        assert.deepEqual(tally(wrong), { 401: 3, 429: 27 });
        assert.equal((await server.call("GET", "/api/users", { key })).status, 200);
        assertErrorShape(await server.call("GET", "/api/users", { key: wrongKey() }), 429);
      } finally {
        await server.stop();
      }
    });
  });
}

describe("failed authentications by address", () => {
  test("IPv6 clients count by /64; other networks and valid keys are not affected", async () => {
    const server = await startTestServer({
      clock,
      env: { AUTH_FAILURE_LIMIT_PER_MINUTE: "2", TRUSTED_PROXIES: "127.0.0.1,::1" },
    });
    try {
      const key = await server.key("default");
      const from = (ip: string, k: string) =>
        server.call("GET", "/api/users", { key: k, headers: { "x-forwarded-for": ip } });
      assert.equal((await from("2001:db8:1:2::1", wrongKey())).status, 401);
      assert.equal((await from("2001:db8:1:2:aaaa:bbbb:cccc:dddd", wrongKey())).status, 401);
      assertErrorShape(await from("2001:db8:1:2::beef", wrongKey()), 429);
      assert.equal((await from("2001:db8:1:3::1", wrongKey())).status, 401, "another /64");
      assert.equal((await from("198.51.100.1", wrongKey())).status, 401, "an IPv4 client");
      assert.equal((await from("2001:db8:1:2::1", key)).status, 200, "a valid key from the limited /64");
    } finally {
      await server.stop();
    }
  });
});

// The console login limit under bursts: attempts are counted per email and address (IPv6 by /64),
// and per address alone, before the password is checked, so of any number of simultaneous wrong
// passwords exactly the limit get a check; a guesser locks out only their own address, and success
// takes its count back. The counters run on a clock the tests hold still (and move on when a test
// needs a window to end), so no test depends on where a window of the wall clock ends.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import {
  LOGIN_ADDRESS_FAILURE_LIMIT,
  LOGIN_FAILURE_LIMIT,
  LOGIN_WINDOW_MS,
} from "../../src/console/routes/auth.ts";
import { type CounterStore, MemoryCounterStore, RedisCounterStore } from "../../src/http/rate-limit.ts";
import { ConsoleClient } from "../support/browser.ts";
import { burst } from "../support/burst.ts";
import { REDIS_URL, redisUnavailable } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { forms, tally } from "./login-forms.ts";

const EMAIL = "admin@example.com";
const OTHER = "second@example.com";
const PASSWORD = "a long enough password";
/** One minute into a window of the login limits. */
const WINDOW_START = 1_900_000_000_000 - (1_900_000_000_000 % LOGIN_WINDOW_MS);

/** A clock that stands still until moved. */
function stillClock(at = WINDOW_START + 60_000) {
  const clock = { at, now: () => clock.at };
  return clock;
}

describe("console login limit", () => {
  /** Believes X-Forwarded-For from 127.0.0.1, so tests can be "from" other addresses. */
  let server: TestServer;
  let checks = 0;
  const clock = stillClock();

  before(async () => {
    server = await startTestServer({
      env: { TRUSTED_PROXIES: "127.0.0.1,::1" },
      counters: new MemoryCounterStore({ now: clock.now }),
    });
    const account = await server.account("default");
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    await server.core.admins.create(account, { email: OTHER, password: PASSWORD });
    // Counts the password checks (scrypt) the console asks for.
    const login = server.core.admins.login.bind(server.core.admins);
    server.core.admins.login = (email, password) => {
      checks++;
      return login(email, password);
    };
  });
  after(() => server?.stop());

  /** n wrong passwords for the email from the address, all arriving together. */
  async function guesses(ip: string, email: string, n: number) {
    return burst(
      server.url,
      await forms(server.url, ip, "/console/login", n, (i) => ({ email, password: `wrong ${i}` })),
    );
  }

  test("60 wrong passwords at once: exactly the limit are checked, the rest get 429", async () => {
    checks = 0;
    const answers = await guesses("203.0.113.10", EMAIL, 60);
    assert.deepEqual(tally(answers.map((a) => a.status)), {
      401: LOGIN_FAILURE_LIMIT,
      429: 60 - LOGIN_FAILURE_LIMIT,
    });
    assert.equal(checks, LOGIN_FAILURE_LIMIT, "password checks");
    for (const answer of answers.filter((a) => a.status === 429)) {
      // The clock stands one minute into the window: 14 minutes are left.
      assert.equal(answer.headers.get("retry-after"), String(14 * 60));
      assert.match(answer.text, /Too many failed attempts/);
    }

    // The right password from the guessing address waits too...
    const there = new ConsoleClient(server.url, { "x-forwarded-for": "203.0.113.10" });
    const refused = await there.login(EMAIL, PASSWORD);
    assert.equal(refused.status, 429);
    assert.equal(refused.setCookies.filter((c) => c.startsWith("wisp_session=")).length, 0);
    // ...but not from another address, and not for another user at that address.
    const elsewhere = new ConsoleClient(server.url, { "x-forwarded-for": "203.0.113.11" });
    assert.equal((await elsewhere.login(EMAIL, PASSWORD)).status, 303);
    assert.equal((await there.login(OTHER, PASSWORD)).status, 303);
    assert.equal(checks, LOGIN_FAILURE_LIMIT + 2);
  });

  test("IPv6 addresses count by /64", async () => {
    const answers = await guesses("2001:db8:5:6::1", EMAIL, LOGIN_FAILURE_LIMIT);
    assert.deepEqual(tally(answers.map((a) => a.status)), { 401: LOGIN_FAILURE_LIMIT });
    const sameNetwork = new ConsoleClient(server.url, { "x-forwarded-for": "2001:db8:5:6:ffff::2" });
    assert.equal((await sameNetwork.login(EMAIL, PASSWORD)).status, 429, "another address of the /64");
    const nextNetwork = new ConsoleClient(server.url, { "x-forwarded-for": "2001:db8:5:7::1" });
    assert.equal((await nextNetwork.login(EMAIL, PASSWORD)).status, 303, "the next /64");
  });

  test("a successful login takes its attempt back", async () => {
    const ip = "198.51.100.20";
    const answers = await guesses(ip, EMAIL, LOGIN_FAILURE_LIMIT - 1);
    assert.deepEqual(tally(answers.map((a) => a.status)), { 401: LOGIN_FAILURE_LIMIT - 1 });
    for (let i = 0; i < 3; i++) {
      const res = await new ConsoleClient(server.url, { "x-forwarded-for": ip }).login(EMAIL, PASSWORD);
      assert.equal(res.status, 303, `login ${i + 1} after ${LOGIN_FAILURE_LIMIT - 1} failures`);
    }
    const client = new ConsoleClient(server.url, { "x-forwarded-for": ip });
    assert.equal((await client.login(EMAIL, "wrong again")).status, 401, "the last failure the limit allows");
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 429);
  });

  test("when the window ends the counts start again", async () => {
    const ip = "198.51.100.30";
    await guesses(ip, EMAIL, LOGIN_FAILURE_LIMIT);
    const client = new ConsoleClient(server.url, { "x-forwarded-for": ip });
    const refused = await client.login(EMAIL, PASSWORD);
    assert.equal(refused.status, 429);
    clock.at = WINDOW_START + LOGIN_WINDOW_MS - 1000;
    assert.equal((await client.login(EMAIL, PASSWORD)).headers.get("retry-after"), "1", "the last second");
    clock.at = WINDOW_START + LOGIN_WINDOW_MS;
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 303, "a new window");
  });
});

/**
 * Failures per address whatever the emails: 20 made-up emails (one check each, as an unknown email
 * costs the same as a known one) from one /64 lock the address out for every user; elsewhere is fine.
 */
async function addressLimit(server: TestServer, network: string): Promise<void> {
  // Two bursts of ten: one address may have ten checks in progress (the password work queue).
  for (let round = 0; round < LOGIN_ADDRESS_FAILURE_LIMIT / 10; round++) {
    const requests = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        forms(server.url, `${network}::${round}:${i + 1}`, "/console/login", 1, () => ({
          email: `made-up-${round}-${i}@example.com`,
          password: "a guess",
        })),
      ),
    );
    const answers = await burst(server.url, requests.flat());
    assert.deepEqual(tally(answers.map((a) => a.status)), { 401: 10 }, `round ${round + 1}`);
  }
  const there = new ConsoleClient(server.url, { "x-forwarded-for": `${network}::ffff:1` });
  const refused = await there.login(EMAIL, PASSWORD);
  assert.equal(refused.status, 429, "the right password of a real user, from that /64");
  assert.match(refused.text, /Too many failed attempts/);
  assert.equal(refused.headers.get("retry-after"), String(14 * 60));
  const elsewhere = new ConsoleClient(server.url, { "x-forwarded-for": "2001:db8:ffff::1" });
  assert.equal((await elsewhere.login(EMAIL, PASSWORD)).status, 303, "another /64");
}

const redisSkip = (await redisUnavailable()) ?? false;

describe("console login limit per address", () => {
  const clock = stillClock();

  async function withServer(counters: CounterStore, run: (server: TestServer) => Promise<void>) {
    const server = await startTestServer({ env: { TRUSTED_PROXIES: "127.0.0.1,::1" }, counters });
    try {
      await server.core.admins.create(await server.account("default"), { email: EMAIL, password: PASSWORD });
      await run(server);
    } finally {
      await server.stop();
    }
  }

  test(`${LOGIN_ADDRESS_FAILURE_LIMIT} failures with made-up emails from one /64 lock that /64 out`, async () => {
    await withServer(new MemoryCounterStore({ now: clock.now }), (server) =>
      addressLimit(server, "2001:db8:aa:1"),
    );
  });

  test("the same through Redis", { skip: redisSkip }, async () => {
    const prefix = `wisp:test:${randomBytes(6).toString("hex")}:`;
    const store = new RedisCounterStore(REDIS_URL, { identity: "console", prefix, now: clock.now });
    const redis = new Redis(REDIS_URL);
    try {
      await withServer(store, (server) => addressLimit(server, "2001:db8:aa:2"));
      const stored = await redis.keys(`${prefix}*`);
      assert.ok(
        stored.some((key) => key.startsWith(`${prefix}console:console-login-address:2001:db8:aa:2::/64:`)),
        stored.join(", "),
      );
    } finally {
      const stored = await redis.keys(`${prefix}*`);
      if (stored.length > 0) await redis.del(...stored);
      redis.disconnect();
    }
  });
});

describe("console setup code limit", () => {
  test("60 wrong setup codes at once: exactly the limit are checked, the rest get 429", async () => {
    const server = await startTestServer({
      env: { TRUSTED_PROXIES: "127.0.0.1,::1" },
      counters: new MemoryCounterStore({ now: stillClock().now }),
    });
    try {
      const answers = await burst(
        server.url,
        await forms(server.url, "203.0.113.30", "/console/setup", 60, (i) => ({
          code: `AAAA-${String(i).padStart(4, "0")}`,
          email: EMAIL,
          password: PASSWORD,
          password_confirm: PASSWORD,
        })),
      );
      assert.deepEqual(tally(answers.map((a) => a.status)), {
        400: LOGIN_FAILURE_LIMIT,
        429: 60 - LOGIN_FAILURE_LIMIT,
      });
      assert.equal(await server.core.admins.exist(), false);
    } finally {
      await server.stop();
    }
  });
});

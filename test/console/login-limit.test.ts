// The console login limit under bursts: attempts are counted per email and address (IPv6 by /64)
// before the password is checked, so of any number of simultaneous wrong passwords exactly the
// limit get a check; a guesser locks out only their own address, and success takes its count back.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { LOGIN_FAILURE_LIMIT, LOGIN_WINDOW_MS } from "../../src/console/routes/auth.ts";
import { ConsoleClient } from "../support/browser.ts";
import { burst, type RawRequest } from "../support/burst.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * The limits count in fixed windows aligned to the clock (src/http/rate-limit.ts, windowOf): a test
 * that crossed a window's end would see its count start again, so it starts clear of one.
 */
async function clearOfWindowEnd(): Promise<void> {
  const left = LOGIN_WINDOW_MS - (Date.now() % LOGIN_WINDOW_MS);
  if (left < 60_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

const EMAIL = "admin@example.com";
const OTHER = "second@example.com";
const PASSWORD = "a long enough password";

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** n posts of the form at `path` from the address, with the cookie and CSRF token a browser has. */
async function forms(
  server: TestServer,
  ip: string,
  path: string,
  n: number,
  fields: (i: number) => Record<string, string>,
): Promise<RawRequest[]> {
  const client = new ConsoleClient(server.url, { "x-forwarded-for": ip });
  await client.get(path);
  const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  return Array.from({ length: n }, (_, i) => ({
    method: "POST",
    path,
    headers: {
      "x-forwarded-for": ip,
      cookie,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ _csrf: client.csrf, ...fields(i) }).toString(),
  }));
}

describe("console login limit", () => {
  /** Believes X-Forwarded-For from 127.0.0.1, so tests can be "from" other addresses. */
  let server: TestServer;
  let checks = 0;

  before(async () => {
    server = await startTestServer({ env: { TRUSTED_PROXIES: "127.0.0.1,::1" } });
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
      await forms(server, ip, "/console/login", n, (i) => ({ email, password: `wrong ${i}` })),
    );
  }

  test("60 wrong passwords at once: exactly the limit are checked, the rest get 429", async () => {
    await clearOfWindowEnd();
    checks = 0;
    const answers = await guesses("203.0.113.10", EMAIL, 60);
    assert.deepEqual(tally(answers.map((a) => a.status)), {
      401: LOGIN_FAILURE_LIMIT,
      429: 60 - LOGIN_FAILURE_LIMIT,
    });
    assert.equal(checks, LOGIN_FAILURE_LIMIT, "password checks");
    for (const answer of answers.filter((a) => a.status === 429)) {
      const retry = Number(answer.headers.get("retry-after"));
      assert.ok(retry >= 1 && retry <= 900, `Retry-After ${retry}`);
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
    await clearOfWindowEnd();
    const answers = await guesses("2001:db8:5:6::1", EMAIL, LOGIN_FAILURE_LIMIT);
    assert.deepEqual(tally(answers.map((a) => a.status)), { 401: LOGIN_FAILURE_LIMIT });
    const sameNetwork = new ConsoleClient(server.url, { "x-forwarded-for": "2001:db8:5:6:ffff::2" });
    assert.equal((await sameNetwork.login(EMAIL, PASSWORD)).status, 429, "another address of the /64");
    const nextNetwork = new ConsoleClient(server.url, { "x-forwarded-for": "2001:db8:5:7::1" });
    assert.equal((await nextNetwork.login(EMAIL, PASSWORD)).status, 303, "the next /64");
  });

  test("a successful login takes its attempt back", async () => {
    await clearOfWindowEnd();
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
});

describe("console setup code limit", () => {
  test("60 wrong setup codes at once: exactly the limit are checked, the rest get 429", async () => {
    await clearOfWindowEnd();
    const server = await startTestServer({ env: { TRUSTED_PROXIES: "127.0.0.1,::1" } });
    try {
      const answers = await burst(
        server.url,
        await forms(server, "203.0.113.30", "/console/setup", 60, (i) => ({
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

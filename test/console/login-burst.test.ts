// The console login under a flood of made-up emails: every check is a 128 MiB scrypt (an unknown
// email too, so timing does not tell which emails exist), so the checks in flight are bounded. A
// burst from one address leaves memory bounded and a real login from elsewhere answered soon; past
// the queue, logins get 429 with Retry-After on the login page.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { LOGIN_ADDRESS_FAILURE_LIMIT } from "../../src/console/routes/auth.ts";
import { PASSWORD_WORK_LIMITS } from "../../src/core/admins/password-work.ts";
import { ConsoleClient } from "../support/browser.ts";
import { burst, type RawResponse } from "../support/burst.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { forms, tally, watchRequests } from "./login-forms.ts";

// The real scrypt cost, whatever `npm test` asks of the other suites (src/core/admins/passwords.ts).
delete process.env.WISP_TEST_SCRYPT_LOG2N;

const EMAIL = "admin@example.com";
const PASSWORD = "a long enough password";
const MiB = 1024 * 1024;
/** What one check needs: scrypt with N = 2^17, r = 8 (src/core/admins/passwords.ts). */
const SCRYPT_MEMORY = 128 * MiB;

/** The largest RSS of this process (which runs the server) while `work` runs, sampled every 5 ms. */
async function peakRss<T>(work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, process.memoryUsage.rss()) };
  } finally {
    clearInterval(sampler);
  }
}

/** How long one real login takes on this machine now (the mean of two), in milliseconds. */
async function oneLogin(server: TestServer, ip: string): Promise<number> {
  let total = 0;
  for (let i = 0; i < 2; i++) {
    const client = new ConsoleClient(server.url, { "x-forwarded-for": ip });
    await client.get("/console/login");
    const started = performance.now();
    assert.equal((await client.post("/console/login", { email: EMAIL, password: PASSWORD })).status, 303);
    total += performance.now() - started;
  }
  return total / 2;
}

const { concurrency, queueLimit, perClient } = PASSWORD_WORK_LIMITS;

/** A 429 from the password work queue: the login form again, saying when to come back. */
function assertBusy(answer: RawResponse): void {
  assert.equal(answer.status, 429);
  const retry = Number(answer.headers.get("retry-after"));
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  assert.match(
    answer.text,
    new RegExp(`The server is busy checking other logins\\. Try again in ${retry} seconds?\\.`),
  );
  assert.match(answer.text, /name="email" [^>]*value="made-up-/, "the login form, filled in again");
}

/** n logins with made-up emails from the address, all at once. */
async function madeUp(server: TestServer, ip: string, n: number, tag: string) {
  const requests = await forms(server.url, ip, "/console/login", n, (i) => ({
    email: `made-up-${tag}-${i}@example.com`,
    password: `guess ${i}`,
  }));
  return burst(server.url, requests);
}

describe("console login under a burst of made-up emails", () => {
  /** Believes X-Forwarded-For from 127.0.0.1, so tests can be "from" other addresses. */
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ env: { TRUSTED_PROXIES: "127.0.0.1,::1" } });
    await server.core.admins.create(await server.account("default"), { email: EMAIL, password: PASSWORD });
    // The hash unknown emails are checked against is made once, at the first of them.
    const warm = new ConsoleClient(server.url, { "x-forwarded-for": "192.0.2.1" });
    assert.equal((await warm.login("nobody@example.com", "whatever it is")).status, 401);
  });
  after(() => server?.stop());

  test("40 at once from one address: memory stays bounded, a real login elsewhere is answered soon", async () => {
    const single = await oneLogin(server, "198.51.100.1");
    const attacker = "203.0.113.50";
    const requests = await forms(server.url, attacker, "/console/login", 40, (i) => ({
      email: `made-up-${i}@example.com`,
      password: `guess ${i}`,
    }));
    const user = new ConsoleClient(server.url, { "x-forwarded-for": "198.51.100.2" });
    await user.get("/console/login");
    const watch = watchRequests(server.app.server);
    const baseline = process.memoryUsage.rss();
    const { result, peak } = await peakRss(async () => {
      const flood = burst(server.url, requests);
      await watch.arrivedAtLeast(requests.length);
      const started = performance.now();
      const login = await user.post("/console/login", { email: EMAIL, password: PASSWORD });
      const took = performance.now() - started;
      return { answers: await flood, login, took };
    });
    watch.stop();
    const { answers, login, took } = result;

    assert.equal(login.status, 303, "the real login succeeds");
    const statuses = tally(answers.map((a) => a.status));
    // Answers to the flood sent before the real login's: the checks already running, and those
    // beside its own (it takes the first free slot). In arrival order it would wait for ten.
    const loginAnswered = watch.answered.findIndex((a) => a.from === "198.51.100.2");
    const checkedBefore = watch.answered
      .slice(0, loginAnswered)
      .filter((a) => a.from === attacker && a.status === 401).length;
    const growth = peak - baseline;
    console.log(
      `one login ${single.toFixed(0)} ms; during the burst ${took.toFixed(0)} ms after ${checkedBefore} ` +
        `checks of the flood; RSS +${(growth / MiB).toFixed(0)} MiB; answers ${JSON.stringify(statuses)}`,
    );
    assert.deepEqual(Object.keys(statuses).sort(), ["401", "429"], JSON.stringify(statuses));
    assert.ok(checkedBefore <= 6, `${checkedBefore} of the flood's checks were answered first`);
    // It waits for one running check, then runs beside another: about two logins' time, four when
    // the machine is busy. Before the fix it waited behind the whole flood (20 to 45 logins' time).
    assert.ok(took < Math.max(1500, 10 * single), `the real login took ${took.toFixed(0)} ms`);
    // Two checks at once hold 256 MiB; before the fix libuv's four threads held 512 MiB.
    assert.ok(growth < 3 * SCRYPT_MEMORY, `RSS grew by ${(growth / MiB).toFixed(0)} MiB`);
  });

  test(`one address has at most ${perClient} checks in progress; the rest 429, not counted as failures`, async () => {
    const ip = "203.0.113.60";
    const first = await madeUp(server, ip, 2 * perClient, "a");
    const checked = first.filter((a) => a.status === 401).length;
    // Exactly perClient unless a check ended before the whole burst was read (a stalled machine).
    assert.ok(checked >= perClient && checked <= perClient + concurrency, `${checked} checked`);
    for (const answer of first.filter((a) => a.status !== 401)) assertBusy(answer);
    // Only the checked ones count against the address's failure limit: the rest of it is still there.
    const rest = await madeUp(server, ip, LOGIN_ADDRESS_FAILURE_LIMIT - checked, "b");
    assert.deepEqual(tally(rest.map((a) => a.status)), { 401: LOGIN_ADDRESS_FAILURE_LIMIT - checked });
    const over = await new ConsoleClient(server.url, { "x-forwarded-for": ip }).login(EMAIL, PASSWORD);
    assert.equal(over.status, 429);
    assert.match(over.text, /Too many failed attempts/);
  });

  test(`past ${concurrency} running and ${queueLimit} waiting, logins get 429 with Retry-After`, async () => {
    const clients = 30;
    const requests = await Promise.all(
      Array.from({ length: clients }, (_, i) =>
        forms(server.url, `198.18.0.${i + 1}`, "/console/login", 1, () => ({
          email: `made-up-c-${i}@example.com`,
          password: "a guess",
        })),
      ),
    );
    const answers = await burst(server.url, requests.flat());
    const checked = answers.filter((a) => a.status === 401).length;
    const room = concurrency + queueLimit;
    assert.ok(checked >= room && checked <= room + concurrency, `${checked} checked`);
    for (const answer of answers.filter((a) => a.status !== 401)) assertBusy(answer);
    // The queue empties: the next login is checked.
    const after = await new ConsoleClient(server.url, { "x-forwarded-for": "198.18.1.1" }).login(
      EMAIL,
      PASSWORD,
    );
    assert.equal(after.status, 303);
  });
});

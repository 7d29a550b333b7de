// The console login under a flood of made-up emails: every check is a 128 MiB scrypt (an unknown
// email too, so timing does not tell which emails exist), so the checks in flight are bounded. A
// burst from one address leaves memory bounded and a real login from elsewhere answered soon. The
// queue's rules (per address, past the queue: 429 with Retry-After) are in login-queue.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { burst } from "../support/burst.ts";
import type { TestServer } from "../support/server.ts";
import { EMAIL, forms, PASSWORD, startLoginServer, tally, watchRequests } from "./login-forms.ts";

// The real scrypt cost, whatever `npm test` asks of the other suites (src/core/admins/passwords.ts).
delete process.env.WISP_TEST_SCRYPT_LOG2N;

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

describe("console login under a burst of made-up emails", () => {
  let server: TestServer;

  before(async () => {
    server = await startLoginServer();
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
});

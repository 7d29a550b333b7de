// The console login's password-check queue under bursts of made-up emails: one address has at most
// perClient checks in progress, the rest get 429 (not counted as failures); past the checks
// running and waiting, logins get 429 with Retry-After on the login page. The rules do not depend
// on the cost of a check as long as a check outlasts reading a burst, so this file hashes with
// scrypt N = 2^16 (64 MiB, about 0.4 s of CPU on a slow 2-core VM): the real 2^17 cost, and the
// memory it bounds, are login-burst.test.ts's.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { LOGIN_ADDRESS_FAILURE_LIMIT } from "../../src/console/routes/auth.ts";
import { PASSWORD_WORK_LIMITS } from "../../src/core/admins/password-work.ts";
import { ConsoleClient } from "../support/browser.ts";
import { burst, type RawResponse } from "../support/burst.ts";
import type { TestServer } from "../support/server.ts";
import { EMAIL, forms, PASSWORD, startLoginServer, tally } from "./login-forms.ts";

// Read at each hash (src/core/admins/passwords.ts): the admin's and the unknown emails' hashes.
process.env.WISP_TEST_SCRYPT_LOG2N = "16";

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

describe("console login's password-check queue under bursts", () => {
  let server: TestServer;

  before(async () => {
    server = await startLoginServer();
  });
  after(() => server?.stop());

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

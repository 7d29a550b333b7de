// Console password hashes at OWASP's scrypt minimum (N=2^17, r=8, p=1), and hashes made with the
// older, weaker parameters upgraded at the next successful console login (never at a failed one).
// Each N=2^17 hash takes a good part of a second: the tests make few.
import assert from "node:assert/strict";
import { randomBytes, scryptSync } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { hashPassword, needsRehash, SCRYPT_PARAMS, verifyPassword } from "../../src/core/admins/passwords.ts";
import { withAdminTables } from "../../src/core/admins/tables.ts";
import { ConsoleClient } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The real scrypt cost, whatever `npm test` asks of the other suites (src/core/admins/passwords.ts).
delete process.env.WISP_TEST_SCRYPT_LOG2N;

const PASSWORD = "an old but good password";
const CURRENT = /^scrypt\$131072\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]{86}==$/;

/** A hash as this code wrote it before: scrypt N=2^15, r=8, p=1. */
function oldHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize("NFC"), salt, 64, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 << 20 });
  return ["scrypt", 2 ** 15, 8, 1, salt.toString("base64"), key.toString("base64")].join("$");
}

describe("console password hashes", () => {
  let server: TestServer;
  const admins = () => withAdminTables(server.core.database.db);
  const storedHash = async (email: string) =>
    (
      await admins()
        .selectFrom("console_admins")
        .select("password_hash")
        .where("email", "=", email)
        .executeTakeFirstOrThrow()
    ).password_hash;

  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.stop());

  test("today's parameters are OWASP's minimum; a weaker or foreign hash needs replacing", () => {
    assert.deepEqual(SCRYPT_PARAMS, { N: 131072, r: 8, p: 1 });
    assert.equal(needsRehash(oldHash("x")), true);
    assert.equal(needsRehash(`scrypt$131072$8$1$${"A".repeat(24)}$${"B".repeat(86)}==`), false);
    assert.equal(needsRehash(`scrypt$262144$8$1$${"A".repeat(24)}$${"B".repeat(86)}==`), false, "stronger");
    assert.equal(needsRehash(`scrypt$131072$4$1$${"A".repeat(24)}$${"B".repeat(86)}==`), true);
    assert.equal(needsRehash("plain text"), true);
  });

  test("WISP_TEST_SCRYPT_LOG2N (the test suite's) lowers N for new hashes only within 2^10-2^16", async () => {
    try {
      process.env.WISP_TEST_SCRYPT_LOG2N = "10";
      assert.match(await hashPassword("x"), /^scrypt\$1024\$8\$1\$/);
      assert.equal(needsRehash(oldHash("x")), false, "2^15 is not weaker than 2^10");
      for (const outside of ["9", "17", "ten", ""]) {
        process.env.WISP_TEST_SCRYPT_LOG2N = outside;
        assert.equal(needsRehash(oldHash("x")), true, `${outside}: the real parameters`);
      }
    } finally {
      delete process.env.WISP_TEST_SCRYPT_LOG2N;
    }
    assert.match(await hashPassword("x"), CURRENT);
  });

  test("a new console user's stored hash carries today's parameters", async () => {
    const account = await server.account("default");
    await server.core.admins.create(account, { email: "new@example.com", password: PASSWORD });
    const hash = await storedHash("new@example.com");
    assert.match(hash, CURRENT);
  });

  test("an old-parameter hash: a wrong password leaves it, the right one logs in and upgrades it", async () => {
    const account = await server.account("default");
    await server.core.admins.create(account, { email: "old@example.com", password: "placeholder password" });
    const old = oldHash(PASSWORD);
    await admins()
      .updateTable("console_admins")
      .set({ password_hash: old })
      .where("email", "=", "old@example.com")
      .execute();

    const wrong = await new ConsoleClient(server.url).login("old@example.com", "not the password at all");
    assert.equal(wrong.status, 401);
    assert.equal(await storedHash("old@example.com"), old, "a wrong password does not upgrade");

    const client = new ConsoleClient(server.url);
    const right = await client.login("old@example.com", PASSWORD);
    assert.equal(right.status, 303, "the old hash still verifies");
    assert.equal((await client.get("/console")).status, 200);
    const upgraded = await storedHash("old@example.com");
    assert.match(upgraded, CURRENT);
    assert.equal(await verifyPassword(PASSWORD, upgraded), true);

    // The upgraded hash logs in as well, and is left as it is.
    assert.equal((await new ConsoleClient(server.url).login("old@example.com", PASSWORD)).status, 303);
    assert.equal(await storedHash("old@example.com"), upgraded);
  });

  test("a password reset while a login checks the old hash is not undone by the upgrade", async () => {
    const account = await server.account("default");
    await server.core.admins.create(account, { email: "race@example.com", password: "placeholder password" });
    const old = oldHash(PASSWORD);
    const repo = (server.core.admins as unknown as { repo: { findByEmail(e: string): Promise<unknown> } })
      .repo;
    const rows = admins();
    await rows
      .updateTable("console_admins")
      .set({ password_hash: old })
      .where("email", "=", "race@example.com")
      .execute();
    // The login reads the row (old hash); the reset lands before the login writes its upgrade.
    const findByEmail = repo.findByEmail.bind(repo);
    let reset: Promise<unknown> | undefined;
    repo.findByEmail = async (email: string) => {
      const row = await findByEmail(email);
      if (email === "race@example.com" && !reset) {
        reset = server.core.admins.resetPassword("race@example.com", "the new password 123");
        await reset;
      }
      return row;
    };
    try {
      assert.ok(await server.core.admins.login("race@example.com", PASSWORD), "it checked the old hash");
    } finally {
      repo.findByEmail = findByEmail;
    }
    const stored = await storedHash("race@example.com");
    assert.notEqual(stored, old);
    assert.equal(await verifyPassword("the new password 123", stored), true, "the reset stands");
  });
});

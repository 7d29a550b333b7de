// Console users in the core: scrypt hashes, the one-time setup code, and session expiry.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { hashPassword, verifyPassword } from "../../src/core/admins/passwords.ts";
import { withAdminTables } from "../../src/core/admins/tables.ts";
import { type Core, createCore } from "../../src/core/index.ts";
import { ConflictError, ValidationError } from "../../src/core/shared/errors.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";

const PASSWORD = "twelve chars or more";

describe("console users in the core", () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let core: Core;

  before(async () => {
    testDatabase = await createTestDatabase("sqlite");
    database = openDatabase({ dataDir: testDatabase.dataDir });
    await migrate(database);
    core = createCore(database, { publicUrl: "http://localhost" });
  });
  after(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  test("passwords are scrypt hashes with a random salt, verified exactly", async () => {
    const first = await hashPassword(PASSWORD);
    const second = await hashPassword(PASSWORD);
    // N as npm test asks (WISP_TEST_SCRYPT_LOG2N); the real one is checked by password-upgrade.test.ts.
    const n = process.env.WISP_TEST_SCRYPT_LOG2N ? 2 ** Number(process.env.WISP_TEST_SCRYPT_LOG2N) : 131072;
    assert.match(first, new RegExp(`^scrypt\\$${n}\\$8\\$1\\$[A-Za-z0-9+/]+=*\\$[A-Za-z0-9+/]+=*$`));
    assert.notEqual(first, second, "a new salt each time");
    assert.equal(await verifyPassword(PASSWORD, first), true);
    assert.equal(await verifyPassword(`${PASSWORD} `, first), false);
    assert.equal(await verifyPassword(PASSWORD, "plain text"), false);
    assert.equal(await verifyPassword(PASSWORD, "scrypt$x$8$1$c2FsdA==$aGFzaA=="), false);
  });

  test("the setup code is stable until used, works once, and only while no user exists", async () => {
    const code = await core.admins.issueSetupCode();
    assert.ok(code);
    assert.equal(await core.admins.issueSetupCode(), code);
    await assert.rejects(
      core.admins.setup({ code: "ABCD-EFGH", email: "first@example.com", password: PASSWORD }),
      (error) => error instanceof ValidationError && error.details[0]?.field === "code",
    );
    const attempts = await Promise.allSettled([
      core.admins.setup({ code, email: "first@example.com", password: PASSWORD }),
      core.admins.setup({ code, email: "second@example.com", password: PASSWORD }),
    ]);
    assert.equal(attempts.filter((a) => a.status === "fulfilled").length, 1, "one of two racing setups");
    assert.equal((await core.admins.list()).length, 1);
    assert.equal(await core.admins.issueSetupCode(), null);
    await assert.rejects(
      core.admins.setup({ code, email: "third@example.com", password: PASSWORD }),
      ConflictError,
    );
  });

  test("emails are unique ignoring case; a wrong password or unknown email gives no session", async () => {
    const account = await core.accounts.resolve(undefined);
    await core.admins.create(account, { email: "Case@Example.com", password: PASSWORD });
    await assert.rejects(core.admins.create(account, { email: "case@example.COM" }), ConflictError);
    assert.equal(await core.admins.login("case@example.com", "wrong password!"), null);
    assert.equal(await core.admins.login("nobody@example.com", PASSWORD), null);
    const login = await core.admins.login(" CASE@example.com ", PASSWORD);
    assert.equal(login?.session?.email, "case@example.com");
  });

  test("sessions expire when idle, are extended when used, and never outlive the absolute limit", async () => {
    const sessions = withAdminTables(database.db);
    await sessions.deleteFrom("console_sessions").execute();
    const { token } = (await core.admins.login("case@example.com", PASSWORD))!;
    const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
    const now = Date.now();

    await sessions
      .updateTable("console_sessions")
      .set({ last_seen: iso(now - 3_600_000), expires: iso(now + 60_000) })
      .execute();
    assert.ok(await core.admins.authenticate(token));
    const extended = await sessions
      .selectFrom("console_sessions")
      .select("expires")
      .executeTakeFirstOrThrow();
    assert.ok(Date.parse(extended.expires) > now + 11 * 3_600_000, "pushed to 12 hours from now");

    await sessions
      .updateTable("console_sessions")
      .set({ created: iso(now - 7 * 24 * 3_600_000 + 60_000), last_seen: iso(now - 3_600_000) })
      .execute();
    assert.ok(await core.admins.authenticate(token));
    const capped = await sessions.selectFrom("console_sessions").select("expires").executeTakeFirstOrThrow();
    assert.ok(Date.parse(capped.expires) <= now + 61_000, "not past 7 days after login");

    await sessions
      .updateTable("console_sessions")
      .set({ expires: iso(now - 1000) })
      .execute();
    assert.equal(await core.admins.authenticate(token), null);
    const left = await sessions.selectFrom("console_sessions").selectAll().execute();
    assert.equal(left.length, 0, "an expired session is deleted when seen");
    assert.equal(await core.admins.authenticate("not a token"), null);
  });
});

// `wisp demo seed` as a real process: what it makes (and says it made), once per account, with
// progress on stderr; then the seeded rows as the reports see them.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Core, createCore } from "../../src/core/index.ts";
import { createDemoSeeder } from "../../src/core/reports/demo.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, wisp } from "../support/processes.ts";

/** What createCore needs here; the RADIUS ports are off. */
const CORE_OPTIONS = { publicUrl: "http://localhost", radiusAuthPort: 0, radiusAcctPort: 0 } as Parameters<
  typeof createCore
>[1];

const count = (stdout: string, label: string) => {
  const match = new RegExp(`^  ${label} +(\\d+)  \\((\\d+) `, "m").exec(stdout);
  assert.ok(match, `${label} in:\n${stdout}`);
  return [Number(match[1]), Number(match[2])] as const;
};

for (const { dialect, skip } of await dialects()) {
  describe(`wisp demo seed on ${dialect}`, { skip }, () => {
    let testDb: TestDatabase;
    let database: Database;
    let core: Core;

    before(async () => {
      testDb = await createTestDatabase(dialect);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    test("seeds users, vouchers, attempts and sessions once, and says what it made", async () => {
      const env = databaseEnv(testDb);
      const first = await wisp(["demo", "seed", "--days", "3", "--users", "60", "--aps", "12"], env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(
        first.stdout,
        /^seeded account default with 3 days of demo data \(.* to .*\) in [\d.]+ s:/,
      );
      assert.deepEqual(count(first.stdout, "networks"), [2, 12]);
      const [users, disabled] = count(first.stdout, "users");
      assert.equal(users, 60);
      const [vouchers, used] = count(first.stdout, "vouchers");
      assert.equal(vouchers, 5);
      const [auths, rejected] = count(first.stdout, "auth requests");
      const [sessions] = count(first.stdout, "sessions");
      assert.ok(auths > 40 && sessions > 30, first.stdout);
      assert.ok(rejected > 0, "some attempts are rejected");
      assert.match(first.stderr, /demo seed: 60 users/);
      assert.match(first.stderr, /demo seed: day 3\/3: /);

      const again = await wisp(["demo", "seed"], env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /^account default already holds demo data \(seeded .*\); nothing added/);
      assert.deepEqual(count(again.stdout, "users"), [60, disabled]);

      database = openDatabase({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl });
      await migrate(database);
      core = createCore(database, CORE_OPTIONS);
      const db = database.db;
      const total = async (table: "users" | "vouchers" | "radacct" | "radpostauth" | "nas") =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as("n"))
              .executeTakeFirstOrThrow()
          ).n,
        );
      assert.equal(await total("users"), 60, "the second run added nothing");
      assert.equal(await total("vouchers"), 5);
      assert.equal(await total("radacct"), sessions);
      assert.equal(await total("radpostauth"), auths);
      assert.equal(await total("nas"), 2);
      const exhausted = await db
        .selectFrom("vouchers")
        .select("id")
        .where("status", "=", "exhausted")
        .execute();
      assert.equal(exhausted.length, used);
      assert.equal(
        Number(
          (
            await db
              .selectFrom("events")
              .select((eb) => eb.fn.countAll().as("n"))
              .executeTakeFirstOrThrow()
          ).n,
        ),
        0,
        "demo data raises no events (no webhooks)",
      );

      // What the reports make of it.
      const account = await core.accounts.resolve(undefined);
      const page = await core.reports.page(account.id, 120, {
        earliest: "-4h",
        latest: "now",
        page: 1,
        limit: 1,
      });
      assert.ok(page.total >= 0);
      const all = await core.reports.page(account.id, 110, {
        earliest: "-4h",
        latest: "now",
        page: 1,
        limit: 1000,
      });
      for (const row of all.data as { client_mac: string | null; ap_mac: string | null }[]) {
        assert.match(row.client_mac ?? "", /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
        assert.match(row.ap_mac ?? "", /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
      }
      const reasons = await db.selectFrom("radpostauth").select("reason").distinct().execute();
      const known = ["wrong password", "user disabled", "unknown user", "voucher expired", null];
      for (const { reason } of reasons) assert.ok(known.includes(reason), String(reason));
      // Roaming: some visits move between access points of one site.
      const roamed = await db
        .selectFrom("radacct")
        .select("acctterminatecause")
        .where("acctterminatecause", "=", "Lost-Carrier")
        .execute();
      assert.ok(roamed.length > 0);
      // The demo users can log in: each has a password.
      const passwords = await db.selectFrom("radcheck").select("username").execute();
      assert.equal(passwords.length, 60);
    });

    test("another account gets its own data; bad options and unknown accounts are refused", async () => {
      const env = databaseEnv(testDb);
      assert.equal((await wisp(["accounts", "create", "acme"], env)).code, 0);
      const acme = await wisp(
        ["demo", "seed", "--account", "acme", "--days", "1", "--users", "5", "--aps", "1"],
        env,
      );
      assert.equal(acme.code, 0, acme.stderr);
      assert.match(acme.stdout, /^seeded account acme with 1 days/);
      assert.deepEqual(count(acme.stdout, "networks"), [1, 1]);

      const missing = await wisp(["demo", "seed", "--account", "nope"], env);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /no account named "nope"/);
      const zero = await wisp(["demo", "seed", "--days", "0"], env);
      assert.equal(zero.code, 2);
      assert.match(zero.stderr, /must be a positive whole number/);
    });

    test("the seeder in-process: the same account twice, even at once, seeds once", async () => {
      const account = await core.accounts.create("twice");
      const seeder = createDemoSeeder(database);
      const options = { days: 1, users: 3, aps: 1 };
      const outcomes = await Promise.all([
        seeder.seed(account.id, options),
        seeder.seed(account.id, options),
      ]);
      assert.deepEqual(outcomes.map((o) => o.seeded).sort(), [false, true]);
      const other = await core.accounts.create("huge");
      await assert.rejects(seeder.seed(other.id, { days: 1, users: 1_000_000, aps: 1 }), {
        message: "users must be a whole number from 1 to 100000",
      });
      await assert.rejects(seeder.seed(other.id, { days: 367, users: 1, aps: 1 }), /days must be/);
    });
  });
}

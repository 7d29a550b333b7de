// `wisp devices ...` as operators run it: real processes on a fresh database per dialect, CSV files
// on disk. The service rules are tested in depth in test/http/devices.test.ts.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { cliDialects, createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, type ProcessResult, wisp } from "../support/processes.ts";

const run = (r: ProcessResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

for (const { dialect, skip } of await cliDialects()) {
  describe(`wisp devices CLI on ${dialect}`, { skip }, () => {
    let database: TestDatabase;
    let env: Env;
    let opened: Database;
    const cli = (args: string[], input?: string) => wisp(args, env, input);
    const count = async () =>
      Number(
        (
          await opened.db
            .selectFrom("devices")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );

    before(async () => {
      database = await createTestDatabase(dialect);
      env = databaseEnv(database);
      // The first command migrates the database and makes the default account.
      const made = await cli(["devices", "add", "AA-BB-CC-00-00-01", "--name", "printer"]);
      assert.equal(made.code, 0, run(made));
      opened = openDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl, poolSize: 2 });
    });
    after(async () => {
      await opened?.close();
      await database?.drop();
    });

    test("add canonicalises the MAC, refuses a malformed or repeated one, lists and removes", async () => {
      const [dup, bad, multicast] = await Promise.all([
        cli(["devices", "add", "aabbcc000001"]),
        cli(["devices", "add", "aa:bb:cc"]),
        cli(["devices", "add", "01:00:5e:00:00:01"]),
      ]);
      assert.notEqual(dup.code, 0);
      assert.match(dup.stderr, /a device with MAC aa:bb:cc:00:00:01 already exists/);
      assert.match(bad.stderr, /mac must be a MAC address/);
      assert.match(multicast.stderr, /multicast/);
      const listed = await cli(["devices", "list", "--json"]);
      assert.equal(listed.code, 0, run(listed));
      const rows = JSON.parse(listed.stdout);
      assert.deepEqual(
        rows.map((d: { mac: string; name: string }) => [d.mac, d.name]),
        [["aa:bb:cc:00:00:01", "printer"]],
      );
      const added = await cli(["devices", "add", "aabb.cc00.0002"]);
      assert.match(added.stdout, /added device \d+ aa:bb:cc:00:00:02/);
      const removed = await cli(["devices", "remove", "AA:BB:CC:00:00:02"]);
      assert.equal(removed.code, 0, run(removed));
      assert.equal(await count(), 1);
    });

    test("import: all or nothing, every refused row named with its line and reason", async () => {
      const file = join(database.dataDir, "bad.csv");
      writeFileSync(
        file,
        [
          "mac,name,username,group",
          "02:00:00:00:00:01,ok one,,",
          "02-00-00-00-00-02,ok two,,",
          "not-a-mac,bad,,",
          "02:00:00:00:00:01,repeat,,",
          "aa:bb:cc:00:00:01,exists,,",
          "02:00:00:00:00:03,owner,nobody,",
          '02:00:00:00:00:04,"quoted, with comma",,nogroup',
          "02:00:00:00:00:05,short",
        ].join("\r\n"),
      );
      const result = await cli(["devices", "import", file]);
      assert.equal(result.code, 1, run(result));
      const lines = result.stderr.split("\n");
      for (const expected of [
        /^line 4: mac must be a MAC address/,
        /^line 5: MAC 02:00:00:00:00:01 repeats line 2/,
        /^line 6: MAC aa:bb:cc:00:00:01 is already a device of this account/,
        /^line 7: no user "nobody" in this account/,
        /^line 8: no group "nogroup" in this account/,
        /^line 9: has 2 fields; the header has 4/,
      ]) {
        assert.ok(
          lines.some((l) => expected.test(l)),
          `${expected} in\n${result.stderr}`,
        );
      }
      assert.match(result.stderr, /nothing was imported/);
      assert.equal(await count(), 1, "nothing half-imported");
    });

    test("import then export round-trips, owners and groups by name; from stdin into another account", async () => {
      await opened.db
        .insertInto("users")
        .values({
          account_id: 1,
          username: "alice",
          email: "",
          fullname: "",
          status: "enabled",
          created: "2026-01-01T00:00:00Z",
          updated: "2026-01-01T00:00:00Z",
        })
        .execute();
      await opened.db
        .insertInto("groups")
        .values({
          account_id: 1,
          name: "printers",
          description: "",
          created: "2026-01-01T00:00:00Z",
          updated: "2026-01-01T00:00:00Z",
        })
        .execute();
      const file = join(database.dataDir, "good.csv");
      writeFileSync(
        file,
        "\uFEFFmac,name,description,status,username,group,expires\n" +
          "02:00:00:00:01:01,Alice's phone,,enabled,ALICE,,\n" +
          '02:00:00:00:01:02,"=SUM(A1)","two, ""words""",disabled,,printers,2031-05-06\n',
      );
      const imported = await cli(["devices", "import", file]);
      assert.equal(imported.code, 0, run(imported));
      assert.match(imported.stdout, /imported 2 devices/);
      const exported = await cli(["devices", "export"]);
      assert.equal(exported.code, 0, run(exported));
      const csv = exported.stdout;
      assert.match(csv, /^mac,name,description,status,username,voucher,group,expires\r\n/);
      assert.match(csv, /02:00:00:00:01:01,Alice's phone,,enabled,alice,,,\r\n/);
      assert.match(
        csv,
        /02:00:00:00:01:02,'=SUM\(A1\),"two, ""words""",disabled,,,printers,2031-05-06T00:00:00Z\r\n/,
      );
      // The same file into another account (owners by name must exist there: drop that column).
      await opened.db
        .insertInto("accounts")
        .values({ name: "other", created: "2026-01-01T00:00:00Z" })
        .execute();
      const withoutOwners = csv.replace(/,alice,/, ",,");
      const again = await cli(
        ["devices", "import", "-", "--account", "other"],
        withoutOwners.replace(/,printers,/, ",,"),
      );
      assert.equal(again.code, 0, run(again));
      assert.match(again.stdout, /imported 3 devices into account other/);
      const theirs = await opened.db
        .selectFrom("devices")
        .select(["mac", "name"])
        .where("account_id", "=", 2)
        .orderBy("mac")
        .execute();
      assert.deepEqual(
        theirs.map((d) => d.name),
        ["Alice's phone", "=SUM(A1)", "printer"],
      );
    });

    test("export --output writes a file", async () => {
      const file = join(database.dataDir, "out.csv");
      const result = await cli(["devices", "export", "--output", file]);
      assert.equal(result.code, 0, run(result));
      assert.equal(readFileSync(file, "utf8").split("\r\n").length, 5);
    });
  });
}

// The `wisp` command line as operators run it: real processes on a fresh database per dialect.
// Tests in one describe share that database and run in order (the keys made early are listed later).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createTestDatabase, dialects, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, npm, type ProcessResult, wisp } from "../support/processes.ts";

const KEY = /^wisp_[0-9A-Za-z]{40}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/** Parses printTable output: a header line, then rows; columns are at least two spaces apart. */
function table(stdout: string): Record<string, string>[] {
  const [header, ...rows] = stdout.trimEnd().split("\n");
  assert.ok(header, "a table starts with a header line");
  const columns = header.split(/ {2,}/);
  return rows.map((row) => {
    const cells = row.split(/ {2,}/);
    assert.equal(cells.length, columns.length, `row "${row}" has ${columns.length} cells`);
    return Object.fromEntries(columns.map((column, i) => [column, cells[i] ?? ""]));
  });
}

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

function assertSucceeded(result: ProcessResult): void {
  assert.equal(result.code, 0, describeRun(result));
}

/** A non-zero exit, nothing on stdout, and stderr matching the message. */
function assertFailed(result: ProcessResult, message: RegExp): void {
  assert.notEqual(result.code, 0, describeRun(result));
  assert.equal(result.signal, null, describeRun(result));
  assert.equal(result.stdout, "", describeRun(result));
  assert.match(result.stderr, message, describeRun(result));
}

/** The key alone on stdout: exactly one line, nothing else. */
function assertKeyOnly(result: ProcessResult): string {
  assertSucceeded(result);
  const lines = result.stdout.split("\n");
  assert.equal(lines.length, 2, `one line and its newline on stdout: ${JSON.stringify(result.stdout)}`);
  assert.equal(lines[1], "");
  const key = lines[0]!;
  assert.match(key, KEY);
  assert.ok(!result.stderr.includes(key), "the key is printed once, on stdout only");
  return key;
}

for (const { dialect, skip } of await dialects()) {
  describe(`wisp CLI on ${dialect}`, { skip }, () => {
    let database: TestDatabase;
    let env: Env;
    const cli = (...args: string[]) => wisp(args, env);
    /** Keys made by the tests below, in creation order: their ids are 1, 2, 3, ... */
    const keys: { key: string; name: string; account: string }[] = [];

    before(async () => {
      database = await createTestDatabase(dialect);
      env = databaseEnv(database);
    });
    after(() => database?.drop());

    test("accounts create, list; duplicates and bad names fail with a message", async () => {
      const created = await cli("accounts", "create", "acme");
      assertSucceeded(created);
      assert.match(created.stdout, /^created account acme \(id \d+\)\n$/);

      // Neither writes, so they may run side by side.
      const [again, bad] = await Promise.all([
        cli("accounts", "create", "acme"),
        cli("accounts", "create", "bad name!"),
      ]);
      assertFailed(again, /^wisp: account "acme" already exists\n$/);
      assertFailed(bad, /^wisp: name must be 1-64 characters/);

      const list = await cli("accounts", "list");
      assertSucceeded(list);
      assert.equal(list.stderr, "");
      const rows = table(list.stdout);
      assert.deepEqual(
        rows.map((r) => r.NAME),
        ["acme"],
        "one acme, no bad name, and no default account before a key needs it",
      );
      assert.match(rows[0]!.ID!, /^\d+$/);
      assert.match(rows[0]!.CREATED!, ISO);
    });

    test("keys create prints the key alone on stdout; the default account is made on first use", async () => {
      const plain = await cli("keys", "create", "--name", "plain");
      const key = assertKeyOnly(plain);
      assert.match(
        plain.stderr,
        /^created API key 1 "plain" for account default; store it now, it is not shown again\n$/,
      );
      keys.push({ key, name: "plain", account: "default" });

      const list = await cli("accounts", "list");
      assertSucceeded(list);
      assert.deepEqual(
        table(list.stdout).map((r) => r.NAME),
        ["acme", "default"],
      );
    });

    test("keys create with --account, --permissions, --allow-ip and --rate-limit", async () => {
      const scoped = await cli(
        "keys",
        "create",
        "--name",
        "scoped",
        "--account",
        "acme",
        "--permissions",
        "users:read,vouchers:write",
        "--allow-ip",
        "10.0.0.0/8,::1",
        "--rate-limit",
        "50",
      );
      keys.push({ key: assertKeyOnly(scoped), name: "scoped", account: "acme" });
      assert.match(scoped.stderr, /^created API key 2 "scoped" for account acme;/);

      const reader = await cli("keys", "create", "--name", "reader", "--permissions", "read");
      keys.push({ key: assertKeyOnly(reader), name: "reader", account: "default" });
      assert.match(reader.stderr, /^created API key 3 "reader" for account default;/);
      // The stored options are checked in the `keys list` test below.
    });

    test("the README form `npm run -s wisp -- keys create --name x` prints one line: the key", async () => {
      const result = await npm(["run", "-s", "wisp", "--", "keys", "create", "--name", "x"], env);
      assert.equal(result.code, 0, describeRun(result));
      assert.match(result.stdout, /^wisp_[0-9A-Za-z]{40}\n$/, describeRun(result));
      keys.push({ key: result.stdout.trim(), name: "x", account: "default" });
    });

    test("keys create refuses bad options, names the problem, prints nothing on stdout, stores nothing", async () => {
      // None of them writes (the default account exists by now), so they may run side by side.
      const [nope, bogus, prefix, zero, word, unnamed] = await Promise.all([
        cli("keys", "create", "--name", "n", "--account", "nope"),
        cli("keys", "create", "--name", "n", "--permissions", "bogus"),
        cli("keys", "create", "--name", "n", "--allow-ip", "10.0.0.0/33"),
        cli("keys", "create", "--name", "n", "--rate-limit", "0"),
        cli("keys", "create", "--name", "n", "--rate-limit", "abc"),
        cli("keys", "create"),
      ]);
      assertFailed(nope, /^wisp: no account named "nope"\n$/);
      assertFailed(bogus, /unknown permission "bogus"/);
      assertFailed(prefix, /"10\.0\.0\.0\/33" has an invalid prefix length/);
      assertFailed(zero, /--rate-limit.*'0' is invalid/);
      assertFailed(word, /--rate-limit.*'abc' is invalid/);
      assertFailed(unnamed, /required option '--name <label>' not specified/);
      // That none of them stored a key is checked in the `keys list` test below.
    });

    test("keys revoke: once, not twice, not an unknown id, not a word", async () => {
      const revoked = await cli("keys", "revoke", "3");
      assertSucceeded(revoked);
      assert.equal(revoked.stdout, "revoked API key 3\n");

      const [twice, unknown, word] = await Promise.all([
        cli("keys", "revoke", "3"),
        cli("keys", "revoke", "9999"),
        cli("keys", "revoke", "abc"),
      ]);
      assertFailed(twice, /^wisp: API key 3 was already revoked on \d{4}-\d\d-\d\dT[\d:]+Z\n$/);
      assertFailed(unknown, /^wisp: no API key with id 9999\n$/);
      assertFailed(word, /'abc' is invalid for argument 'key-id'/);
    });

    test("keys list shows masked keys with created, last used and revoked; never a full key", async () => {
      const list = await cli("keys", "list");
      assertSucceeded(list);
      assert.match(
        list.stdout.split("\n")[0]!,
        /^ID +ACCOUNT +NAME +KEY +PERMISSIONS +ALLOW-IP +RATE +CREATED +LAST USED +REVOKED$/,
      );
      for (const { key } of keys) {
        assert.ok(!list.stdout.includes(key), "no full key in the listing");
        assert.ok(!list.stdout.includes(key.slice(5)), "no full key body in the listing");
      }
      const rows = table(list.stdout);
      assert.deepEqual(
        rows.map((r) => r.NAME),
        keys.map((k) => k.name),
        "exactly the keys made above; none from a failed command",
      );
      assert.deepEqual(
        rows.map((r) => [r.ACCOUNT, r.PERMISSIONS, r["ALLOW-IP"], r.RATE]),
        [
          ["default", "full", "-", "-"],
          ["acme", "users:read,vouchers:write", "10.0.0.0/8,::1/128", "50"],
          ["default", "read", "-", "-"],
          ["default", "full", "-", "-"],
        ],
      );
      rows.forEach((row, i) => {
        const made = keys[i]!;
        assert.equal(row.ID, String(i + 1));
        assert.equal(row.NAME, made.name);
        assert.equal(row.ACCOUNT, made.account);
        assert.equal(row.KEY, `wisp_…${made.key.slice(-4)}`);
        assert.match(row.CREATED!, ISO);
        assert.equal(row["LAST USED"], "-", "no key has been used yet");
        if (row.ID === "3") assert.match(row.REVOKED!, ISO);
        else assert.equal(row.REVOKED, "-");
      });
    });

    test("an unknown command and no command at all print usage on stderr and exit non-zero", async () => {
      const [unknown, bare] = await Promise.all([cli("bogus"), cli()]);
      assertFailed(unknown, /unknown command 'bogus'[\s\S]*Usage: wisp/);
      assertFailed(bare, /Usage: wisp/);
      assert.match(bare.stderr, /accounts/);
      assert.match(bare.stderr, /keys/);
    });
  });
}

// `wisp certs ...` as operators run it: real processes on one SQLite database (the service behind
// them is tested on both databases in test/core/certs.test.ts), their files checked with openssl.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase, type TestDatabase, tempDir } from "../support/databases.ts";
import { openssl, opensslMissing } from "../support/openssl.ts";
import { databaseEnv, type Env, type ProcessResult, wisp } from "../support/processes.ts";

const PASSWORD = "p12 secret phrase";

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

function failed(result: ProcessResult, message: RegExp): void {
  assert.notEqual(result.code, 0, describeRun(result));
  assert.equal(result.stdout, "", describeRun(result));
  assert.match(result.stderr, message, describeRun(result));
}

describe("wisp certs", { skip: opensslMissing ?? false }, () => {
  let database: TestDatabase;
  let opened: Database;
  let env: Env;
  let dir: string;
  const cli = (args: string[], input?: string) => wisp(args, env, input);

  before(async () => {
    database = await createTestDatabase("sqlite");
    env = { ...databaseEnv(database), PUBLIC_URL: "https://wifi.example.org" };
    dir = tempDir("certs-cli");
    // Users are made in-process (there is no users command), on the database the commands open.
    opened = openDatabase({ dataDir: database.dataDir });
    await migrate(opened);
    const core = createCore(opened, { publicUrl: "https://wifi.example.org", dataDir: database.dataDir });
    const account = await core.accounts.resolve(undefined);
    await core.users.create(account.id, { username: "alice", password: "pw" });
    await core.users.create(account.id, { username: "bob", password: "pw" });
  });

  after(async () => {
    await opened?.close();
    await database?.drop();
  });

  test("certs ca prints the PEM on stdout and the fingerprint openssl computes", async () => {
    const pem = await cli(["certs", "ca"]);
    assert.equal(pem.code, 0, describeRun(pem));
    assert.equal(
      pem.database,
      path.join(database.dataDir, "wisp.db"),
      "names the database: it makes the CA on first use",
    );
    const cert = new X509Certificate(pem.stdout);
    assert.equal(pem.stdout, cert.toString());
    const expected = await openssl(["x509", "-noout", "-fingerprint", "-sha256"], pem.stdout);
    const fingerprint = /=([0-9A-F:]+)/.exec(expected.stdout)![1]!;
    assert.match(pem.stderr, new RegExp(`SHA-256 fingerprint ${fingerprint}\\n`));

    const derFile = path.join(dir, "ca.der");
    const [der, noOut] = await Promise.all([
      cli(["certs", "ca", "--der", "--out", derFile]),
      cli(["certs", "ca", "--der"]),
    ]);
    assert.equal(der.code, 0, describeRun(der));
    assert.equal(der.stdout, "");
    assert.deepEqual(fs.readFileSync(derFile), cert.raw);
    failed(noOut, /--der writes binary: give --out <file> too/);
    failed(await cli(["certs", "ca", "--out", derFile]), /ca\.der already exists/);
  });

  test("certs issue writes a new 0600 PKCS#12 file that opens with the password from stdin", async () => {
    const out = path.join(dir, "alice.p12");
    const issued = await cli(["certs", "issue", "alice", "--days", "10", "--out", out], `${PASSWORD}\n`);
    assert.equal(issued.code, 0, describeRun(issued));
    const serial = issued.stdout.trim();
    assert.match(serial, /^[0-9a-f]{32}$/);
    assert.match(issued.stderr, new RegExp(`issued certificate ${serial} for alice \\(account default\\)`));
    assert.equal(fs.statSync(out).mode & 0o777, 0o600);
    // The one trailing newline is not part of the password.
    const info = await openssl(["pkcs12", "-info", "-nokeys", "-in", out, "-passin", `pass:${PASSWORD}`]);
    assert.equal(info.code, 0, info.stderr);
    const client = new X509Certificate(
      /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/.exec(info.stdout)![0],
    );
    assert.equal(client.subject, "CN=alice");
    assert.deepEqual(client.keyUsage, ["1.3.6.1.5.5.7.3.2"]);
    assert.equal(client.serialNumber.toLowerCase(), serial);

    const before = fs.readFileSync(out);
    const [again, empty, nobody] = await Promise.all([
      cli(["certs", "issue", "alice", "--out", out], `${PASSWORD}\n`),
      cli(["certs", "issue", "alice", "--out", path.join(dir, "empty.p12")], ""),
      cli(["certs", "issue", "carol", "--out", path.join(dir, "carol.p12")], `${PASSWORD}\n`),
    ]);
    failed(again, /alice\.p12 already exists/);
    assert.deepEqual(fs.readFileSync(out), before, "not replaced");
    failed(empty, /password is read from standard input, which was empty/);
    failed(nobody, /no user named "carol"/);
    assert.deepEqual(fs.readdirSync(dir).sort(), ["alice.p12", "ca.der"], "no other file, no temporary left");

    const list = await cli(["certs", "list", "--json"]);
    assert.equal(list.code, 0, describeRun(list));
    assert.equal(list.database, undefined, "a read-only command");
    const rows = JSON.parse(list.stdout) as { serial: string; username: string; status: string }[];
    assert.deepEqual(
      rows.map((r) => [r.serial, r.username, r.status]),
      [[serial, "alice", "valid"]],
    );

    const [bobs, table] = await Promise.all([
      cli(["certs", "list", "--user", "bob"]),
      cli(["certs", "list"]),
    ]);
    assert.equal(bobs.stdout, "SERIAL  USER  STATUS  NOT BEFORE  NOT AFTER  REVOKED\n");
    assert.match(table.stdout, new RegExp(`^${serial}  alice  valid  `, "m"));
    const revoke = await cli(["certs", "revoke", serial.replace(/(..)(?!$)/g, "$1:").toUpperCase()]);
    assert.equal(revoke.code, 0, describeRun(revoke));
    assert.match(revoke.stdout, new RegExp(`^revoked certificate ${serial} of alice \\(since `));
    const [revoked, unknown] = await Promise.all([
      cli(["certs", "list", "--json", "--user", "alice"]),
      cli(["certs", "revoke", "abcdef"]),
    ]);
    assert.equal(JSON.parse(revoked.stdout)[0].status, "revoked");
    failed(unknown, /no client certificate with serial abcdef/);
  });
});

// `wisp networks radsec ...` and RadSec-only networks as operators run them: real processes on one
// SQLite database; the files they write are opened with openssl.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { EKU_CLIENT_AUTH } from "../../src/core/certs/pem.ts";
import { createAuthority } from "../../src/core/certs/x509.ts";
import { createTestDatabase, type TestDatabase, tempDir } from "../support/databases.ts";
import { openssl, opensslMissing, writeFile } from "../support/openssl.ts";
import { databaseEnv, type Env, type ProcessResult, wisp } from "../support/processes.ts";

const PASSWORD = "nas file password";

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

function ok(result: ProcessResult): ProcessResult {
  assert.equal(result.code, 0, describeRun(result));
  return result;
}

function failed(result: ProcessResult, message: RegExp): void {
  assert.notEqual(result.code, 0, describeRun(result));
  assert.match(result.stderr, message, describeRun(result));
}

describe("wisp networks radsec", { skip: opensslMissing ?? false }, () => {
  let database: TestDatabase;
  let env: Env;
  let dir: string;
  let site: number;
  let theirs: number;
  const cli = (args: string[], input?: string) => wisp(args, env, input);

  before(async () => {
    database = await createTestDatabase("sqlite");
    env = databaseEnv(database);
    dir = tempDir("radsec-cli");
    const created = ok(await cli(["networks", "create", "--name", "Behind NAT", "--radsec-only"]));
    assert.match(created.stderr, /created network \d+ "Behind NAT" \(RadSec only\)/);
    site = Number(/created network (\d+)/.exec(created.stderr)![1]);
    ok(await cli(["accounts", "create", "other"]));
    const other = ok(
      await cli(["networks", "create", "--name", "Theirs", "--radsec-only", "--account", "other"]),
    );
    theirs = Number(/created network (\d+)/.exec(other.stderr)![1]);
  });
  after(() => database?.drop());

  test("create needs --nas-ip or --radsec-only; list and show name the transport", async () => {
    const [neither, both, list] = await Promise.all([
      cli(["networks", "create", "--name", "x"]),
      cli(["networks", "create", "--name", "x", "--nas-ip", "192.0.2.1", "--radsec-only"]),
      cli(["networks", "list", "--json"]),
    ]);
    failed(neither, /give --nas-ip <ip\|cidr>, or --radsec-only/);
    failed(both, /not both/);
    const rows = JSON.parse(ok(list).stdout) as { id: number; nas_ip: string; transport: string }[];
    assert.deepEqual(
      rows.map((r) => [r.id, r.nas_ip, r.transport]),
      [
        [site, "", "radsec"],
        [theirs, "", "radsec"],
      ],
    );
  });

  test("issue writes a 0600 PKCS#12 or PEM file openssl verifies; show lists it; revoke", async () => {
    const p12 = path.join(dir, "nas.p12");
    const pem = path.join(dir, "nas.pem");
    const [first, second, empty, foreign] = await Promise.all([
      cli(["networks", "radsec", "issue", String(site), "--out", p12, "--days", "20"], `${PASSWORD}\n`),
      cli(["networks", "radsec", "issue", String(site), "--out", pem, "--format", "pem"], `${PASSWORD}\n`),
      cli(["networks", "radsec", "issue", String(site), "--out", path.join(dir, "x.p12")], ""),
      cli(
        [
          "networks",
          "radsec",
          "issue",
          String(theirs),
          "--out",
          path.join(dir, "y.p12"),
          "--account",
          "default",
        ],
        `${PASSWORD}\n`,
      ),
    ]);
    const serial = ok(first).stdout.trim();
    ok(second);
    assert.match(serial, /^[0-9a-f]{32}$/);
    assert.equal(fs.statSync(p12).mode & 0o777, 0o600);
    assert.equal(fs.statSync(pem).mode & 0o777, 0o600);
    failed(empty, /password is read from standard input, which was empty/);
    failed(foreign, /belongs to another account/);
    assert.deepEqual(fs.readdirSync(dir).sort(), ["nas.p12", "nas.pem"], "no other file, no temporary left");

    const info = await openssl(["pkcs12", "-in", p12, "-passin", `pass:${PASSWORD}`, "-nodes"]);
    assert.equal(info.code, 0, info.stderr);
    const certs = [...info.stdout.matchAll(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g)].map(
      (m) => new X509Certificate(m[0]),
    );
    const leaf = certs.find((c) => !c.ca)!;
    const ca = certs.find((c) => c.ca)!;
    assert.equal(leaf.serialNumber.toLowerCase(), serial);
    assert.deepEqual(leaf.keyUsage, [EKU_CLIENT_AUTH]);
    assert.equal(ca.subject, "CN=Wisp RadSec client CA");
    const caFile = writeFile(dir, "..radsec-ca.pem", ca.toString());
    const verified = await openssl(["verify", "-CAfile", caFile, "-purpose", "sslclient", pem]);
    assert.equal(verified.code, 0, verified.stderr);
    const key = await openssl(["pkey", "-in", pem, "-passin", `pass:${PASSWORD}`, "-noout"]);
    assert.equal(key.code, 0, key.stderr);
    assert.notEqual((await openssl(["pkey", "-in", pem, "-passin", "pass:wrong", "-noout"])).code, 0);
    fs.rmSync(caFile);

    const shown = ok(await cli(["networks", "radsec", "show", String(site), "--json"]));
    assert.equal(shown.database, undefined, "a read-only command");
    const settings = JSON.parse(shown.stdout);
    assert.equal(settings.transport, "radsec");
    assert.equal(settings.certificates.length, 2);
    assert.ok(settings.certificates.some((c: { serial: string }) => c.serial === serial));
    const revoked = ok(await cli(["networks", "radsec", "revoke", String(site), serial.toUpperCase()]));
    assert.match(revoked.stdout, new RegExp(`^revoked RadSec certificate ${serial} of network ${site}`));
    const table = ok(await cli(["networks", "radsec", "show", String(site)]));
    assert.match(table.stdout, new RegExp(`^${serial}  revoked  `, "m"));
    failed(
      await cli(["networks", "radsec", "revoke", String(site), "abcdef"]),
      /no RadSec certificate with serial abcdef/,
    );
  });

  test("trust uploads an outside CA with its rule; bad files are refused; untrust removes it", async () => {
    const outside = await createAuthority("Org RadSec CA", 365);
    const caFile = writeFile(dir, "org-ca.pem", outside.cert);
    const keyFile = writeFile(dir, "org-ca-with-key.pem", `${outside.cert}${outside.key}`);
    const [good, withKey, missing, badField] = await Promise.all([
      cli([
        "networks",
        "radsec",
        "trust",
        String(site),
        "--ca",
        caFile,
        "--match",
        "dns",
        "--pattern",
        "*.site.example",
        "--pattern",
        "spare.example",
      ]),
      cli(["networks", "radsec", "trust", String(site), "--ca", keyFile, "--match", "cn", "--pattern", "*"]),
      cli([
        "networks",
        "radsec",
        "trust",
        String(site),
        "--ca",
        path.join(dir, "none.pem"),
        "--match",
        "cn",
        "--pattern",
        "*",
      ]),
      cli(["networks", "radsec", "trust", String(site), "--ca", caFile, "--match", "ou", "--pattern", "*"]),
    ]);
    assert.match(
      ok(good).stdout,
      /trusts CN=Org RadSec CA \(SHA-256 [0-9A-F:]+\) for dns \*\.site\.example spare\.example/,
    );
    failed(withKey, /holds a private key/);
    failed(missing, /cannot read .*none\.pem: ENOENT/);
    failed(badField, /match\.field must be one of cn, dns, uri/);
    const settings = JSON.parse(ok(await cli(["networks", "radsec", "show", String(site), "--json"])).stdout);
    assert.deepEqual(settings.ca.match, { field: "dns", patterns: ["*.site.example", "spare.example"] });
    failed(
      await cli(["networks", "radsec", "untrust", String(site), "--account", "other"]),
      /belongs to another account/,
    );
    assert.match(ok(await cli(["networks", "radsec", "untrust", String(site)])).stdout, /no longer trusts/);
    failed(await cli(["networks", "radsec", "untrust", String(site)]), /has no uploaded RadSec CA/);
  });
});

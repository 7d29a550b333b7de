// `wisp idp ...` as operators run it (issue 26 point 1): real processes on a fresh SQLite database.
// Create from a preset with the client secret on standard input (never printed), a SAML provider
// from a metadata file, list, show, update, the service's checks (hostile metadata, bad issuer,
// unknown group), another account's provider not found, delete, and the console's password login
// switch (refused while no provider lets console users in).
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { GroupsRepo } from "../../src/core/groups/repo.ts";
import { GroupsService } from "../../src/core/groups/service.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, type ProcessResult, wisp } from "../support/processes.ts";
import { startSamlIdp, type TestSamlIdp } from "../support/saml-idp.ts";

const SECRET = "cli-oidc-secret-0123456789abcdef";

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

function failed(result: ProcessResult, message: RegExp): void {
  assert.notEqual(result.code, 0, describeRun(result));
  assert.equal(result.stdout, "", describeRun(result));
  assert.match(result.stderr, message, describeRun(result));
}

describe("wisp idp CLI", () => {
  let database: TestDatabase;
  let env: Env;
  let opened: Database;
  let saml: TestSamlIdp;
  let dir: string;
  const cli = (args: string[], input?: string) => wisp(args, env, input);
  const providers = () => opened.db.selectFrom("identity_providers").selectAll().orderBy("id").execute();

  before(async () => {
    database = await createTestDatabase("sqlite");
    env = { ...databaseEnv(database), PUBLIC_URL: "https://wifi.example.org", IDP_ALLOW_HTTP: "1" };
    saml = await startSamlIdp();
    dir = await mkdtemp(join(tmpdir(), "wisp-idp-cli-"));
  });
  after(async () => {
    await opened?.close();
    await database?.drop();
    await saml?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("create from a preset, secret from stdin; SAML from a metadata file; list and show", async () => {
    const okta = await cli(
      [
        ...["idp", "create", "okta", "--preset", "okta", "--issuer", "https://uni.okta.com"],
        ...["--client-id", "wisp-client", "--client-secret-stdin", "--allowed-domains", "uni.example"],
      ],
      `${SECRET}\n`,
    );
    assert.equal(okta.code, 0, describeRun(okta));
    assert.match(okta.stderr, /created identity provider \d+ "okta"/);
    assert.match(okta.stdout, /scopes\s+openid email profile groups/);
    assert.match(okta.stdout, /client_secret\s+set \(never shown\)/);
    assert.match(okta.stdout, /redirect_uri\s+https:\/\/wifi\.example\.org\/portal\/idp\/1\/callback/);
    assert.ok(!okta.stdout.includes(SECRET) && !okta.stderr.includes(SECRET));
    opened = openDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl, poolSize: 2 });

    const file = join(dir, "metadata.xml");
    await writeFile(file, saml.metadata);
    const city = await cli([
      "idp",
      "create",
      "city",
      "--kind",
      "saml",
      "--metadata-file",
      file,
      "--display-name",
      "City",
    ]);
    assert.equal(city.code, 0, describeRun(city));
    assert.match(city.stdout, new RegExp(`idp_entity_id\\s+${saml.entityId}`));
    assert.match(city.stdout, /sp_metadata_url\s+https:\/\/wifi\.example\.org\/portal\/idp\/2\/metadata/);

    const list = await cli(["idp", "list", "--json"]);
    assert.equal(list.code, 0, describeRun(list));
    const rows = JSON.parse(list.stdout) as { name: string; client_secret_set: boolean }[];
    assert.deepEqual(
      rows.map((r) => [r.name, r.client_secret_set]),
      [
        ["okta", true],
        ["city", false],
      ],
    );
    assert.ok(!list.stdout.includes(SECRET));
    const show = await cli(["idp", "show", "okta"]);
    assert.match(show.stdout, /allowed_domains\s+uni\.example/);
    const [row] = await providers();
    assert.ok(row && row.client_secret !== SECRET && !row.client_secret.includes(SECRET), "sealed at rest");
  });

  test("bad input: placeholder issuer, plain-text URL schemes, hostile metadata, unknown group; nothing written", async () => {
    const before = (await providers()).length;
    const hostile = join(dir, "hostile.xml");
    await writeFile(hostile, `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${saml.metadata}`);
    const [placeholder, scheme, xxe, group, preset] = await Promise.all([
      cli(["idp", "create", "entra", "--preset", "entra", "--client-id", "x"]),
      cli(["idp", "create", "bad", "--kind", "oidc", "--issuer", "javascript:alert(1)", "--client-id", "x"]),
      cli(["idp", "create", "bad", "--kind", "saml", "--metadata-file", hostile]),
      cli(["idp", "create", "bad", "--preset", "google", "--client-id", "x", "--map", "staff=no-such-group"]),
      cli(["idp", "create", "bad", "--preset", "github"]),
    ]);
    failed(placeholder, /issuer replace the preset's placeholder/);
    failed(scheme, /issuer must be an http:\/\/ or https:\/\/ URL/);
    failed(xxe, /metadata must not contain a DOCTYPE/);
    failed(group, /no-such-group is not a group of this account/);
    failed(preset, /preset must be one of google, entra, okta, saml/);
    assert.equal((await providers()).length, before);
  });

  test("update, another account's provider not found, delete", async () => {
    const accountId = (
      await opened.db
        .selectFrom("accounts")
        .select("id")
        .where("name", "=", "default")
        .executeTakeFirstOrThrow()
    ).id;
    await new GroupsService(new GroupsRepo(opened.db, "sqlite")).create(accountId, { name: "staff" });
    const updated = await cli([
      "idp",
      "update",
      "okta",
      "--display-name",
      "Uni login",
      "--disable",
      "--map",
      "staff-all=staff",
    ]);
    assert.equal(updated.code, 0, describeRun(updated));
    const [okta] = await providers();
    assert.equal(okta?.display_name, "Uni login");
    assert.equal(okta?.enabled, 0);
    assert.equal((await cli(["idp", "update", "okta"])).code, 1);
    const other = await cli(["accounts", "create", "elsewhere"]);
    assert.equal(other.code, 0, describeRun(other));
    failed(await cli(["idp", "show", "okta", "--account", "elsewhere"]), /identity provider okta not found/);
    failed(await cli(["idp", "delete", "1", "--account", "elsewhere"]), /identity provider 1 not found/);
    const deleted = await cli(["idp", "delete", "city"]);
    assert.equal(deleted.code, 0, describeRun(deleted));
    assert.deepEqual(
      (await providers()).map((p) => p.name),
      ["okta"],
    );
  });

  test("password-login off needs a provider with console login; on again", async () => {
    failed(await cli(["idp", "password-login", "off"]), /would lock everyone out/);
    const on = await cli(["idp", "update", "okta", "--enable", "--console-login"]);
    assert.equal(on.code, 0, describeRun(on));
    const off = await cli(["idp", "password-login", "off"]);
    assert.equal(off.code, 0, describeRun(off));
    const account = await opened.db
      .selectFrom("accounts")
      .select("console_password_login")
      .where("name", "=", "default")
      .executeTakeFirstOrThrow();
    assert.equal(account.console_password_login, 0);
    // The last way into the console cannot be switched off or deleted while passwords are off.
    failed(await cli(["idp", "update", "okta", "--no-console-login"]), /last way into the console/);
    failed(await cli(["idp", "delete", "okta"]), /last way into the console/);
    assert.equal((await cli(["idp", "password-login", "on"])).code, 0);
    const off2 = await cli(["idp", "update", "okta", "--no-console-login"]);
    assert.equal(off2.code, 0, describeRun(off2));
  });
});

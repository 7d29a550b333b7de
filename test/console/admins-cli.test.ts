// `wisp admins` as operators run it, against a real server process on the same database: the
// generated password is printed once and works in the console; a server started after that asks
// for no setup code; reset-password ends the user's sessions.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, type ServerProcess, startServerProcess, wisp } from "../support/processes.ts";

const PASSWORD_SHAPE = /^[A-Za-z0-9]{4}(-[A-Za-z0-9]{4}){4}$/;

describe("wisp admins", () => {
  let database: TestDatabase;
  let env: Env;
  let server: ServerProcess | undefined;
  let generated = "";
  const cli = (...args: string[]) => wisp(args, env);

  before(async () => {
    database = await createTestDatabase("sqlite");
    env = databaseEnv(database);
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  test("bad options are refused before anything is written", async () => {
    const short = await cli("admins", "create", "--email", "ops@example.com", "--password", "short");
    assert.equal(short.code, 1, short.stderr);
    assert.match(short.stderr, /password must be 12-200 characters/);
    const email = await cli("admins", "create", "--email", "not-an-email");
    assert.equal(email.code, 1);
    assert.match(email.stderr, /email must be an email address/);
    const accounts = await cli("accounts", "list");
    assert.equal(accounts.stdout.trim().split("\n").length, 1, "not even the default account was made");
  });

  test("create without --password prints a generated password alone on stdout, once", async () => {
    const result = await cli("admins", "create", "--email", "Ops@Example.com");
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.split("\n");
    assert.equal(lines.length, 2);
    generated = lines[0]!;
    assert.match(generated, PASSWORD_SHAPE);
    assert.match(result.stderr, /created console user ops@example\.com \(id 1, owner\) for account default/);
    assert.ok(!result.stderr.includes(generated));
    const again = await cli(
      "admins",
      "create",
      "--email",
      "ops@example.com",
      "--password",
      "another password",
    );
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
    const other = await cli(
      "admins",
      "create",
      "--email",
      "b@example.com",
      "--account",
      "nope",
      "--password",
      "x".repeat(12),
    );
    assert.equal(other.code, 1);
    assert.match(other.stderr, /no account named "nope"/);
    const badRole = await cli("admins", "create", "--email", "c@example.com", "--role", "boss");
    assert.equal(badRole.code, 1);
    assert.match(
      badRole.stderr,
      /role must be one of owner, admin, network_engineer, help_desk, voucher_desk, read_only/,
    );
    const desk = await cli(
      "admins",
      "create",
      "--email",
      "desk@example.com",
      "--role",
      "help-desk",
      "--password",
      "help desk password",
    );
    assert.equal(desk.code, 0, desk.stderr);
    assert.match(desk.stdout, /created console user desk@example\.com \(id 2, help_desk\)/);
    const list = await cli("admins", "list");
    assert.match(
      list.stdout,
      /^ID\s+EMAIL\s+ACCOUNT\s+ROLE\s+CREATED\s+LAST LOGIN\n1\s+ops@example\.com\s+default\s+owner\s.*\n2\s+desk@example\.com\s+default\s+help_desk\s/,
    );
  });

  test("a server started afterwards logs no setup code, and the password logs in", async () => {
    server = await startServerProcess(env);
    assert.ok(!server.stdout().includes("console setup code"), "no setup code once a console user exists");
    const client = new ConsoleClient(server.url);
    assert.equal((await client.get("/console/setup")).location, "/console/login");
    assert.equal((await client.login("ops@example.com", generated)).status, 303);
    assert.equal((await client.get("/console/keys")).status, 200);
    // The help desk user made with --role: users yes, API keys no (the role's table).
    const desk = new ConsoleClient(server.url);
    assert.equal((await desk.login("desk@example.com", "help desk password")).status, 303);
    assert.equal((await desk.get("/console/users")).status, 200);
    assert.equal((await desk.get("/console/keys")).status, 403);

    const reset = await cli(
      "admins",
      "reset-password",
      "--email",
      "OPS@example.com",
      "--password",
      "a brand new password",
    );
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal(reset.stdout.trim(), "set a new password for console user ops@example.com");
    assert.equal((await client.get("/console/keys")).status, 303, "the reset ended the session");
    assert.equal((await new ConsoleClient(server.url).login("ops@example.com", generated)).status, 401);
    assert.equal(
      (await new ConsoleClient(server.url).login("ops@example.com", "a brand new password")).status,
      303,
    );
  });
});

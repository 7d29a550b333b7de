// What an operator meets first: settings checked at start, one clear line (never a stack trace) when
// the server cannot start, a start-up line that says what runs where, and a CLI that says which
// database it changes, prints its version, lists as JSON and takes secrets on standard input.
import assert from "node:assert/strict";
import dgram from "node:dgram";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { openDatabase } from "../../src/db/database.ts";
import { cliDialects, createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import {
  databaseEnv,
  type Env,
  freePort,
  type ProcessResult,
  ROOT,
  runServerToExit,
  STARTED,
  startServerProcess,
  wisp,
} from "../support/processes.ts";

const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string })
  .version;

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

/** Exit 1, not started, exactly one line on stderr matching `message`, no stack trace anywhere. */
function assertOneLineFailure(result: ProcessResult, message: RegExp): void {
  assert.equal(result.code, 1, describeRun(result));
  assert.doesNotMatch(result.stdout, /started/, describeRun(result));
  assert.doesNotMatch(result.stdout, /\\n\s+at /, "no stack trace in the log");
  assert.equal(result.stderr.split("\n").length, 2, `one line on stderr: ${describeRun(result)}`);
  assert.match(result.stderr, message, describeRun(result));
  assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
}

describe("the server refuses to start with one clear line", () => {
  let database: TestDatabase;
  let env: Env;
  before(async () => {
    database = await createTestDatabase("sqlite");
    env = { ...databaseEnv(database), HOST: "127.0.0.1", PORT: "0" };
  });
  after(() => database?.drop());

  test("every setting is checked: a bad value names the variable", async () => {
    const cases: [Env, RegExp][] = [
      [
        { LOG_LEVEL: "loud" },
        /^wisp: configuration error: LOG_LEVEL must be one of fatal, error, warn, info/,
      ],
      [{ WORKER: "yes" }, /^wisp: configuration error: WORKER must be one of 0, 1, got "yes"$/m],
      [
        { WEBHOOK_ALLOW_PRIVATE: "true" },
        /^wisp: configuration error: WEBHOOK_ALLOW_PRIVATE must be one of 0, 1/,
      ],
      [
        { TRUSTED_PROXIES: "10.0.0.1,10.0.0.0/33" },
        /^wisp: configuration error: TRUSTED_PROXIES .*"10\.0\.0\.0\/33"/,
      ],
      [{ HOST: "not a host" }, /^wisp: configuration error: HOST must be an IP address/],
      [{ RADIUS_HOST: "::1::2" }, /^wisp: configuration error: RADIUS_HOST must be an IP address/],
      [{ REDIS_URL: "http://cache:6379" }, /^wisp: configuration error: REDIS_URL must be a URL like redis:/],
      [{ DATABASE_URL: "postgres://u:pa ss@[bad" }, /^wisp: configuration error: DATABASE_URL must be a URL/],
      [
        { RADIUS_AUTH_PORT: "70000" },
        /^wisp: configuration error: RADIUS_AUTH_PORT must be between 0 and 65535/,
      ],
    ];
    const results = await Promise.all(cases.map(([bad]) => runServerToExit({ ...env, ...bad })));
    results.forEach((result, i) => {
      assertOneLineFailure(result, cases[i]![1]);
      assert.ok(!result.stderr.includes("pa ss"), "a URL's password is never repeated");
    });
  });

  test("the HTTP port already in use", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const result = await runServerToExit({ ...env, PORT: String(port) });
      assertOneLineFailure(
        result,
        new RegExp(
          `^wisp: cannot listen for HTTP on 127\\.0\\.0\\.1:${port}: the port is already in use\\n$`,
        ),
      );
    } finally {
      holder.close();
    }
  });

  test("a RADIUS port already in use", async () => {
    const holder = dgram.createSocket("udp4");
    const port = await freeUdpPort();
    await new Promise<void>((resolve) => holder.bind(port, "127.0.0.1", resolve));
    try {
      const result = await runServerToExit({
        ...env,
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(port),
        RADIUS_ACCT_PORT: "0",
      });
      assertOneLineFailure(
        result,
        new RegExp(
          `^wisp: cannot listen for RADIUS on 127\\.0\\.0\\.1:${port}: the port is already in use\\n$`,
        ),
      );
    } finally {
      holder.close();
    }
  });

  test("a database that cannot be opened: PostgreSQL not listening, a DATA_DIR that cannot be made", async () => {
    const port = await freePort();
    const [pg, dir] = await Promise.all([
      runServerToExit({ ...env, DATABASE_URL: `postgres://wisp:hunter2@127.0.0.1:${port}/wisp` }),
      runServerToExit({ ...env, DATA_DIR: path.join(ROOT, "package.json", "data") }),
    ]);
    assertOneLineFailure(
      pg,
      new RegExp(`^wisp: cannot open the database postgres://127\\.0\\.0\\.1:${port}/wisp: .*ECONNREFUSED`),
    );
    assert.ok(!pg.stderr.includes("hunter2"), "the password is not printed");
    assertOneLineFailure(
      dir,
      /^wisp: cannot open the database \/.*\/package\.json\/data\/wisp\.db: .*ENOTDIR/,
    );
  });
});

describe("the start-up line", () => {
  test("names the version, the database, the worker, the RADIUS ports, the console and docs URLs", async () => {
    const database = await createTestDatabase("sqlite");
    const [auth, acct] = [await freeUdpPort(), await freeUdpPort()];
    const server = await startServerProcess({
      ...databaseEnv(database),
      WORKER: "0",
      RADIUS_HOST: "127.0.0.1",
      RADIUS_AUTH_PORT: String(auth),
      RADIUS_ACCT_PORT: String(acct),
    });
    try {
      const line = server.log().find((l) => STARTED.test(l.msg ?? ""));
      assert.ok(line);
      const file = path.join(database.dataDir, "wisp.db");
      assert.equal(
        line.msg,
        `wisp ${VERSION} started: database sqlite ${file}; worker off (run wisp worker); ` +
          `RADIUS auth 127.0.0.1:${auth}/udp, acct 127.0.0.1:${acct}/udp, RadSec off; ` +
          `console ${server.url}/console; API docs ${server.url}/docs`,
      );
      assert.equal(line.version, VERSION);
      assert.equal(line.worker, false);
      assert.deepEqual(line.radius, { auth, acct });
      assert.equal((await fetch(line.docs)).status, 200, "the docs URL it names answers");
      assert.equal((await fetch(line.console, { redirect: "manual" })).status, 303, "so does the console's");
    } finally {
      await server.stop();
      await database.drop();
    }
  });
});

for (const { dialect, skip } of await cliDialects()) {
  describe(`the CLI for operators on ${dialect}`, { skip }, () => {
    let database: TestDatabase;
    let env: Env;
    let where: string;
    const cli = (args: string[], input?: string) => wisp(args, env, input);

    before(async () => {
      database = await createTestDatabase(dialect);
      env = databaseEnv(database);
      where = database.databaseUrl
        ? `postgres://${new URL(database.databaseUrl).host}${new URL(database.databaseUrl).pathname}`
        : path.join(database.dataDir, "wisp.db");
    });
    after(() => database?.drop());

    test("--version and -V print the version alone", async () => {
      for (const flag of ["--version", "-V"]) {
        const result = await cli([flag]);
        assert.equal(result.code, 0, describeRun(result));
        assert.equal(result.stdout, `${VERSION}\n`);
      }
    });

    test("commands that change data name the database on stderr; lists do not", async () => {
      const created = await cli(["accounts", "create", "ops"]);
      assert.equal(created.code, 0, describeRun(created));
      assert.equal(created.database, where);
      const listed = await cli(["accounts", "list"]);
      assert.equal(listed.code, 0, describeRun(listed));
      assert.equal(listed.database, undefined);
      assert.equal(listed.stderr, "");
    });

    test("--password-stdin and --secret-stdin take secrets from standard input", async () => {
      const password = "piped-Password-4821";
      const secret = "piped-Shared-Secret-77";
      const [admin, network] = await Promise.all([
        cli(
          ["admins", "create", "--email", "ops@example.com", "--account", "ops", "--password-stdin"],
          `${password}\n`,
        ),
        cli(
          [
            "networks",
            "create",
            "--name",
            "Piped",
            "--nas-ip",
            "198.51.100.7",
            "--account",
            "ops",
            "--secret-stdin",
          ],
          secret,
        ),
      ]);
      assert.equal(admin.code, 0, describeRun(admin));
      assert.equal(admin.stdout, "created console user ops@example.com (id 1, owner) for account ops\n");
      assert.equal(network.code, 0, describeRun(network));
      assert.equal(network.stdout, `${secret}\n`);

      const opened = openDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      try {
        const core = createCore(opened, { publicUrl: "http://localhost" });
        assert.ok(await core.admins.login("ops@example.com", password), "the piped password logs in");
        assert.equal(
          await core.admins.login("ops@example.com", `${password}\n`),
          null,
          "without its newline",
        );
        const row = await opened.db
          .selectFrom("nas")
          .select("secret")
          .where("shortname", "=", "Piped")
          .executeTakeFirst();
        assert.equal(row?.secret, secret);
      } finally {
        await opened.close();
      }

      const [both, empty, reset] = await Promise.all([
        cli(
          [
            "admins",
            "reset-password",
            "--email",
            "ops@example.com",
            "--password",
            "x".repeat(12),
            "--password-stdin",
          ],
          "y",
        ),
        cli(["networks", "update", "1", "--secret-stdin"], ""),
        cli(
          ["admins", "reset-password", "--email", "ops@example.com", "--password-stdin"],
          "another-Password-99\r\n",
        ),
      ]);
      assert.equal(both.code, 1, describeRun(both));
      assert.equal(both.stderr, "wisp: give --password or --password-stdin, not both\n");
      assert.equal(empty.code, 1, describeRun(empty));
      assert.equal(empty.stderr, "wisp: --secret-stdin: standard input was empty\n");
      assert.equal(reset.code, 0, describeRun(reset));
    });

    test("--json on every list command prints the listed objects", async () => {
      await cli(["keys", "create", "--name", "json key", "--account", "ops"]);
      await cli(["portals", "create", "--name", "Lobby portal", "--network", "1", "--account", "ops"]);
      await cli(["webhooks", "create", "--url", "https://hooks.example.com/wisp", "--account", "ops"]);
      const lists: [string[], (row: Record<string, unknown>) => boolean][] = [
        [["accounts", "list"], (r) => r.name === "ops"],
        [["keys", "list"], (r) => r.name === "json key" && String(r.masked).startsWith("wisp_")],
        [["admins", "list"], (r) => r.email === "ops@example.com"],
        [["networks", "list"], (r) => r.name === "Piped" && r.nas_ip === "198.51.100.7"],
        [["portals", "list"], (r) => r.name === "Lobby portal"],
        [["webhooks", "list"], (r) => r.url === "https://hooks.example.com/wisp"],
      ];
      const results = await Promise.all(lists.map(([args]) => cli([...args, "--json"])));
      results.forEach((result, i) => {
        const [args, expected] = lists[i]!;
        assert.equal(result.code, 0, describeRun(result));
        const rows = JSON.parse(result.stdout) as Record<string, unknown>[];
        assert.ok(Array.isArray(rows) && rows.some(expected), `${args.join(" ")} --json: ${result.stdout}`);
        for (const secret of ["piped-Shared-Secret-77", "whsec_", "hash", 'secret":']) {
          assert.ok(!result.stdout.includes(secret), `${args.join(" ")} --json shows no secret (${secret})`);
        }
      });
    });
  });
}

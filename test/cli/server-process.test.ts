// The server as operators run it (`npm start`: the compiled dist/main.js), driven over real sockets and
// managed with the `wisp` CLI in separate processes: revocation, health, logs, SIGTERM, bad config.
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { openDatabase } from "../../src/db/database.ts";
import { createTestDatabase, dialects, type TestDatabase } from "../support/databases.ts";
import {
  databaseEnv,
  type Env,
  type ProcessResult,
  request,
  runServerToExit,
  type ServerProcess,
  STARTED,
  spawnStartingServer,
  startServerProcess,
  wisp,
} from "../support/processes.ts";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

async function createKey(env: Env, name: string): Promise<string> {
  const result = await wisp(["keys", "create", "--name", name], env);
  assert.equal(result.code, 0, describeRun(result));
  const key = result.stdout.trim();
  assert.match(key, /^wisp_[0-9A-Za-z]{40}$/);
  return key;
}

/** Parses printTable output into rows keyed by the header's column names. */
function table(stdout: string): Record<string, string>[] {
  const [header = "", ...rows] = stdout.trimEnd().split("\n");
  const columns = header.split(/ {2,}/);
  return rows.map((row) => {
    const cells = row.split(/ {2,}/);
    return Object.fromEntries(columns.map((column, i) => [column, cells[i] ?? ""]));
  });
}

interface ShutdownOutcome {
  /** The raw HTTP response to the request that was in flight at SIGTERM. */
  response: string;
  /** What a new connection made after SIGTERM got: an error code, or "HTTP <status>". */
  newConnection: string;
  exit: { code: number | null; signal: NodeJS.Signals | null };
}

/**
 * Sends POST /api/users with half its body on a raw connection, SIGTERMs the server once the request
 * is being handled, tries a new connection, then sends the rest of the body and waits for the exit.
 */
async function sigtermWithRequestInFlight(
  server: ServerProcess,
  key: string,
  username: string,
  { keepAlive }: { keepAlive: boolean },
): Promise<ShutdownOutcome> {
  const body = JSON.stringify({ username, password: "in-flight secret" });
  const half = Math.floor(body.length / 2);
  const socket = net.connect(server.port, "127.0.0.1");
  let response = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    response += chunk;
  });
  socket.on("error", () => {});
  const closed = new Promise((resolve) => socket.once("close", resolve));
  try {
    await new Promise((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    socket.write(
      [
        "POST /api/users HTTP/1.1",
        `Host: 127.0.0.1:${server.port}`,
        `Authorization: Bearer ${key}`,
        "Content-Type: application/json",
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...(keepAlive ? [] : ["Connection: close"]),
        "",
        body.slice(0, half),
      ].join("\r\n"),
    );
    // The server has the request (headers and half the body) before it is told to stop.
    await server.waitForLog((line) => line.msg === "incoming request" && line.req?.method === "POST");
    server.child.kill("SIGTERM");
    await server.waitForLog((line) => line.signal === "SIGTERM");
    await sleep(300);

    let newConnection: string;
    try {
      newConnection = `HTTP ${(await request(`${server.url}/healthz`)).status}`;
    } catch (error) {
      newConnection = (error as NodeJS.ErrnoException).code ?? String(error);
    }

    socket.write(body.slice(half));
    // A finished response is complete once Content-Length bytes of body have arrived.
    const complete = () => {
      const end = response.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length: *(\d+)/i.exec(response)?.[1];
      return end >= 0 && length !== undefined && response.length - end - 4 >= Number(length);
    };
    const deadline = Date.now() + 15_000;
    while (!complete() && Date.now() < deadline && !socket.destroyed) await sleep(20);
    // Like any keep-alive client, hold the connection open: the server must not wait for it.
    const exit = await server.exited;
    return { response, newConnection, exit };
  } finally {
    socket.destroy();
    await closed;
  }
}

function assertShutdownOutcome(outcome: ShutdownOutcome, server: ServerProcess): void {
  const context = `${outcome.response}\n--- log ---\n${server.stdout()}\n${server.stderr()}`;
  assert.match(outcome.response, /^HTTP\/1\.1 201 /, context);
  assert.match(outcome.response, /"username":"sigterm-\w+"/, context);
  assert.ok(
    ["ECONNREFUSED", "ECONNRESET", "HTTP 503"].includes(outcome.newConnection),
    `a new connection after SIGTERM got ${outcome.newConnection}`,
  );
  assert.deepEqual(outcome.exit, { code: 0, signal: null }, context);
  assert.ok(
    server.log().some((line) => line.msg === "shutdown complete"),
    `"shutdown complete" is logged\n${context}`,
  );
}

/** The user row a request wrote, read straight from the database after the server is gone. */
async function storedUsernames(database: TestDatabase): Promise<string[]> {
  const db = openDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
  try {
    const rows = await db.db.selectFrom("users").select("username").orderBy("username").execute();
    return rows.map((row) => row.username);
  } finally {
    await db.close();
  }
}

for (const { dialect, skip } of await dialects()) {
  describe(`the server process on ${dialect}`, { skip }, () => {
    let database: TestDatabase;
    let env: Env;
    let server: ServerProcess;
    let key: string;
    /** Every key the server has seen, to look for in its log. */
    const seenKeys: string[] = [];
    /** Every server process started, to look for keys in all their logs. */
    const servers: ServerProcess[] = [];

    before(async () => {
      database = await createTestDatabase(dialect);
      // A shorter shutdown timeout bounds how long a shutdown that hangs can stall the suite.
      env = { ...databaseEnv(database), SHUTDOWN_TIMEOUT_MS: "4000" };
      key = await createKey(env, "server");
      seenKeys.push(key);
      server = await startServerProcess(env);
      servers.push(server);
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await database?.drop();
    });

    test("GET /healthz answers 200 without a key; the API needs one", async () => {
      const health = await request(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: "ok", database: "ok" });
      const anonymous = await request(`${server.url}/api/users`);
      assert.equal(anonymous.status, 401);
    });

    test("a key made by the CLI works at once, and is refused on the very next request after revoke", async () => {
      const fresh = await createKey(env, "revoked-while-running");
      seenKeys.push(fresh);
      const ok = await request(`${server.url}/api/users`, { key: fresh });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(Object.keys(ok.body).sort(), ["data", "limit", "page", "total"]);

      const revoked = await wisp(["keys", "revoke", "2"], env);
      assert.equal(revoked.code, 0, describeRun(revoked));

      const refused = await request(`${server.url}/api/users`, { key: fresh });
      assert.equal(refused.status, 401, refused.text);
      assert.match(String(refused.headers["content-type"]), /^application\/json/);
      assert.deepEqual(Object.keys(refused.body).sort(), ["code", "error", "message"]);
      assert.equal(refused.body.error, true);
      assert.equal(refused.body.code, 401);
      assert.equal(typeof refused.body.message, "string");
      assert.ok(refused.body.message.length > 0);

      const other = await request(`${server.url}/api/users`, { key });
      assert.equal(other.status, 200, "revoking one key leaves the others working");
    });

    test("failed authentications answer 401; keys list then shows last used for used keys", async () => {
      const unknown = `wisp_${"A1b2C3d4E5".repeat(4)}`;
      seenKeys.push(unknown);
      const failures = [
        { key: unknown },
        { headers: { authorization: `Basic ${key}` } },
        { headers: { authorization: `Bearer ${key} ${key}` } },
        { key: `${key}x` },
      ];
      for (const options of failures) {
        const res = await request(`${server.url}/api/users`, options);
        assert.equal(res.status, 401, `${JSON.stringify(options)}: ${res.text}`);
        assert.equal(res.body.code, 401);
      }

      const list = await wisp(["keys", "list"], env);
      assert.equal(list.code, 0, describeRun(list));
      const rows = table(list.stdout);
      assert.deepEqual(
        rows.map((r) => [r.ID, r.NAME]),
        [
          ["1", "server"],
          ["2", "revoked-while-running"],
        ],
      );
      assert.match(rows[0]!["LAST USED"]!, ISO, list.stdout);
      assert.equal(rows[0]!.REVOKED, "-");
      assert.match(rows[1]!["LAST USED"]!, ISO, list.stdout);
      assert.match(rows[1]!.REVOKED!, ISO);
      for (const seen of seenKeys) assert.ok(!list.stdout.includes(seen.slice(5)), "keys list masks keys");
    });

    test("SIGTERM lets a request in flight finish (Connection: close), refuses new ones, exits 0", async () => {
      const second = await startServerProcess(env);
      servers.push(second);
      const outcome = await sigtermWithRequestInFlight(second, key, "sigterm-close", { keepAlive: false });
      assertShutdownOutcome(outcome, second);
      assert.match(outcome.response, /\r\nconnection: close\r\n/i);
    });

    test("SIGTERM lets a request in flight finish on a keep-alive connection, and still exits 0", async () => {
      // HTTP/1.1 without "Connection: close": the connection stays open after the answer unless the
      // server ends it, which it must do, or it waits for the client until SHUTDOWN_TIMEOUT_MS.
      const outcome = await sigtermWithRequestInFlight(server, key, "sigterm-keepalive", { keepAlive: true });
      assertShutdownOutcome(outcome, server);
      assert.match(outcome.response, /\r\nconnection: close\r\n/i, "a closing server ends keep-alive");
    });

    test("both requests in flight at SIGTERM were stored", async () => {
      await Promise.all(servers.map((s) => s.stop()));
      assert.deepEqual(await storedUsernames(database), ["sigterm-close", "sigterm-keepalive"]);
    });

    test("the log never holds a full API key, after authenticated and failed requests", async () => {
      await Promise.all(servers.map((s) => s.stop()));
      const lines = servers.flatMap((s) => s.log());
      for (const status of [200, 201, 401]) {
        assert.ok(
          lines.some((l) => l.res?.statusCode === status),
          `the log records the ${status} answers (so the check below is not vacuous)`,
        );
      }
      for (const s of servers) {
        const output = `${s.stdout()}\n${s.stderr()}`;
        for (const seen of seenKeys) {
          assert.ok(!output.includes(seen), `the log holds the key ${seen}`);
          assert.ok(!output.includes(seen.slice(5)), `the log holds the body of the key ${seen}`);
        }
        assert.ok(!output.includes("in-flight secret"), "the log holds a password");
      }
    });

    test("SIGTERM while the server is still starting: it finishes starting, then shuts down cleanly", async () => {
      // A supervisor may stop a server the moment it has said anything (the start-up line is written
      // before the start completes). The signal is honoured once the server is up, never lost, and
      // never the default kill: exit 0 after "shutdown complete".
      const starting = await spawnStartingServer(env);
      starting.child.kill("SIGTERM");
      const exit = await starting.exited;
      const context = `${starting.stdout()}\n${starting.stderr()}`;
      assert.deepEqual(exit, { code: 0, signal: null }, context);
      const messages = starting.log().map((line) => String(line.msg));
      assert.ok(
        messages.some((m) => STARTED.test(m)),
        context,
      );
      assert.ok(messages.includes("shutdown complete"), context);
    });

    test("a bad PORT or DATABASE_URL stops the server at once with a configuration error", async () => {
      const [port, url] = await Promise.all([
        runServerToExit({ ...env, HOST: "127.0.0.1", PORT: "abc" }),
        runServerToExit({ ...env, HOST: "127.0.0.1", PORT: "0", DATABASE_URL: "mysql://x" }),
      ]);
      assert.equal(port.code, 1, describeRun(port));
      assert.match(port.stderr, /^wisp: configuration error: PORT must be a whole number, got "abc"\n$/);
      assert.ok(!port.stdout.includes("wisp started"));
      assert.equal(url.code, 1, describeRun(url));
      assert.match(url.stderr, /^wisp: configuration error: DATABASE_URL must be a URL like postgres:\/\//);
      assert.ok(!url.stdout.includes("wisp started"));
    });
  });
}

// `wisp radius test` as operators run it: a real server process with RADIUS on free loopback ports,
// and the CLI as separate processes. Spawns are slow, so independent commands run side by side.
// Users and networks are made in-process on the same database (there is no users CLI).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type Core, createCore } from "../../src/core/index.ts";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { cliDialects, createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import {
  databaseEnv,
  type Env,
  type ProcessResult,
  type ServerProcess,
  startServerProcess,
  wisp,
} from "../support/processes.ts";

const SECRET = "cli-Lobby-Secret-5";
const FAR_SECRET = "cli-Far-Secret-6";
const PASSWORD = "pw-Cli-Y7k";

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

/** Neither the password nor a shared secret is printed, whatever happened. */
function assertNothingSecret(result: ProcessResult): void {
  const output = result.stdout + result.stderr;
  for (const secret of [PASSWORD, SECRET, FAR_SECRET])
    assert.ok(!output.includes(secret), describeRun(result));
}

for (const { dialect, skip } of await cliDialects()) {
  describe(`wisp radius test on ${dialect}`, { skip }, () => {
    let database: TestDatabase;
    let opened: Database;
    let core: Core;
    let server: ServerProcess;
    let authPort: number;
    let env: Env;
    let noNetwork: ProcessResult;
    let lobbyId: number;
    let farId: number;

    /** `wisp radius test ...` with the server's RADIUS settings in the environment. */
    const radius = (args: string[], extra: Env = {}, input?: string) => {
      const run = wisp(["radius", "test", ...args], { ...env, ...extra }, input);
      return run.then((result) => {
        assertNothingSecret(result);
        return result;
      });
    };

    before(async () => {
      database = await createTestDatabase(dialect);
      authPort = await freeUdpPort();
      const acctPort = await freeUdpPort();
      env = {
        ...databaseEnv(database),
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(authPort),
        RADIUS_ACCT_PORT: String(acctPort),
      };
      // Before any network exists (the server migrates the database first).
      server = await startServerProcess(env);
      noNetwork = await radius(["alice", PASSWORD]);

      opened = openDatabase({ dataDir: database.dataDir, databaseUrl: database.databaseUrl, poolSize: 2 });
      core = createCore(opened, { publicUrl: "http://localhost:8080" });
      const account = await core.accounts.resolve(undefined);
      const create = (name: string, nas_ip: string, secret: string) =>
        core.networks.create(account.id, { name, nas_ip, secret });
      lobbyId = (await create("Lobby", "127.0.0.1", SECRET)).network.id;
      farId = (await create("Far", "10.20.30.0/24", FAR_SECRET)).network.id;
      const alice = await core.users.create(account.id, { username: "alice", password: PASSWORD });
      // The same password, stored only as a salted SHA-1 (what an LDAP or daloRADIUS import brings).
      const salt = Buffer.from("cli-salt");
      const ssha = Buffer.concat([createHash("sha1").update(PASSWORD).update(salt).digest(), salt]);
      await core.users.create(account.id, {
        username: "hashed",
        password_hash: `{SSHA}${ssha.toString("base64")}`,
      });
      for (const [attribute, value] of [
        ["Session-Timeout", "3600"],
        ["WISPr-Bandwidth-Max-Down", "5000000"],
      ] as const) {
        await core.attributes.addToUser(account.id, {
          userid: alice.id,
          table: "radreply",
          attribute,
          operator: "=",
          value,
        });
      }
    });
    after(async () => {
      await server?.stop();
      await opened?.close();
      // pg-pool's end() resolves before its sockets have closed, and the pool has no "error"
      // listener: a forced drop right away can kill one and crash this process (reported).
      if (dialect === "postgres") await new Promise((resolve) => setTimeout(resolve, 250));
      await database?.drop();
    });

    test("without a network for 127.0.0.1 it says how to create one", () => {
      assert.equal(noNetwork.code, 2, describeRun(noNetwork));
      assert.equal(noNetwork.stdout, "");
      assert.match(noNetwork.stderr, /no network covers 127\.0\.0\.1/);
      assert.match(noNetwork.stderr, /create one with: wisp networks create --nas-ip 127\.0\.0\.1/);
    });

    test("PAP and CHAP accept: exit 0, the verdict and each reply attribute", async () => {
      const [pap, chap] = await Promise.all([
        radius(["alice", PASSWORD]),
        radius(["alice", PASSWORD, "--chap"]),
      ]);
      for (const [result, method] of [
        [pap, "PAP"],
        [chap, "CHAP"],
      ] as const) {
        assert.equal(result.code, 0, describeRun(result));
        const lines = result.stdout.split("\n");
        assert.equal(
          lines[0],
          `Sent Access-Request to 127.0.0.1:${authPort} (${method}, secret of network ${lobbyId} "Lobby")`,
        );
        assert.ok(lines.includes("\tUser-Name = alice"), describeRun(result));
        assert.ok(lines.includes(`\t${method === "PAP" ? "User" : "CHAP"}-Password = <hidden>`));
        assert.match(result.stdout, /^Received Access-Accept Id \d+ from 127\.0\.0\.1:\d+$/m);
        const received = lines.slice(lines.findIndex((l) => l.startsWith("Received")) + 1);
        assert.deepEqual(
          received.filter((l) => l && !l.startsWith("\tMessage-Authenticator")),
          ["\tSession-Timeout = 3600", "\tWISPr-Bandwidth-Max-Down = 5000000"],
        );
      }
    });

    test("a user with a hashed password: PAP checks the hash; CHAP needs the cleartext", async () => {
      const [pap, wrong, chap] = await Promise.all([
        radius(["hashed", PASSWORD]),
        radius(["hashed", `${PASSWORD}x`]),
        radius(["hashed", PASSWORD, "--chap"]),
      ]);
      assert.equal(pap.code, 0, describeRun(pap));
      assert.match(pap.stdout, /^Received Access-Accept /m);
      for (const rejected of [wrong, chap]) {
        assert.equal(rejected.code, 1, describeRun(rejected));
        assert.match(rejected.stdout, /^Received Access-Reject /m);
      }
    });

    test("--password-stdin reads the password from standard input; not together with the argument", async () => {
      const [piped, wrong, both, empty] = await Promise.all([
        radius(["alice", "--password-stdin"], {}, `${PASSWORD}\n`),
        radius(["alice", "--password-stdin"], {}, "not-it\n"),
        radius(["alice", PASSWORD, "--password-stdin"], {}, `${PASSWORD}\n`),
        radius(["alice", "--password-stdin"], {}, ""),
      ]);
      assert.equal(piped.code, 0, describeRun(piped));
      assert.match(piped.stdout, /^Received Access-Accept /m);
      assert.equal(wrong.code, 1, describeRun(wrong));
      assert.notEqual(both.code, 0, describeRun(both));
      assert.match(both.stderr, /give --password or --password-stdin, not both/);
      assert.notEqual(empty.code, 0, describeRun(empty));
      assert.match(empty.stderr, /standard input was empty/);
    });

    test("a wrong password: exit 1 with Access-Reject and its Reply-Message", async () => {
      const result = await radius(["alice", "not-it"]);
      assert.equal(result.code, 1, describeRun(result));
      assert.match(result.stdout, /^Received Access-Reject /m);
      assert.match(result.stdout, /^\tReply-Message = wrong password$/m);
      assert.ok(!result.stdout.includes("not-it"), "the password tried is not printed either");
    });

    test("--network picks the secret; a network that does not cover 127.0.0.1 gets no answer", async () => {
      const [lobby, far, missing] = await Promise.all([
        radius(["alice", PASSWORD, "--network", String(lobbyId)]),
        radius(["alice", PASSWORD, "--network", String(farId), "--timeout", "600"]),
        radius(["alice", PASSWORD, "--network", "999"]),
      ]);
      assert.equal(lobby.code, 0, describeRun(lobby));
      assert.equal(far.code, 2, describeRun(far));
      assert.match(far.stderr, new RegExp(`not network ${farId}`));
      assert.match(far.stderr, /no answer from 127\.0\.0\.1:\d+ in 600 ms/);
      assert.equal(missing.code, 2, describeRun(missing));
      assert.match(missing.stderr, /network 999 not found/);
      // The server dropped the wrongly signed request and said so in its log.
      const line = await server.waitForLog((l) => l.msg === "RADIUS packet dropped");
      assert.match(line.reason, /bad Message-Authenticator/);
    });

    test("--host and --port override the environment; RADIUS_HOST 0.0.0.0 means loopback", async () => {
      const [explicit, wildcard, off, silent] = await Promise.all([
        radius(["alice", PASSWORD, "--host", "127.0.0.1", "--port", String(authPort)], {
          RADIUS_AUTH_PORT: "0",
          RADIUS_HOST: "192.0.2.1",
        }),
        radius(["alice", PASSWORD], { RADIUS_HOST: "0.0.0.0" }),
        radius(["alice", PASSWORD], { RADIUS_AUTH_PORT: "0" }),
        radius(["alice", PASSWORD, "--port", String(await freeUdpPort()), "--timeout", "300"]),
      ]);
      assert.equal(explicit.code, 0, describeRun(explicit));
      assert.equal(wildcard.code, 0, describeRun(wildcard));
      assert.match(wildcard.stdout, new RegExp(`^Sent Access-Request to 127\\.0\\.0\\.1:${authPort} `));
      assert.equal(off.code, 2, describeRun(off));
      assert.match(off.stderr, /RADIUS_AUTH_PORT is 0/);
      assert.equal(silent.code, 2, describeRun(silent));
      assert.match(silent.stderr, /no answer from 127\.0\.0\.1:\d+ in 300 ms/);
    });

    test("usage errors exit 2", async () => {
      const results = await Promise.all([
        radius(["alice"]),
        radius(["alice", PASSWORD, "--port", "70000"]),
        radius(["alice", PASSWORD, "--timeout", "soon"]),
      ]);
      for (const result of results) {
        assert.equal(result.code, 2, describeRun(result));
        assert.equal(result.stdout, "");
      }
    });

    test("the attempts were recorded by the server, without the password", async () => {
      const rows = await opened.db
        .selectFrom("radpostauth")
        .select(["username", "reply", "reason", "network_id", "pass"])
        .orderBy("id")
        .execute();
      assert.ok(rows.length >= 5, JSON.stringify(rows));
      assert.ok(rows.every((r) => ["alice", "hashed"].includes(r.username) && r.network_id === lobbyId));
      assert.ok(rows.some((r) => r.reason === "wrong password"));
      assert.ok(!JSON.stringify(rows).includes(PASSWORD));
    });
  });
}

// `wisp sessions list|show|disconnect` and the networks' CoA and accounting options, as operators run
// them: real processes on a fresh SQLite database, a small DAS answering the disconnects.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { openMigratedDatabase } from "../../src/startup.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, wisp } from "../support/processes.ts";

const SECRET = "cli-Sessions-55";

describe("wisp sessions CLI (SQLite)", () => {
  let database: TestDatabase;
  let env: Env;
  let das: TestDas;
  let networkId: number;
  let sessionId: number;

  before(async () => {
    database = await createTestDatabase("sqlite");
    env = databaseEnv(database);
    das = await startTestDas(SECRET);
  });
  after(async () => {
    await das?.close();
    await database?.drop();
  });

  test("networks create/update/show carry the CoA switch and port, interim interval and stale time", async () => {
    const created = await wisp(
      [
        ...["networks", "create", "--name", "lab", "--nas-ip", "127.0.0.1", "--secret", SECRET],
        ...["--coa", "--coa-port", String(das.port), "--interim-interval", "120"],
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    networkId = Number(/created network (\d+) /.exec(created.stderr)?.[1]);
    // Independent runs side by side: spawns are slow.
    const [bad, shown] = await Promise.all([
      wisp(["networks", "update", String(networkId), "--interim-interval", "10"], env),
      wisp(["networks", "show", String(networkId)], env),
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /interim_interval must be 0 \(none sent\) or whole seconds from 60 to 86400/);
    assert.match(shown.stdout, new RegExp(`coa +on, port ${das.port}`));
    assert.match(shown.stdout, /interim_interval +120/);

    // A session, as the access point's accounting opens it.
    const opened = await openMigratedDatabase({
      dataDir: database.dataDir,
      databaseUrl: database.databaseUrl,
    });
    const core = createCore(opened, { publicUrl: "http://localhost" });
    const client = await core.networks.findClientByAddress("127.0.0.1");
    await core.aaa.account(
      client!,
      [
        { attribute: "User-Name", op: "=", value: "cli-alice" },
        { attribute: "Acct-Session-Id", op: "=", value: "cli-1" },
        { attribute: "Acct-Status-Type", op: "=", value: "Start" },
        { attribute: "Calling-Station-Id", op: "=", value: "02-00-00-00-05-01" },
      ],
      "127.0.0.1",
    );
    await core.aaa.drain();
    await opened.close();
  });

  test("sessions list and show; disconnect prints the NAS's answer and fails on a NAK", async () => {
    const listed = await wisp(["sessions", "list", "--status", "active", "--json"], env);
    assert.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout) as { id: number; username: string; client_mac: string }[];
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.username, "cli-alice");
    sessionId = rows[0]!.id;
    const [shown, ack, badStatus] = await Promise.all([
      wisp(["sessions", "show", String(sessionId)], env),
      wisp(["sessions", "disconnect", String(sessionId)], env),
      wisp(["sessions", "list", "--status", "open"], env),
    ]);
    assert.match(shown.stdout, /client_mac +02:00:00:00:05:01/);
    assert.equal(ack.code, 0, ack.stderr);
    assert.equal(ack.stdout, `session ${sessionId}: Disconnect-ACK\n`);
    assert.equal(das.requests.at(-1)?.attribute("User-Name"), "cli-alice");
    assert.notEqual(badStatus.code, 0);
    assert.match(badStatus.stderr, /must be active or closed/);
    das.behaviour = { answer: "nak", errorCause: "Session-Context-Not-Found" };
    const nak = await wisp(["sessions", "disconnect", String(sessionId)], env);
    assert.equal(nak.code, 1);
    assert.equal(nak.stdout, `session ${sessionId}: Disconnect-NAK (Session-Context-Not-Found)\n`);
  });
});

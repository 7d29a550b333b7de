// A change that reaches many sessions (a group's new limit) is queued and paced: the worker goes
// through the sessions a chunk per job (REAUTHORIZATION_CHUNK), and the NAS never gets more
// CoA-Requests in a second than its network's coa_rate. 300 sessions at 100/s: about 3 s.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { COA_JOB } from "../../src/core/sessions/jobs.ts";
import { REAUTHORIZATION_CHUNK } from "../../src/core/sessions/reauthorize.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { eventually } from "../support/accounting.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "pace-Secret-25";
const SESSIONS = 300;
const RATE = 100;

describe("a group's change reaches 300 sessions, paced per NAS", () => {
  let server: TestServer;
  let das: TestDas;

  before(async () => {
    das = await startTestDas(SECRET);
    server = await startTestServer({ dialect: "sqlite", env: { WORKER: "1" } });
    server.core.sessions.das = new DasClient({ timeoutMs: 500, retries: 1 });
  });
  after(async () => {
    await das?.close();
    await server?.stop();
  });

  test(`${SESSIONS} sessions at coa_rate ${RATE}: chunked jobs, never over the rate`, async () => {
    const account = await server.account("default");
    const { network } = await server.core.networks.create(account.id, {
      name: "pace lab",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      coa_enabled: true,
      coa_port: das.port,
      coa_rate: RATE,
    });
    const group = await server.core.groups.create(account.id, { name: "pace-guests" });
    const db = server.core.database.db;
    const now = Math.floor(Date.now() / 1000);
    const names = Array.from({ length: SESSIONS }, (_, i) => `pace-${i}`);
    // Members with open sessions, written as rows (the users API would take longer than the test).
    await db
      .insertInto("radusergroup")
      .values(
        names.map((username) => ({ account_id: account.id, groupname: group.name, username, priority: 1 })),
      )
      .execute();
    await db
      .insertInto("radacct")
      .values(
        names.map((username, i) => ({
          acctsessionid: `pace-${i}`,
          acctuniqueid: randomBytes(16).toString("hex"),
          username,
          nasipaddress: "127.0.0.1",
          acctstarttime: now,
          acctupdatetime: now,
          account_id: account.id,
          network_id: network.id,
        })),
      )
      .execute();

    const started = Date.now();
    await server.core.attributes.addToGroup(account.id, group.id, {
      table: "radgroupreply",
      attribute: "WISPr-Bandwidth-Max-Down",
      operator: ":=",
      value: "1000000",
    });
    await eventually(async () => (das.requests.length >= SESSIONS ? true : undefined), 60_000);
    const seconds = (Date.now() - started) / 1000;
    const coas = das.requests.filter((r) => r.packet.type === "CoA-Request");
    assert.equal(
      new Set(coas.map((r) => r.attribute("Acct-Session-Id"))).size,
      SESSIONS,
      "every session once",
    );

    // In no one-second window more than the rate, give or take 5% for the event loop's jitter in
    // the arrival times (sends are spaced 1000/rate ms apart when they leave).
    const times = coas.map((r) => r.at).sort((a, b) => a - b);
    let busiest = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i]! - times[j]! >= 1000) j++;
      busiest = Math.max(busiest, i - j + 1);
    }
    assert.ok(busiest <= RATE * 1.05, `${busiest} CoA-Requests in one second`);
    assert.ok(seconds >= (SESSIONS - RATE - 1) / RATE, `paced: took ${seconds} s`);

    // One job per chunk, each recorded done with its summary (a full last chunk queues one more,
    // which finds no sessions).
    const jobs = await eventually(async () => {
      const rows = await db
        .selectFrom("jobs")
        .select(["status", "result"])
        .where("kind", "=", COA_JOB)
        .execute();
      return rows.length === SESSIONS / REAUTHORIZATION_CHUNK + 1 && rows.every((r) => r.status === "done")
        ? rows
        : undefined;
    });
    assert.match(jobs[0]!.result ?? "", /ack: 100; sessions after \d+ queued/);
    const rate = SESSIONS / seconds;
    console.log(
      `# ${SESSIONS} CoA-Requests in ${seconds.toFixed(1)} s (${rate.toFixed(0)}/s at coa_rate ${RATE}), busiest second ${busiest}`,
    );
  });
});

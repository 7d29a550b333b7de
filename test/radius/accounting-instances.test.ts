// Accounting for the same sessions arriving at two servers on one PostgreSQL database at once (a
// NAS retransmitting to another instance behind a UDP balancer): each session stays one row with
// the Stop's values, and raises session.started and session.stopped once each. Real UDP packets
// to two servers in this process, which interleave their transactions closely.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput } from "../../src/radius/packet.ts";
import { postgresUnavailable } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "two-Servers-Secret-8";
const T0 = 1_700_000_000;
const SESSIONS = 40;

describe("accounting through two servers on one PostgreSQL", {
  skip: (await postgresUnavailable()) ?? false,
}, () => {
  const servers: { server: TestServer; port: number }[] = [];

  before(async () => {
    for (let i = 0; i < 2; i++) {
      const port = await freeUdpPort();
      const server = await startTestServer({
        dialect: "postgres",
        env: { RADIUS_HOST: "127.0.0.1", RADIUS_ACCT_PORT: String(port), WORKER: "0" },
        ...(servers[0] ? { database: servers[0].server.database } : {}),
      });
      if (i === 0) {
        const account = await server.account("default");
        await server.core.networks.create(account.id, { name: "venue", nas_ip: "127.0.0.1", secret: SECRET });
      }
      servers.push({ server, port });
    }
  });
  after(async () => {
    await servers[1]?.server.stop();
    await servers[0]?.server.stop();
  });

  const send = async (to: number, session: string, status: string, extra: AttributeInput[]) => {
    const answer = await sendRadius({
      code: "Accounting-Request",
      attributes: [
        ["User-Name", "roamer"],
        ["Acct-Session-Id", session],
        ["Acct-Status-Type", status],
        ["NAS-IP-Address", "127.0.0.1"],
        ...extra,
      ],
      host: "127.0.0.1",
      port: servers[to]!.port,
      secret: SECRET,
      timeoutMs: 10_000,
      retries: 0,
    });
    assert.equal(answer.type, "Accounting-Response");
  };

  test("a Stop at both servers, and a late Interim beside it: one row, the Stop's values, one event each", async () => {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `two-${i}`);
    // Both servers' pools are warm before the race (each opened half of the sessions).
    for (const [i, id] of ids.entries()) await send(i % 2, id, "Start", [["Event-Timestamp", T0]]);
    await Promise.all(
      ids.map((id) => {
        const counters = (time: number, octets: number): AttributeInput[] => [
          ["Event-Timestamp", T0 + time],
          ["Acct-Session-Time", time],
          ["Acct-Input-Octets", octets],
        ];
        const stop: AttributeInput[] = [...counters(120, 5000), ["Acct-Terminate-Cause", "User-Request"]];
        return Promise.all([
          send(0, id, "Stop", stop),
          send(1, id, "Stop", stop),
          send(1, id, "Interim-Update", counters(60, 1000)),
        ]);
      }),
    );
    const db = servers[0]!.server.core.database.db;
    const { rows } = await sql<{
      acctsessionid: string;
      stop: number;
      update: number;
      time: number;
      input: number;
    }>`
      select acctsessionid, extract(epoch from acctstoptime)::int as stop,
        extract(epoch from acctupdatetime)::int as update, acctsessiontime as time, acctinputoctets::int as input
      from radacct where acctsessionid like 'two-%'`.execute(db);
    assert.equal(rows.length, SESSIONS, "one row per session");
    for (const row of rows) {
      assert.deepEqual(
        { stop: row.stop, update: row.update, time: row.time, input: row.input },
        { stop: T0 + 120, update: T0 + 120, time: 120, input: 5000 },
        `session ${row.acctsessionid} ends with the Stop's values`,
      );
    }
    const { rows: events } = await sql<{ kind: string; n: number }>`
      select kind, count(*)::int as n from events where kind like 'session.%' group by kind order by kind`.execute(
      db,
    );
    assert.deepEqual(
      events,
      [
        { kind: "session.started", n: SESSIONS },
        { kind: "session.stopped", n: SESSIONS },
      ],
      "one session.started and one session.stopped per session",
    );
  });
});

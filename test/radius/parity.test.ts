// Wisp's embedded RADIUS server against FreeRADIUS 3.2 reading the same Wisp database through
// rlm_sql (deploy/freeradius/configure.sh): identical packets from radclient, identical verdicts
// and reply attributes required. Data is written through Wisp's services, so the rows are Wisp's.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { acctUniqueId } from "../../src/core/aaa/accounting.ts";
import {
  type FreeRadiusLab,
  freeradiusUnavailable,
  freeUdpPort,
  type RadclientReply,
  radclient,
  startFreeRadius,
} from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { useNoonTimeZone } from "../support/time-zone.ts";
import { LOGIN_TIME_CLOCK, PARITY_CASES, type ParityCase } from "./parity-cases.ts";

const SECRET = "parity-secret-1";
/** A second account's network (127.0.0.2): radclient sends from there with Packet-Src-IP-Address. */
const OTHER_SECRET = "parity-secret-2";
// Both servers (FreeRADIUS inherits TZ) count quota periods in a zone where it is noon now: the
// "Max-Daily-Session used up" cases decide the same whenever the suite runs, just after midnight too.
useNoonTimeZone();
const unavailable = freeradiusUnavailable();
if (unavailable) console.log(`# skipping the FreeRADIUS parity suite: ${unavailable}`);

/** Reply attributes as comparable text; Message-Authenticator differs by construction. */
function replyOf(reply: RadclientReply, clockDependent: boolean): string[] {
  return reply.attributes
    .filter(([name]) => name !== "Message-Authenticator")
    .map(([name, value]) => {
      // A Session-Timeout computed from the clock may differ by the second between two servers.
      if (clockDependent && name === "Session-Timeout") return `${name} = ~${Math.round(Number(value) / 10)}`;
      return `${name} = ${value}`;
    })
    .sort();
}

describe("parity with FreeRADIUS 3.2 on one SQLite database", { skip: unavailable ?? false }, () => {
  let server: TestServer;
  let freeradius: FreeRadiusLab;
  /** FreeRADIUS under faketime(1) for the Login-Time cases, started when the first one runs. */
  let clocked: { lab: FreeRadiusLab; offset: number } | undefined;
  let wispPort: number;
  let accounts: { mine: number; theirs: number };
  let networks: { mine: number; theirs: number };

  async function setUp(accountId: number, testCase: ParityCase) {
    const core = server.core;
    const groupIds = new Map<string, number>();
    for (const group of testCase.groups ?? []) {
      const created = await core.groups.create(accountId, { name: group.name });
      groupIds.set(group.name, created.id);
      for (const [attribute, operator, value] of group.check ?? []) {
        await core.attributes.addToGroup(accountId, created.id, {
          table: "radgroupcheck",
          attribute,
          operator,
          value,
        });
      }
      for (const [attribute, operator, value] of group.reply ?? []) {
        await core.attributes.addToGroup(accountId, created.id, {
          table: "radgroupreply",
          attribute,
          operator,
          value,
        });
      }
    }
    const now = Math.floor(Date.now() / 1000);
    for (const user of testCase.users) {
      const created = await core.users.create(accountId, { username: user.username, status: user.status });
      if (user.imported) {
        const rows = (user.check ?? []).map(([attribute, op, value]) => ({
          account_id: accountId,
          username: user.username,
          attribute,
          op,
          value,
        }));
        if (rows.length > 0) await core.database.db.insertInto("radcheck").values(rows).execute();
      }
      for (const [attribute, operator, value] of user.imported ? [] : (user.check ?? [])) {
        await core.attributes.addToUser(accountId, {
          userid: created.id,
          table: "radcheck",
          attribute,
          operator,
          value,
        });
      }
      for (const [attribute, operator, value] of user.reply ?? []) {
        await core.attributes.addToUser(accountId, {
          userid: created.id,
          table: "radreply",
          attribute,
          operator,
          value,
        });
      }
      for (const [group, priority] of user.groups ?? []) {
        await core.groups.addMember(accountId, groupIds.get(group)!, { userid: created.id, priority });
      }
      for (const session of user.sessions ?? []) {
        const start = now - session.startedAgo;
        await core.database.db
          .insertInto("radacct")
          .values({
            acctsessionid: randomBytes(4).toString("hex"),
            acctuniqueid: randomBytes(16).toString("hex"),
            username: user.username,
            nasipaddress: "127.0.0.1",
            acctstarttime: start,
            acctupdatetime: start,
            acctstoptime: session.stopped ? start + (session.sessionTime ?? 0) : null,
            acctsessiontime: session.sessionTime ?? 0,
            account_id: accountId,
          })
          .execute();
      }
    }
  }

  before(async () => {
    wispPort = await freeUdpPort();
    server = await startTestServer({
      dialect: "sqlite",
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(wispPort),
        RADIUS_ACCT_PORT: String(await freeUdpPort()),
      },
    });
    const account = await server.account("default");
    const mine = await server.core.networks.create(account.id, {
      name: "parity lab",
      nas_ip: "127.0.0.1",
      secret: SECRET,
    });
    const second = await server.account("second");
    const theirs = await server.core.networks.create(second.id, {
      name: "second lab",
      nas_ip: "127.0.0.2",
      secret: OTHER_SECRET,
    });
    accounts = { mine: account.id, theirs: second.id };
    networks = { mine: mine.network.id, theirs: theirs.network.id };
    for (const testCase of PARITY_CASES) await setUp(account.id, testCase);
    // FreeRADIUS reads its clients (the nas table) at start: start it once the data is there.
    freeradius = await startFreeRadius(path.join(server.database.dataDir, "wisp.db"));
  });
  after(async () => {
    await clocked?.lab.stop();
    await freeradius?.stop();
    await server?.stop();
  });

  /** Both servers' clocks at LOGIN_TIME_CLOCK now, moving on with the real one. */
  async function loginTimeClock(): Promise<FreeRadiusLab> {
    if (!clocked) {
      const offset = LOGIN_TIME_CLOCK() - Math.floor(Date.now() / 1000);
      // libfaketime's relative form: seconds added to every clock the server reads.
      const faketime = `${offset >= 0 ? "+" : ""}${offset}`;
      clocked = {
        lab: await startFreeRadius(path.join(server.database.dataDir, "wisp.db"), { faketime }),
        offset,
      };
    }
    const { offset } = clocked;
    server.core.aaa.clock = () => Math.floor(Date.now() / 1000) + offset;
    return clocked.lab;
  }

  for (const testCase of PARITY_CASES) {
    test(testCase.name, async () => {
      const reference_ = testCase.loginTimeClock ? await loginTimeClock() : freeradius;
      let wisp: RadclientReply;
      try {
        wisp = await radclient(wispPort, "auth", SECRET, testCase.request);
      } finally {
        server.core.aaa.clock = () => Math.floor(Date.now() / 1000);
      }
      assert.equal(
        wisp.code,
        testCase.expect,
        `Wisp answered ${wisp.code}: ${JSON.stringify(wisp.attributes)}`,
      );
      if (testCase.reply) assert.deepEqual(replyOf(wisp, false), testCase.reply);
      if (testCase.wispOnly) return;
      const reference = await radclient(reference_.authPort, "auth", SECRET, testCase.request);
      assert.equal(reference.code, wisp.code, `FreeRADIUS answered ${reference.code}, Wisp ${wisp.code}`);
      if (wisp.code === "Access-Accept") {
        const clock = testCase.clockDependent ?? false;
        assert.deepEqual(replyOf(wisp, clock), replyOf(reference, clock));
      }
    });
  }

  test("accounting: two accounts' APs with identical session attributes keep their own sessions", async () => {
    // Both accounts' access points send the same NAS-IP-Address, NAS-Identifier and session id;
    // only the address they send from (their Wisp network) differs.
    const base = (
      status: string,
      at: number,
      extra: [string, string][] = [],
      id = "fr-1",
    ): [string, string][] => [
      ["Acct-Status-Type", status],
      ["User-Name", "fr-carol"],
      ["Acct-Session-Id", id],
      ["NAS-IP-Address", "10.0.0.1"],
      ["NAS-Identifier", "shared-ap"],
      ["NAS-Port", "1"],
      ["Event-Timestamp", String(at)],
      ...extra,
    ];
    const send = async (from: "mine" | "theirs", attributes: [string, string][]) => {
      const [address, secret] = from === "mine" ? ["127.0.0.1", SECRET] : ["127.0.0.2", OTHER_SECRET];
      const answer = await radclient(freeradius.acctPort, "acct", secret, [
        ["Packet-Src-IP-Address", address],
        ...attributes,
      ]);
      assert.equal(answer.code, "Accounting-Response", `${from}: ${JSON.stringify(attributes)}`);
    };
    const db = server.core.database.db;
    const rows = () =>
      db.selectFrom("radacct").selectAll().where("username", "=", "fr-carol").orderBy("radacctid").execute();
    const T = 1_790_000_000;
    await send("mine", base("Start", T));
    await send("theirs", base("Start", T + 10));
    let [ours, theirs] = await rows();
    assert.ok(ours && theirs, "a session in each account");
    // The configured FreeRADIUS keys sessions as Wisp's own server does: by account.
    const pairs = base("Start", T).map(([attribute, value]) => ({ attribute, op: "=", value }));
    assert.deepEqual(
      [ours.acctuniqueid, ours.account_id, ours.network_id, Number(ours.acctstarttime)],
      [acctUniqueId(pairs, accounts.mine), accounts.mine, networks.mine, T],
    );
    assert.deepEqual(
      [theirs.acctuniqueid, theirs.account_id, theirs.network_id, Number(theirs.acctstarttime)],
      [acctUniqueId(pairs, accounts.theirs), accounts.theirs, networks.theirs, T + 10],
    );

    // Their Interim-Update and Stop change their session only.
    await send(
      "theirs",
      base("Interim-Update", T + 60, [
        ["Acct-Session-Time", "50"],
        ["Acct-Input-Octets", "777"],
      ]),
    );
    [ours, theirs] = await rows();
    assert.deepEqual([Number(ours!.acctinputoctets), Number(theirs!.acctinputoctets)], [0, 777]);
    await send("mine", base("Stop", T + 120, [["Acct-Session-Time", "120"]]));
    [ours, theirs] = await rows();
    assert.deepEqual([Number(ours!.acctsessiontime), ours!.acctstoptime === null], [120, false]);
    assert.equal(theirs!.acctstoptime, null, "their session stays open");

    // An Accounting-On from their NAS (same NAS-IP-Address) closes their sessions only.
    await send("mine", base("Start", T + 200, [], "fr-2"));
    await send("theirs", [
      ["Acct-Status-Type", "Accounting-On"],
      ["NAS-IP-Address", "10.0.0.1"],
      ["Acct-Session-Id", "0"],
      ["Event-Timestamp", String(T + 300)],
    ]);
    const after = await rows();
    assert.equal(after.length, 3);
    assert.deepEqual(
      after.map((row) => [row.acctsessionid, row.account_id, row.acctstoptime === null]),
      [
        ["fr-1", accounts.mine, false],
        ["fr-1", accounts.theirs, false],
        ["fr-2", accounts.mine, true],
      ],
    );
  });
});

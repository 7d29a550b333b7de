// Issue 28, point 3: moving from FreeRADIUS on MySQL to Wisp keeps every login's outcome. A real
// MariaDB holds FreeRADIUS 3.2's own MySQL schema and daloRADIUS's userinfo, seeded with the login
// table's users (every password item in every stored form, groups, check operators, replies) and
// some history; the stock FreeRADIUS serves it through rlm_sql_mysql. `wisp import freeradius`
// (the real command) brings it into a fresh Wisp, and the same radclient requests to the original
// FreeRADIUS and to Wisp's RADIUS server must get the same verdicts and reply attributes.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { PARITY_CASES, type ParityCase } from "../radius/parity-cases.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import {
  type FreeRadiusLab,
  freeradiusUnavailable,
  freeUdpPort,
  type RadclientReply,
  radclient,
} from "../support/freeradius-lab.ts";
import { freeradiusMysqlUnavailable, startFreeRadiusOnMysql } from "../support/freeradius-mysql.ts";
import {
  DALORADIUS_USERINFO,
  type MariaDbLab,
  mariadbUnavailable,
  startMariaDb,
} from "../support/mariadb-lab.ts";
import { databaseEnv, type ProcessResult, wisp } from "../support/processes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { useNoonTimeZone } from "../support/time-zone.ts";

const SECRET = "import-parity-1";
useNoonTimeZone();
const unavailable = freeradiusUnavailable() ?? mariadbUnavailable() ?? freeradiusMysqlUnavailable();
if (unavailable) console.log(`# skipping the import parity suite: ${unavailable}`);

/** Cases the original (stock FreeRADIUS on MySQL) cannot express, each with why. */
function excluded(testCase: ParityCase): string | null {
  if (testCase.wispOnly) return testCase.wispOnly;
  if (testCase.users.some((u) => u.status === "disabled"))
    return "a disabled Wisp user has no FreeRADIUS form";
  if (testCase.users.some((u) => (u.sessions ?? []).length > 0)) {
    return "session counters need rlm_sqlcounter and session sql, which the stock configuration leaves off";
  }
  // MySQL's default collation compares ignoring case, so FreeRADIUS on MySQL matched "Alice" for
  // "alice"; Wisp (and FreeRADIUS on PostgreSQL or SQLite) match names exactly. The README says so.
  if (testCase.name === "usernames match exactly, not ignoring case") return "MySQL's collation ignores case";
  // The stock FreeRADIUS here runs on the real clock; Login-Time's answers depend on the time of
  // day, so those cases run only in test/radius/parity.test.ts, where both clocks are set.
  if (testCase.loginTimeClock) return "Login-Time cases need both servers' clocks set";
  return null;
}

const CASES = PARITY_CASES.filter((c) => excluded(c) === null);

function replyOf(reply: RadclientReply, clockDependent: boolean): string[] {
  return reply.attributes
    .filter(([name]) => name !== "Message-Authenticator")
    .map(([name, value]) => {
      if (clockDependent && name === "Session-Timeout") return `${name} = ~${Math.round(Number(value) / 10)}`;
      return `${name} = ${value}`;
    })
    .sort();
}

/** Writes the cases' users and groups into FreeRADIUS's tables, as an operator's database holds them. */
async function seed(mariadb: MariaDbLab) {
  const db = await mariadb.connect("radius");
  try {
    await db.query("insert into nas (nasname, shortname, secret, description) values (?, ?, ?, ?)", [
      "127.0.0.1",
      "lab",
      SECRET,
      "the lab's access points",
    ]);
    for (const testCase of CASES) {
      for (const group of testCase.groups ?? []) {
        for (const [table, rows] of [
          ["radgroupcheck", group.check ?? []],
          ["radgroupreply", group.reply ?? []],
        ] as const) {
          for (const [attribute, op, value] of rows) {
            await db.query(`insert into ${table} (groupname, attribute, op, value) values (?, ?, ?, ?)`, [
              group.name,
              attribute,
              op,
              value,
            ]);
          }
        }
      }
      for (const user of testCase.users) {
        for (const [table, rows] of [
          ["radcheck", user.check ?? []],
          ["radreply", user.reply ?? []],
        ] as const) {
          for (const [attribute, op, value] of rows) {
            await db.query(`insert into ${table} (username, attribute, op, value) values (?, ?, ?, ?)`, [
              user.username,
              attribute,
              op,
              value,
            ]);
          }
        }
        for (const [group, priority] of user.groups ?? []) {
          await db.query("insert into radusergroup (username, groupname, priority) values (?, ?, ?)", [
            user.username,
            group,
            priority,
          ]);
        }
        await db.query(
          "insert into userinfo (username, firstname, lastname, email, mobilephone) values (?, ?, ?, ?, ?)",
          [user.username, "Test", user.username, `${user.username}@example.org`, "+34 600 000 000"],
        );
      }
    }
    // History: two closed sessions and two attempts of the first case's user, as FreeRADIUS wrote them.
    const username = CASES[0]!.users[0]!.username;
    for (const [id, start, stop] of [
      ["hist-1", "2026-02-01 08:00:00", "2026-02-01 09:00:00"],
      ["hist-2", "2026-02-02 08:00:00", "2026-02-02 08:30:00"],
    ]) {
      await db.query(
        `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime,
          acctsessiontime, acctinputoctets, acctoutputoctets, calledstationid, callingstationid, acctterminatecause)
         values (?, md5(?), ?, '127.0.0.1', ?, ?, timestampdiff(second, ?, ?), 1000, 2000, 'AA-BB-CC-DD-EE-FF:Lab', '11-22-33-44-55-66', 'User-Request')`,
        [id, id, username, start, stop, start, stop],
      );
    }
    await db.query(
      "insert into radpostauth (username, pass, reply, authdate) values (?, 'pw', 'Access-Accept', now()), (?, 'x', 'Access-Reject', now())",
      [username, username],
    );
  } finally {
    await db.end();
  }
}

describe("moving from FreeRADIUS on MySQL: identical logins after wisp import freeradius", {
  skip: unavailable ?? false,
}, () => {
  let mariadb: MariaDbLab;
  let freeradius: FreeRadiusLab;
  let target: TestDatabase;
  let server: TestServer;
  let imported: ProcessResult;
  let wispPort: number;

  before(async () => {
    mariadb = await startMariaDb();
    mariadb.createRadiusDatabase("radius");
    mariadb.exec(DALORADIUS_USERINFO, "radius");
    await seed(mariadb);
    freeradius = await startFreeRadiusOnMysql(mariadb, "radius");
    target = await createTestDatabase("sqlite");
    imported = await wisp(
      ["import", "freeradius", mariadb.url(), "--history", "--json"],
      databaseEnv(target),
    );
    wispPort = await freeUdpPort();
    server = await startTestServer({
      database: target,
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(wispPort),
        RADIUS_ACCT_PORT: String(await freeUdpPort()),
      },
    });
  });
  after(async () => {
    await server?.stop();
    await target?.drop();
    await freeradius?.stop();
    await mariadb?.stop();
  });

  test("the import ran, and skipped only users whose password Wisp cannot check", () => {
    assert.equal(imported.code, 0, imported.stderr);
    const summary = JSON.parse(imported.stdout);
    assert.equal(summary.counts.networks.created, 1);
    const skipped = summary.skipped.map(
      (s: { name: string; reasons: string[] }) => `${s.name}: ${s.reasons.join("; ")}`,
    );
    for (const line of skipped) assert.match(line, /not supported by Wisp/, line);
    const users = new Set(CASES.flatMap((c) => c.users.map((u) => u.username)));
    assert.equal(summary.counts.users.created + summary.counts.users.skipped, users.size);
    console.log(
      `imported ${summary.counts.users.created} users, ${summary.counts.groups.created} groups, ` +
        `${summary.notes.length} password items as they were; skipped ${summary.counts.users.skipped} in ${summary.seconds} s`,
    );
  });

  test("the history came along: the user's sessions through the API, and the attempts", async () => {
    const summary = JSON.parse(imported.stdout);
    assert.deepEqual([summary.counts.radacct.created, summary.counts.radpostauth.created], [2, 2]);
    const account = await server.account("default");
    const key = await server.key(account);
    const username = CASES[0]!.users[0]!.username;
    const user = await server.core.database.db
      .selectFrom("users")
      .select("id")
      .where("username", "=", username)
      .executeTakeFirstOrThrow();
    const sessions = await server.call("GET", `/api/sessions?user_id=${user.id}`, { key });
    assert.equal(sessions.status, 200, sessions.text);
    assert.equal(sessions.body.data.length, 2, sessions.text);
    for (const session of sessions.body.data) assert.equal(session.user_id, user.id);
    const attempts = await server.core.database.db
      .selectFrom("radpostauth")
      .select(["reply", "pass", "user_id"])
      .where("username", "=", username)
      .execute();
    assert.deepEqual(attempts.map((a) => [a.reply, a.pass, a.user_id]).sort(), [
      ["Access-Accept", "", user.id],
      ["Access-Reject", "", user.id],
    ]);
  });

  for (const testCase of CASES) {
    test(testCase.name, async () => {
      const reference = await radclient(freeradius.authPort, "auth", SECRET, testCase.request);
      assert.equal(reference.code, testCase.expect, `FreeRADIUS on MySQL answered ${reference.code}`);
      const answer = await radclient(wispPort, "auth", SECRET, testCase.request);
      assert.equal(answer.code, reference.code, `FreeRADIUS answered ${reference.code}, Wisp ${answer.code}`);
      if (answer.code === "Access-Accept") {
        const clock = testCase.clockDependent ?? false;
        assert.deepEqual(replyOf(answer, clock), replyOf(reference, clock));
      }
    });
  }
});

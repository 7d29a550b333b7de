// `wisp import freeradius` on hostile data (issue 28, point 2): a real MariaDB with FreeRADIUS's
// MySQL schema and daloRADIUS's userinfo, holding good rows and every kind of bad one. What is
// valid is imported whole, every refusal names its table, row and reason, a dry run writes nothing,
// a second run changes nothing, --strict writes nothing when anything would be skipped, and a
// source that goes away part-way leaves the committed chunks and a run that resumes. Wisp's side
// runs on SQLite and PostgreSQL; SQLite and PostgreSQL sources are read too.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import Sqlite from "better-sqlite3";
import pg from "pg";
import { ImportInterrupted, type ImportSummary, type Skipped } from "../../src/core/imports/service.ts";
import { openSource, parseSourceUrl, type SourceDb } from "../../src/core/imports/source-db.ts";
import { FreeradiusSource } from "../../src/core/imports/source-repo.ts";
import { type Core, createCore } from "../../src/core/index.ts";
import type { Database } from "../../src/db/database.ts";
import {
  createTestDatabase,
  dialects,
  PG_ADMIN_URL,
  postgresUnavailable,
  type TestDatabase,
  tempDir,
  withDatabase,
} from "../support/databases.ts";
import {
  DALORADIUS_USERINFO,
  type MariaDbLab,
  mariadbUnavailable,
  startMariaDb,
} from "../support/mariadb-lab.ts";
import { databaseEnv, type ProcessResult, wisp } from "../support/processes.ts";

const unavailable = mariadbUnavailable();
const DIALECTS = await dialects();
if (unavailable) console.log(`# skipping the MariaDB import suite: ${unavailable}`);

const hex = (algorithm: string, text: string) => createHash(algorithm).update(text).digest("hex");
const SSHA_SALT = Buffer.from("salt1234");
const ssha = (password: string) =>
  Buffer.concat([createHash("sha1").update(password).update(SSHA_SALT).digest(), SSHA_SALT]).toString(
    "base64",
  );
const YESCRYPT = "$y$j9T$WispSaltWispSalt$k56dIbKoRbCk56BBlawADFBah1wjxhhx3X1/u7KdxQB";

/** The source: [table, columns, rows]. Good users, groups and networks beside every kind of bad row. */
const SEED: [string, string[], unknown[][]][] = [
  [
    "nas",
    ["nasname", "shortname", "secret", "description", "server"],
    [
      ["10.1.0.0/24", "lobby", "lobby-secret-1", "Lobby APs", null],
      ["192.0.2.10", "short", "secret", "RADIUS Client", null],
      ["radius.example.org", "by-name", "hostname-secret-1", "RADIUS Client", null],
      ["10.9.1.1", "neighbour", "neighbour-secret", "RADIUS Client", null],
      ["10.1.0.0/24", "lobby again", "another-secret-2", "RADIUS Client", null],
      ["10.0.0.0/8", "everything", "everything-secret", "RADIUS Client", null],
      ["192.0.2.20", "roof", "roof-secret-123", "Roof AP", "guests"],
    ],
  ],
  [
    "radgroupcheck",
    ["groupname", "attribute", "op", "value"],
    [
      ["staff", "Simultaneous-Use", ":=", "2"],
      ["daloRADIUS-Disabled-Users", "Auth-Type", ":=", "Reject"],
      ["Guests", "Auth-Type", ":=", "Accept"],
      ["guests", "Auth-Type", ":=", "Reject"],
    ],
  ],
  [
    "radgroupreply",
    ["groupname", "attribute", "op", "value"],
    [
      ["staff", "Session-Timeout", ":=", "3600"],
      ["staff", "Reply-Message", "=", "welcome staff"],
      ["broken", "Bogus-Attribute", "=", "1"],
    ],
  ],
  [
    "radcheck",
    ["username", "attribute", "op", "value"],
    [
      ["alice", "Cleartext-Password", ":=", "alice pw"],
      ["bob", "MD5-Password", ":=", hex("md5", "bob pw")],
      ["carol", "SSHA-Password", ":=", ssha("carol pw")],
      ["carol", "Simultaneous-Use", ":=", "1"],
      ["dave", "Cleartext-Password", ":=", "dave pw"],
      ["eve", "Cleartext-Password", ":=", "eve pw"],
      ["mallory", "Cleartext-Password", "", "mallory pw"],
      ["unknown", "Foo-Bar-Baz", ":=", "1"],
      ["bad user", "Cleartext-Password", ":=", "pw"],
      ["Frank", "Cleartext-Password", ":=", "frank pw"],
      ["frank", "Cleartext-Password", ":=", "other frank pw"],
      ["hashy", "MD5-Password", ":=", "abcd"],
      ["yes", "Crypt-Password", ":=", YESCRYPT],
      ["taken", "Cleartext-Password", ":=", "source pw"],
      ["caseuser", "Cleartext-Password", ":=", "case pw"],
      ["", "Cleartext-Password", ":=", "nobody"],
    ],
  ],
  [
    "radreply",
    ["username", "attribute", "op", "value"],
    [
      ["alice", "Idle-Timeout", ":=", "600"],
      ["oscar", "Exec-Program", ":=", "/bin/sh"],
      ["quoted", "Reply-Message", ":=", '"hi"'],
      ["expands", "Reply-Message", ":=", "%{User-Name}"],
    ],
  ],
  [
    "radusergroup",
    ["username", "groupname", "priority"],
    [
      ["alice", "staff", 1],
      ["dave", "daloRADIUS-Disabled-Users", 0],
      ["eve", "broken", 1],
      ["carol", "staff", 2],
      ["carol", "staff", 3],
    ],
  ],
  [
    "userinfo",
    ["username", "firstname", "lastname", "email", "mobilephone", "workphone"],
    [
      ["alice", "Alice", "Liddell", "alice@example.org", "+44 20 7946 0000", ""],
      ["bob", "Bob", "", "not-an-email", "", "+1 555 0100"],
      ["ghost", "Ghost", "User", "ghost@example.org", "", ""],
    ],
  ],
  [
    "radacct",
    [
      "acctsessionid",
      "acctuniqueid",
      "username",
      "nasipaddress",
      "acctstarttime",
      "acctstoptime",
      "acctsessiontime",
      "acctinputoctets",
      "acctoutputoctets",
      "calledstationid",
      "callingstationid",
      "acctterminatecause",
      "framedipaddress",
    ],
    [
      [
        "s1",
        "u1",
        "alice",
        "10.1.0.5",
        "2026-01-10 10:00:00",
        "2026-01-10 11:00:00",
        3600,
        1000,
        2000,
        "AA-BB-CC-DD-EE-FF:Lobby",
        "11-22-33-44-55-66",
        "User-Request",
        "10.2.0.7",
      ],
      [
        "s2",
        "u2",
        "bob",
        "10.1.0.5",
        "2026-01-11 09:00:00",
        null,
        60,
        10,
        20,
        "AA-BB-CC-DD-EE-FF:Lobby",
        "11-22-33-44-55-77",
        "",
        "10.2.0.8",
      ],
      [
        "s3",
        "u3",
        "alice",
        "10.1.0.5",
        "2026-01-12 09:00:00",
        "2026-01-12 09:10:00",
        600,
        1,
        2,
        "",
        "",
        "",
        "not-an-ip",
      ],
    ],
  ],
  [
    "radpostauth",
    ["username", "pass", "reply", "authdate"],
    [
      ["alice", "alice pw", "Access-Accept", "2026-01-10 10:00:00"],
      ["mallory", "guess", "Access-Reject", "2026-01-10 10:05:00"],
    ],
  ],
];

async function seed(mariadb: MariaDbLab, database: string) {
  mariadb.createRadiusDatabase(database);
  mariadb.exec(DALORADIUS_USERINFO, database);
  const db = await mariadb.connect(database);
  try {
    for (const [table, columns, rows] of SEED) {
      for (const row of rows) {
        await db.query(`insert into ${table} (${columns.join(", ")}) values (?)`, [row]);
      }
    }
  } finally {
    await db.end();
  }
}

const SKIP_REASONS: [string, RegExp][] = [
  ['network "192.0.2.10"', /the secret must be 8-128 printable ASCII/],
  [
    'network "radius.example.org"',
    /is not an IP address or CIDR \(Wisp networks are addresses, not host names\)/,
  ],
  ['network "10.9.1.1"', /overlaps another account's network/],
  ['network "10.1.0.0/24"', /already a network of this account, with another secret/],
  ['network "10.0.0.0/8"', /wider than this server allows/],
  [
    'group "broken"',
    /radgroupreply id \d+ \(Bogus-Attribute\): attribute "Bogus-Attribute" is not in the RADIUS dictionary/,
  ],
  ['group "Guests"', /group names "Guests", "guests" differ only in case/],
  ['group "guests"', /differ only in case/],
  ['user "eve"', /radusergroup id \d+: member of group "broken", which is skipped/],
  ['user "mallory"', /radcheck id \d+ \(Cleartext-Password\): the op column is empty/],
  ['user "unknown"', /attribute "Foo-Bar-Baz" is not in the RADIUS dictionary/],
  ['user "bad user"', /the user name may only contain letters, digits and @ \. _ : -/],
  ['user "Frank"', /user names "Frank", "frank" differ only in case/],
  ['user "frank"', /differ only in case/],
  ['user "yes"', /Crypt-Password\): value is not usable: crypt scheme \$y\$ \(not supported by Wisp\)/],
  ['user "oscar"', /Exec-Program would run a program on the RADIUS server/],
  ['user "quoted"', /must not be wrapped in quotes/],
  ['user "expands"', /must not contain %\{/],
  ['user "carol"', /in group "staff" a second time \(radusergroup id \d+\)/],
  ['user "taken"', /already has a user "taken" with other attributes or groups; left as it is/],
  ['user "caseuser"', /the account has a user "CaseUser"; names are unique ignoring case/],
  ['session "radacct id 3"', /framedipaddress "not-an-ip" is not an IP address/],
];

const CREATED = { networks: 2, groups: 2, users: 5, radacct: 2, radpostauth: 2 };

function describeRun(result: ProcessResult): string {
  return `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

/** What the account must hold before an import: a taken name, a case clash, another account's network. */
async function prepare(core: Core) {
  const account = await core.accounts.resolve(undefined);
  await core.users.create(account.id, { username: "taken", password: "wisp pw" });
  await core.users.create(account.id, { username: "CaseUser", password: "wisp pw" });
  const other = await core.accounts.create("neighbours");
  await core.networks.create(other.id, {
    name: "neighbours",
    nas_ip: "10.9.0.0/16",
    secret: "their-secret-1",
  });
  return account;
}

/** Every row an import writes, as comparable text (ids and times aside). */
async function snapshot(database: Database) {
  const db = database.db;
  const pick = async (
    table:
      | "users"
      | "radcheck"
      | "radreply"
      | "radusergroup"
      | "groups"
      | "radgroupcheck"
      | "radgroupreply"
      | "nas"
      | "radacct"
      | "radpostauth",
    columns: string[],
  ) =>
    (await db.selectFrom(table).selectAll().execute())
      // op is char(2): PostgreSQL pads "=" to "= ".
      .map((row) =>
        columns
          .map((c) => String((row as Record<string, unknown>)[c]).replace(/^(=|:=|\+=|==) $/, "$1"))
          .join("|"),
      )
      .sort();
  return {
    users: await pick("users", ["username", "email", "fullname", "phone", "status"]),
    radcheck: await pick("radcheck", ["username", "attribute", "op", "value"]),
    radreply: await pick("radreply", ["username", "attribute", "op", "value"]),
    radusergroup: await pick("radusergroup", ["username", "groupname", "priority"]),
    groups: await pick("groups", ["name"]),
    radgroupcheck: await pick("radgroupcheck", ["groupname", "attribute", "op", "value"]),
    radgroupreply: await pick("radgroupreply", ["groupname", "attribute", "op", "value"]),
    nas: await pick("nas", ["nasname", "name", "secret", "description", "account_id"]),
    radacct: await pick("radacct", [
      "acctuniqueid",
      "username",
      "account_id",
      "user_id",
      "acctsessiontime",
      "client_mac",
      "ap_mac",
      "ssid",
    ]),
    radpostauth: await pick("radpostauth", ["username", "reply", "pass", "account_id"]),
  };
}

interface Collected {
  summary: ImportSummary;
  skipped: Skipped[];
  notes: string[];
}

async function runImport(
  core: Core,
  source: SourceDb,
  accountId: number,
  options: { dryRun?: boolean; chunkSize?: number } = {},
): Promise<Collected> {
  const skipped: Skipped[] = [];
  const notes: string[] = [];
  const summary = await core.imports.run(
    new FreeradiusSource(source),
    { accountId, dryRun: options.dryRun ?? false, history: true, chunkSize: options.chunkSize },
    { skipped: (item) => skipped.push(item), note: (text) => notes.push(text) },
  );
  return { summary, skipped, notes };
}

function skipLines(skipped: Skipped[]): string[] {
  const kind = {
    networks: "network",
    groups: "group",
    users: "user",
    radacct: "session",
    radpostauth: "attempt",
  };
  return skipped.map((s) => `${kind[s.phase]} "${s.name}": ${s.reasons.join("; ")}`);
}

function assertEverySkip(lines: string[]) {
  for (const [name, reason] of SKIP_REASONS) {
    const line = lines.find((l) => l.startsWith(name));
    assert.ok(line, `no skip for ${name} in:\n${lines.join("\n")}`);
    assert.match(line, reason);
  }
  assert.equal(lines.length, SKIP_REASONS.length, lines.join("\n"));
}

describe("wisp import freeradius from MariaDB", { skip: unavailable ?? false }, () => {
  let mariadb: MariaDbLab;

  before(async () => {
    mariadb = await startMariaDb();
    await seed(mariadb, "radius");
    mariadb.exec("create database empty; grant all on empty.* to 'radius'@'%'");
  });
  after(async () => {
    await mariadb?.stop();
  });

  describe("the command", () => {
    let target: TestDatabase;
    before(async () => {
      target = await createTestDatabase("sqlite");
      await withCoreOn(target, prepare);
    });
    after(async () => target?.drop());

    test("a dry run lists what it would create and every skip with its reason, and writes nothing", async () => {
      const before = await withCoreOn(target, (core) => snapshot(core.database));
      const result = await wisp(
        ["import", "freeradius", mariadb.url(), "--dry-run", "--history"],
        databaseEnv(target),
      );
      assert.equal(result.code, 0, describeRun(result));
      const lines = result.stdout.split("\n");
      assertEverySkip(lines.filter((l) => l.startsWith("skipped ")).map((l) => l.slice("skipped ".length)));
      assert.match(
        result.stdout,
        /^dry run \(nothing written\): mysql:\/\/radius@127\.0\.0\.1:\d+\/radius into account default/m,
      );
      assert.match(result.stdout, /^users\s+5\s+0\s+13\s+18$/m, result.stdout);
      assert.match(
        result.stdout,
        /^note: userinfo id 2: email "not-an-email" is not an email address; left empty$/m,
      );
      assert.match(result.stdout, /note: radcheck: 1 row\(s\) with an empty username left out/);
      assert.ok(
        !result.stdout.includes("radpass") && !result.stderr.includes("radpass"),
        "the password is never printed",
      );
      assert.deepEqual(await withCoreOn(target, (core) => snapshot(core.database)), before);
    });

    test("--strict writes nothing when anything would be skipped", async () => {
      const before = await withCoreOn(target, (core) => snapshot(core.database));
      const result = await wisp(["import", "freeradius", mariadb.url(), "--strict"], databaseEnv(target));
      assert.equal(result.code, 1, describeRun(result));
      assert.match(
        result.stderr,
        /--strict: 2[12] item\(s\) would be skipped \(listed above\); nothing was written/,
      );
      assert.deepEqual(await withCoreOn(target, (core) => snapshot(core.database)), before);
    });

    test("the password can come from standard input, and --json gives the summary", async () => {
      const url = mariadb.url().replace(":radpass@", "@");
      const result = await wisp(
        ["import", "freeradius", url, "--password-stdin", "--json", "--dry-run"],
        databaseEnv(target),
        "radpass\n",
      );
      assert.equal(result.code, 0, describeRun(result));
      const summary = JSON.parse(result.stdout);
      assert.equal(summary.dryRun, true);
      assert.equal(summary.counts.users.created, 5);
      assert.equal(summary.skipped.length, SKIP_REASONS.length - 1, "history is off: no session skipped");
    });

    test("an unreachable source or a bad URL is refused with a clear message", async () => {
      const gone = await wisp(
        ["import", "freeradius", "mysql://radius:topsecret@127.0.0.1:1/radius"],
        databaseEnv(target),
      );
      assert.equal(gone.code, 1, describeRun(gone));
      assert.match(gone.stderr, /ECONNREFUSED|connect/i);
      assert.ok(!gone.stderr.includes("topsecret"), gone.stderr);
      const bad = await wisp(["import", "freeradius", "ftp://example.org/radius"], databaseEnv(target));
      assert.notEqual(bad.code, 0, describeRun(bad));
      assert.match(bad.stderr, /source must be mysql:\/\/user:password@host:port\/database/);
      const notRadius = await wisp(["import", "freeradius", mariadb.url("empty")], databaseEnv(target));
      assert.match(
        notRadius.stderr,
        /is not a FreeRADIUS database: it has none of the tables radcheck/,
        describeRun(notRadius),
      );
    });
  });

  for (const { dialect, skip } of DIALECTS) {
    describe(`into Wisp on ${dialect}`, { skip }, () => {
      test("imports what is valid, whole, skips the rest with reasons; a second run changes nothing", () =>
        withDatabase(dialect, async (database) => {
          const core = createCore(database, { publicUrl: "http://127.0.0.1" });
          const account = await prepare(core);
          const source = await openSource(parseSourceUrl(mariadb.url()));
          try {
            const first = await runImport(core, source, account.id);
            assertEverySkip(skipLines(first.skipped));
            for (const [phase, count] of Object.entries(CREATED)) {
              assert.equal(first.summary.counts[phase as keyof typeof CREATED].created, count, phase);
            }
            assert.ok(
              first.notes.some((n) =>
                /radcheck id \d+ \(MD5-Password\): value is not a valid MD5-Password: MD5-Password of the wrong length; imported as it is/.test(
                  n,
                ),
              ),
              first.notes.join("\n"),
            );
            assert.ok(
              first.notes.some((n) => /nas id 7: virtual server "guests" is not carried over/.test(n)),
            );
            const rows = await snapshot(database);
            assert.deepEqual(
              rows.users.filter((u) => !["taken", "CaseUser"].some((n) => u.startsWith(`${n}|`))),
              [
                "alice|alice@example.org|Alice Liddell|+44 20 7946 0000|enabled",
                "bob||Bob|+1 555 0100|enabled",
                "dave||||enabled",
                "ghost|ghost@example.org|Ghost User||enabled",
                "hashy||||enabled",
              ],
            );
            assert.ok(rows.radcheck.includes("alice|Cleartext-Password|:=|alice pw"));
            assert.ok(rows.radcheck.includes(`bob|MD5-Password|:=|${hex("md5", "bob pw")}`));
            assert.ok(rows.radcheck.includes("hashy|MD5-Password|:=|abcd"));
            assert.deepEqual(rows.radreply, ["alice|Idle-Timeout|:=|600"]);
            assert.deepEqual(rows.radusergroup, ["alice|staff|1", "dave|daloRADIUS-Disabled-Users|0"]);
            assert.deepEqual(rows.groups, ["daloRADIUS-Disabled-Users", "staff"]);
            assert.deepEqual(rows.radgroupreply, [
              "staff|Reply-Message|=|welcome staff",
              "staff|Session-Timeout|:=|3600",
            ]);
            assert.deepEqual(
              rows.nas.filter((n) => n.endsWith(`|${account.id}`)),
              [
                `10.1.0.0/24|lobby|lobby-secret-1|Lobby APs|${account.id}`,
                `192.0.2.20|roof|roof-secret-123|Roof AP|${account.id}`,
              ],
            );
            const alice = (
              await database.db
                .selectFrom("users")
                .select("id")
                .where("username", "=", "alice")
                .executeTakeFirstOrThrow()
            ).id;
            assert.deepEqual(rows.radacct, [
              `u1|alice|${account.id}|${alice}|3600|11:22:33:44:55:66|aa:bb:cc:dd:ee:ff|Lobby`,
              `u2|bob|${account.id}|${(await database.db.selectFrom("users").select("id").where("username", "=", "bob").executeTakeFirstOrThrow()).id}|60|11:22:33:44:55:77|aa:bb:cc:dd:ee:ff|Lobby`,
            ]);
            assert.deepEqual(
              rows.radpostauth,
              [`alice|Access-Accept||${account.id}`, `mallory|Access-Reject||${account.id}`],
              "never the password tried",
            );

            const second = await runImport(core, source, account.id);
            for (const phase of ["networks", "groups", "users", "radacct", "radpostauth"] as const) {
              assert.equal(second.summary.counts[phase].created, 0, phase);
            }
            assert.equal(second.summary.counts.users.unchanged, 5);
            assert.equal(second.summary.counts.groups.unchanged, 2);
            assert.equal(second.summary.counts.networks.unchanged, 2);
            assert.deepEqual(await snapshot(database), rows);
          } finally {
            await source.close();
          }
        }));
    });
  }

  test("a source connection killed mid-query fails that query and leaves no timer behind", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    const source = await openSource(parseSourceUrl(mariadb.url()));
    const [{ id }] = (await source.query("select connection_id() as id")) as [{ id: number }];
    const slow = assert.rejects(source.query("select sleep(30)"), /Connection lost|closed/);
    // The query is on its way; the server ends the connection under it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const root = await mariadb.connect();
    await root.query(`kill ${Number(id)}`);
    await root.end();
    await slow;
    await source.close();
    await new Promise((resolve) => setImmediate(resolve));
    // With mysql2's own query timeout, its 5-minute timer outlived the connection and held the
    // process open after a failed import.
    assert.equal(timers(), before, process.getActiveResourcesInfo().join(", "));
  });

  test("the source going away part-way: committed chunks stay, said, and the same import resumes", () =>
    withDatabase("sqlite", async (database) => {
      const core = createCore(database, { publicUrl: "http://127.0.0.1" });
      const account = await prepare(core);
      const source = await openSource(parseSourceUrl(mariadb.url()));
      const [{ id }] = (await source.query("select connection_id() as id")) as [{ id: number }];
      // Kill the connection from the server's side once the third chunk of users is being read.
      let ranges = 0;
      const dying: SourceDb = {
        ...source,
        query: async (text, params) => {
          if (text.includes("from radcheck where username > ? and username <= ?") && ++ranges === 3) {
            const root = await mariadb.connect();
            await root.query(`kill ${Number(id)}`);
            await root.end();
          }
          return source.query(text, params);
        },
      };
      const interrupted = await runImport(core, dying, account.id, { chunkSize: 2 }).then(
        () => assert.fail("the import should have stopped"),
        (error: unknown) => error,
      );
      assert.ok(interrupted instanceof ImportInterrupted, String(interrupted));
      assert.equal(interrupted.phase, "users");
      assert.match(
        interrupted.message,
        /the import stopped during users: .*(closed|lost|killed|ended|ECONNRESET|interrupted)/i,
      );
      const partial = await database.db
        .selectFrom("users")
        .select("username")
        .where("account_id", "=", account.id)
        .execute();
      assert.ok(
        partial.length > 2 && partial.length < 7,
        `some users committed: ${partial.map((u) => u.username)}`,
      );
      const progress = await database.db
        .selectFrom("import_progress")
        .selectAll()
        .where("phase", "=", "users")
        .executeTakeFirstOrThrow();
      assert.equal(progress.finished, 0);
      assert.notEqual(progress.cursor, "");

      const again = await openSource(parseSourceUrl(mariadb.url()));
      try {
        const resumed = await runImport(core, again, account.id, { chunkSize: 2 });
        assert.ok(
          resumed.notes.some((n) => n.startsWith(`users: resuming after "${progress.cursor}"`)),
          resumed.notes.join("\n"),
        );
        const names = (
          await database.db
            .selectFrom("users")
            .select("username")
            .where("account_id", "=", account.id)
            .execute()
        )
          .map((u) => u.username)
          .sort();
        assert.deepEqual(names, ["CaseUser", "alice", "bob", "dave", "ghost", "hashy", "taken"]);
        const done = await database.db
          .selectFrom("import_progress")
          .selectAll()
          .where("phase", "=", "users")
          .executeTakeFirstOrThrow();
        assert.equal(done.finished, 1);
      } finally {
        await again.close();
        await source.close().catch(() => {});
      }
    }));
});

/** Opens a test database's core for one function (the CLI tests look at what the command wrote). */
async function withCoreOn<T>(target: TestDatabase, fn: (core: Core) => Promise<T>): Promise<T> {
  const { openMigratedDatabase } = await import("../../src/startup.ts");
  const database = await openMigratedDatabase({ dataDir: target.dataDir, databaseUrl: target.databaseUrl });
  try {
    return await fn(createCore(database, { publicUrl: "http://127.0.0.1" }));
  } finally {
    await database.close();
  }
}

describe("other sources: FreeRADIUS on SQLite and on PostgreSQL", () => {
  const rows = (username: string) => [
    `insert into nas (nasname, shortname, secret) values ('10.3.0.1', 'ap-${username}', 'source-secret-1')`,
    `insert into radcheck (username, attribute, op, value) values ('${username}', 'Cleartext-Password', ':=', 'pw of ${username}')`,
    `insert into radreply (username, attribute, op, value) values ('${username}', 'Session-Timeout', ':=', '900')`,
    `insert into radusergroup (username, groupname, priority) values ('${username}', 'members', 1)`,
    `insert into radgroupreply (groupname, attribute, op, value) values ('members', 'Idle-Timeout', ':=', '300')`,
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctsessiontime) values ('s', 'k-${username}', '${username}', '10.3.0.1', ${"%START%"}, 30)`,
  ];

  async function importInto(url: string, username: string) {
    await withDatabase("sqlite", async (database) => {
      const core = createCore(database, { publicUrl: "http://127.0.0.1" });
      const account = await core.accounts.resolve(undefined);
      const source = await openSource(parseSourceUrl(url));
      try {
        const { summary, skipped } = await runImport(core, source, account.id);
        assert.deepEqual(skipped, []);
        assert.deepEqual(
          [
            summary.counts.networks.created,
            summary.counts.groups.created,
            summary.counts.users.created,
            summary.counts.radacct.created,
          ],
          [1, 1, 1, 1],
        );
        const snap = await snapshot(database);
        assert.deepEqual(snap.radcheck, [`${username}|Cleartext-Password|:=|pw of ${username}`]);
        assert.deepEqual(snap.radusergroup, [`${username}|members|1`]);
        const session = await database.db.selectFrom("radacct").selectAll().executeTakeFirstOrThrow();
        assert.equal(Number(session.acctstarttime), 1_767_225_600, "2026-01-01 00:00:00 UTC as Unix seconds");
      } finally {
        await source.close();
      }
    });
  }

  test("SQLite (FreeRADIUS's own sqlite schema)", async () => {
    const dir = tempDir("fr-sqlite");
    const file = path.join(dir, "radius.db");
    const db = new Sqlite(file);
    db.exec(fs.readFileSync("/etc/freeradius/3.0/mods-config/sql/main/sqlite/schema.sql", "utf8"));
    for (const statement of rows("sqlite-user")) db.exec(statement.replace("%START%", "1767225600"));
    db.close();
    try {
      await importInto(`sqlite:${file}`, "sqlite-user");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("PostgreSQL (FreeRADIUS's own postgresql schema)", async (t) => {
    const reason = await postgresUnavailable();
    if (reason) return t.skip(reason);
    const name = `fr_source_${process.pid}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await client.query(
        fs.readFileSync("/etc/freeradius/3.0/mods-config/sql/main/postgresql/schema.sql", "utf8"),
      );
      await client.query("set time zone 'UTC'");
      for (const statement of rows("pg-user"))
        await client.query(statement.replace("%START%", "'2026-01-01 00:00:00+00'"));
      await importInto(url.toString(), "pg-user");
    } finally {
      await client.end();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});

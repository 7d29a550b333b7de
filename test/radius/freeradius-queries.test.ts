// Issue 3's proof that Wisp writes what FreeRADIUS reads: data made through Wisp's API, then
// FreeRADIUS's own schema.sql applied over the database and FreeRADIUS's stock queries.conf
// queries (expanded as rlm_sql would) run against it, on SQLite and PostgreSQL.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import pg from "pg";
import { dialects } from "../support/databases.ts";
import {
  type ConfigSection,
  configString,
  configStrings,
  expand,
  FREERADIUS_SQL_DIR,
  loadQueries,
  withoutOnConflict,
} from "../support/freeradius-config.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const missing = fs.existsSync(FREERADIUS_SQL_DIR)
  ? false
  : `FreeRADIUS's SQL configuration is not installed at ${FREERADIUS_SQL_DIR} (Debian package freeradius)`;
if (missing) console.log(`# skipping the FreeRADIUS query tests: ${missing}`);

type Row = Record<string, unknown>;
interface Runner {
  exec(sql: string): Promise<void>;
  query(sql: string): Promise<Row[]>;
  /** Runs a write and answers how many rows it changed, or "alt" for a constraint violation. */
  write(sql: string): Promise<number | "alt">;
  close(): Promise<void>;
}

function sqliteRunner(file: string): Runner {
  const db = new SqliteDatabase(file);
  db.pragma("busy_timeout = 5000");
  return {
    exec: async (sql) => {
      db.exec(sql);
    },
    query: async (sql) => db.prepare(sql).all() as Row[],
    write: async (sql) => db.prepare(sql).run().changes,
    close: async () => {
      db.close();
    },
  };
}

async function postgresRunner(url: string): Promise<Runner> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    exec: async (sql) => void (await client.query(sql)),
    query: async (sql) => (await client.query(sql)).rows,
    write: async (sql) => {
      try {
        return (await client.query(sql)).rowCount ?? 0;
      } catch (error) {
        // rlm_sql_postgresql: SQLSTATE class 23 is RLM_SQL_ALT_QUERY, "run the next query".
        if (String((error as { code?: string }).code).startsWith("23")) return "alt";
        throw error;
      }
    },
    close: () => client.end(),
  };
}

const lower = (rows: Row[]) =>
  rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k.toLowerCase(), v])));

for (const { dialect, skip } of await dialects()) {
  describe(`FreeRADIUS's stock SQL over a Wisp database on ${dialect}`, { skip: missing || skip }, () => {
    let server: TestServer;
    let runner: Runner;
    let queries: ConfigSection;
    const conf = dialect === "sqlite" ? "sqlite" : "postgresql";
    const pg = dialect === "postgres";
    const request = (extra: Record<string, string> = {}) => ({
      "User-Name": "alice",
      "SQL-User-Name": "alice",
      "User-Password": "secret-tried",
      "NAS-IP-Address": "10.1.0.1",
      "Acct-Session-Id": "sess-1",
      "Acct-Unique-Session-Id": "0123456789abcdef0123456789abcdef",
      "Called-Station-Id": "AA-BB-CC-DD-EE-FF:Guest",
      "Calling-Station-Id": "11-22-33-44-55-66",
      "Acct-Session-Time": "600",
      "Acct-Input-Octets": "1000",
      "Acct-Output-Octets": "2000",
      "Acct-Input-Gigawords": "0",
      "Acct-Output-Gigawords": "0",
      "Acct-Terminate-Cause": "User-Request",
      "Event-Timestamp": "1790000000",
      "reply:Packet-Type": "Access-Accept",
      ...extra,
    });
    const run = (name: string, extra: Record<string, string> = {}) =>
      runner.query(expand(configString(queries, name), request(extra)));

    before(async () => {
      server = await startTestServer({ dialect });
      const key = await server.key("default");
      const call = async (method: string, url: string, body: unknown) => {
        const res = await server.call(method, url, { key, body });
        assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
        return res.body;
      };
      const alice = await call("POST", "/api/users", { username: "alice", password: "alice-pw" });
      await call("POST", "/api/attributes", {
        userid: alice.id,
        table: "radcheck",
        attribute: "simultaneous-use",
        operator: ":=",
        value: "2",
      });
      await call("POST", "/api/attributes", {
        userid: alice.id,
        table: "radreply",
        attribute: "Session-Timeout",
        operator: ":=",
        value: "3600",
      });
      const staff = await call("POST", "/api/groups", { name: "staff", description: "Staff devices" });
      await call("POST", `/api/groups/${staff.id}/users`, { userid: alice.id, priority: 5 });
      await call("POST", `/api/groups/${staff.id}/attributes`, {
        table: "radgroupcheck",
        attribute: "NAS-Identifier",
        operator: "==",
        value: "office",
      });
      await call("POST", `/api/groups/${staff.id}/attributes`, {
        table: "radgroupreply",
        attribute: "WISPr-Bandwidth-Max-Down",
        operator: "=",
        value: "2000000",
      });
      const account = await server.account("default");
      await server.core.networks.create(account.id, {
        name: "Lobby",
        nas_ip: "10.1.0.1",
        secret: "lobby-secret-1",
      });

      runner =
        dialect === "sqlite"
          ? sqliteRunner(path.join(server.database.dataDir, "wisp.db"))
          : await postgresRunner(server.database.databaseUrl!);
      queries = loadQueries(conf);
    });
    after(async () => {
      await runner?.close();
      await server?.stop();
    });

    test("FreeRADIUS's schema.sql runs over the Wisp database without an error", async () => {
      await runner.exec(fs.readFileSync(`${FREERADIUS_SQL_DIR}/${conf}/schema.sql`, "utf8"));
    });

    test("client_query reads the network as a RADIUS client with its secret", async () => {
      const rows = lower(await run("client_query"));
      assert.deepEqual(
        rows.map((r) => [r.nasname, r.shortname, r.type, r.secret]),
        [["10.1.0.1", "Lobby", "other", "lobby-secret-1"]],
      );
    });

    test("authorize_check_query and authorize_reply_query read the user's items", async () => {
      const check = lower(await run("authorize_check_query"));
      assert.deepEqual(
        check.map((r) => [r.username, r.attribute, String(r.op).trim(), r.value]),
        [
          ["alice", "Cleartext-Password", ":=", "alice-pw"],
          ["alice", "Simultaneous-Use", ":=", "2"],
        ],
      );
      const reply = lower(await run("authorize_reply_query"));
      assert.deepEqual(
        reply.map((r) => [r.attribute, String(r.op).trim(), r.value]),
        [["Session-Timeout", ":=", "3600"]],
      );
    });

    test("group_membership_query and the group queries read the groups", async () => {
      assert.deepEqual(
        lower(await run("group_membership_query")).map((r) => r.groupname),
        ["staff"],
      );
      const groupCheck = lower(await run("authorize_group_check_query", { "SQL-Group": "staff" }));
      assert.deepEqual(
        groupCheck.map((r) => [r.groupname, r.attribute, String(r.op).trim(), r.value]),
        [["staff", "NAS-Identifier", "==", "office"]],
      );
      const groupReply = lower(await run("authorize_group_reply_query", { "SQL-Group": "staff" }));
      assert.deepEqual(
        groupReply.map((r) => [r.attribute, String(r.op).trim(), r.value]),
        [["WISPr-Bandwidth-Max-Down", "=", "2000000"]],
      );
    });

    test("accounting start, interim-update and stop write radacct; simul_count_query counts it", async () => {
      const write = async (status: string, extra: Record<string, string> = {}) => {
        for (const sql of configStrings(queries, `accounting.type.${status}.query`)) {
          // PostgreSQL: radacct is partitioned; see withoutOnConflict.
          const changed = await runner.write(expand(pg ? withoutOnConflict(sql) : sql, request(extra)));
          if (changed !== "alt" && changed > 0) return;
        }
        assert.fail(`no ${status} query changed a row`);
      };
      await write("start", { "Acct-Session-Time": "0" });
      // PostgreSQL, a retransmitted Start: the INSERT meets the key, the alternate UPDATE takes it.
      if (pg) await write("start", { "Acct-Session-Time": "0" });
      assert.deepEqual(
        lower(await run("simul_count_query")).map((r) => Number(Object.values(r)[0])),
        [1],
      );
      await write("interim-update", { "Event-Timestamp": "1790000300", "Acct-Session-Time": "300" });
      await write("stop", { "Event-Timestamp": "1790000600" });
      const rows = lower(
        await runner.query(
          "select username, nasipaddress, acctsessiontime, acctinputoctets, acctoutputoctets, acctterminatecause, acctstoptime from radacct",
        ),
      );
      assert.equal(rows.length, 1);
      assert.deepEqual(
        [
          rows[0]!.username,
          String(rows[0]!.nasipaddress),
          Number(rows[0]!.acctsessiontime),
          Number(rows[0]!.acctinputoctets),
          Number(rows[0]!.acctoutputoctets),
          rows[0]!.acctterminatecause,
        ],
        ["alice", "10.1.0.1", 600, 1000, 2000, "User-Request"],
      );
      assert.notEqual(rows[0]!.acctstoptime, null);
      assert.deepEqual(
        lower(await run("simul_count_query")).map((r) => Number(Object.values(r)[0])),
        [0],
      );
    });

    // PostgreSQL only (SQLite's radacct is not partitioned): registered for that dialect alone.
    (dialect === "sqlite" ? () => {} : test)(
      "PostgreSQL: the stock ON CONFLICT (AcctUniqueId) needs a unique index a partitioned radacct cannot have",
      async () => {
        const start = expand(
          configStrings(queries, "accounting.type.start.query")[0]!,
          request({ "Acct-Session-Id": "x" }),
        );
        await assert.rejects(
          runner.write(start),
          /no unique or exclusion constraint matching the ON CONFLICT/,
        );
        // A late Interim-Update after the Stop: its INSERT meets the key and changes nothing.
        const interim = configStrings(queries, "accounting.type.interim-update.query")[1]!;
        assert.equal(await runner.write(expand(withoutOnConflict(interim), request())), "alt");
        assert.equal(lower(await runner.query("select acctuniqueid from radacct")).length, 1);
      },
    );

    test("the post-auth query records an attempt in radpostauth", async () => {
      assert.equal(await runner.write(expand(configString(queries, "post-auth.query"), request())), 1);
      const rows = lower(await runner.query("select username, reply from radpostauth"));
      assert.deepEqual(
        rows.map((r) => [r.username, r.reply]),
        [["alice", "Access-Accept"]],
      );
    });
  });
}

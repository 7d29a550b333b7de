// Monthly partitions of radpostauth and radacct on PostgreSQL (migration 020, src/db/partitions.ts):
// existing rows survive the migration with their ids, rows land in their month's partition,
// accounting across a month boundary keeps one row, partitions are made ahead and old ones dropped
// whole (never one holding an open session). On SQLite nothing changes.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Kysely, sql } from "kysely";
import { isUniqueViolation } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { dropPartitionsBefore, ensurePartitions } from "../../src/db/partitions.ts";
import { registerPartitionJobs } from "../../src/jobs/partition-jobs.ts";
import { Worker } from "../../src/jobs/worker.ts";
import { accountingSender } from "../support/accounting.ts";
import { postgresUnavailable, withDatabase } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const skip = (await postgresUnavailable()) ?? false;
// biome-ignore lint/suspicious/noExplicitAny: raw SQL over partitions the schema type does not name
type Db = Kysely<any>;

const at = (iso: string) => new Date(iso);

async function partitionOf(db: Db, table: string, idColumn: string, id: number): Promise<string> {
  const { rows } = await sql<{ part: string }>`select tableoid::regclass::text as part from ${sql.id(table)}
    where ${sql.id(idColumn)} = ${id}`.execute(db);
  assert.equal(rows.length, 1, `${table} ${id}: one row`);
  return rows[0]!.part;
}

async function addAuth(db: Db, username: string, authdate: Date): Promise<number> {
  const { rows } = await sql<{ id: number }>`insert into radpostauth (username, reply, authdate)
    values (${username}, 'Access-Accept', ${authdate}) returning id`.execute(db);
  return Number(rows[0]!.id);
}

async function addSession(db: Db, key: string, start: Date | null, stop: Date | null): Promise<number> {
  const { rows } = await sql<{ id: number }>`insert into radacct
    (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime)
    values (${key}, ${key}, 'alice', '10.0.0.1', ${start}, ${stop}) returning radacctid as id`.execute(db);
  return Number(rows[0]!.id);
}

async function ids(db: Db, table: string, idColumn: string): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`select ${sql.id(idColumn)} as id from ${sql.id(table)}
    order by 1`.execute(db);
  return rows.map((r) => Number(r.id));
}

async function partitionNames(db: Db, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid where i.inhparent = ${table}::regclass order by 1`.execute(db);
  return rows.map((r) => r.name);
}

async function rejectsDuplicate(db: Db, key: string, start: Date): Promise<void> {
  await assert.rejects(addSession(db, key, start, start), (error) => isUniqueViolation(error));
}

describe("monthly partitions on PostgreSQL", { skip }, () => {
  test("migration 020 keeps every row and id, in its month's partition; ids continue", async () => {
    await withDatabase(
      "postgres",
      async (database) => {
        const db = database.db as Db;
        const auths = [
          await addAuth(db, "a", at("2025-09-03T10:00:00Z")),
          await addAuth(db, "b", at("2025-10-31T23:59:59Z")),
          await addAuth(db, "c", at("2025-11-01T00:00:00Z")),
          await addAuth(db, "d", at("2024-02-29T12:00:00Z")),
        ];
        const sessions = [
          await addSession(db, "s-sep", at("2025-09-30T23:00:00Z"), at("2025-10-01T01:00:00Z")),
          await addSession(db, "s-oct", at("2025-10-15T08:00:00Z"), null),
          await addSession(db, "s-none", null, null),
        ];

        // An index an operator added (FreeRADIUS's schema.sql has this one) comes along.
        await sql`create index radacct_active_session_idx on radacct (acctuniqueid)
          where acctstoptime is null`.execute(db);

        await migrate(database);

        const { rows: kept } = await sql<{ def: string }>`select pg_get_indexdef(indexrelid) as def
          from pg_index where indexrelid = to_regclass('radacct_active_session_idx')`.execute(db);
        assert.match(kept[0]?.def ?? "", /ON ONLY public\.radacct .*WHERE \(acctstoptime IS NULL\)/);
        assert.deepEqual(
          await ids(db, "radpostauth", "id"),
          [...auths].sort((x, y) => x - y),
        );
        assert.deepEqual(await ids(db, "radacct", "radacctid"), sessions);
        const [sep, oct, nov, leap] = auths as [number, number, number, number];
        assert.equal(await partitionOf(db, "radpostauth", "id", sep), "radpostauth_y2025m09");
        assert.equal(await partitionOf(db, "radpostauth", "id", oct), "radpostauth_y2025m10");
        assert.equal(await partitionOf(db, "radpostauth", "id", nov), "radpostauth_y2025m11");
        assert.equal(await partitionOf(db, "radpostauth", "id", leap), "radpostauth_y2024m02");
        assert.equal(await partitionOf(db, "radacct", "radacctid", sessions[0]!), "radacct_y2025m09");
        assert.equal(await partitionOf(db, "radacct", "radacctid", sessions[1]!), "radacct_y2025m10");
        // No start time: no month; the DEFAULT partition holds it.
        assert.equal(await partitionOf(db, "radacct", "radacctid", sessions[2]!), "radacct_default");

        // The same sequences: new ids follow the old ones.
        const next = await addAuth(db, "e", new Date());
        assert.ok(next > Math.max(...auths), `${next} after ${auths}`);
        const nextSession = await addSession(db, "s-new", new Date(), null);
        assert.ok(nextSession > Math.max(...sessions));
        // This month and 3 ahead exist, then the DEFAULT partition.
        const now = new Date();
        const month = (ahead: number) => {
          const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead, 1));
          return `radacct_y${d.getUTCFullYear()}m${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
        };
        const names = await partitionNames(db, "radacct");
        for (let ahead = 0; ahead <= 3; ahead++) assert.ok(names.includes(month(ahead)), month(ahead));
        assert.equal(await partitionOf(db, "radacct", "radacctid", nextSession), month(0));

        // acctuniqueid stays unique across months (radacct_keys), as the old unique index made it.
        await rejectsDuplicate(db, "s-sep", at("2025-10-20T00:00:00Z"));
        await rejectsDuplicate(db, "s-none", at("2025-10-20T00:00:00Z"));
        // The account foreign key came along.
        await assert.rejects(
          sql`insert into radacct (acctuniqueid, nasipaddress, acctstarttime, account_id)
            values ('fk', '10.0.0.1', now(), 999999)`.execute(db),
          /foreign key/,
        );
      },
      "019_sessions",
    );
  });

  test("new rows go to their month's partition; a lookup by id uses an index in every partition", async () => {
    await withDatabase("postgres", async (database) => {
      const db = database.db as Db;
      await ensurePartitions(db, at("2027-06-10T00:00:00Z"), 1);
      const june = await addAuth(db, "june", at("2027-06-30T23:59:59.999Z"));
      const july = await addAuth(db, "july", at("2027-07-01T00:00:00Z"));
      assert.equal(await partitionOf(db, "radpostauth", "id", june), "radpostauth_y2027m06");
      assert.equal(await partitionOf(db, "radpostauth", "id", july), "radpostauth_y2027m07");
      const session = await addSession(db, "june-session", at("2027-06-15T00:00:00Z"), null);
      assert.equal(await partitionOf(db, "radacct", "radacctid", session), "radacct_y2027m06");

      // Every partition (and the parent) has an index led by the id: /api/sessions/{id} finds a
      // session by radacctid alone with one index probe per partition.
      for (const [table, id] of [
        ["radacct", "radacctid"],
        ["radpostauth", "id"],
      ]) {
        const { rows } = await sql<{ name: string; led: boolean }>`
          select c.relname as name, exists (
            select 1 from pg_index x where x.indrelid = c.oid
              and x.indkey[0] = (select attnum from pg_attribute where attrelid = c.oid and attname = ${id})
          ) as led
          from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = ${table}::regclass`.execute(db);
        assert.ok(rows.length >= 4);
        for (const row of rows) assert.ok(row.led, `${row.name} has an index on ${id}`);
      }
    });
  });

  test("ensurePartitions makes the months ahead once, and moves rows out of DEFAULT", async () => {
    await withDatabase("postgres", async (database) => {
      const db = database.db as Db;
      const made = await ensurePartitions(db, at("2030-05-15T12:00:00Z"), 2);
      assert.deepEqual(made.sort(), [
        "radacct_y2030m05",
        "radacct_y2030m06",
        "radacct_y2030m07",
        "radpostauth_y2030m05",
        "radpostauth_y2030m06",
        "radpostauth_y2030m07",
      ]);
      assert.deepEqual(await ensurePartitions(db, at("2030-05-15T12:00:00Z"), 2), []);

      // Rows of a month without a partition wait in DEFAULT, then move to their partition.
      const auth = await addAuth(db, "early", at("2031-01-10T00:00:00Z"));
      const session = await addSession(db, "early-session", at("2031-01-11T00:00:00Z"), null);
      assert.equal(await partitionOf(db, "radpostauth", "id", auth), "radpostauth_default");
      assert.equal(await partitionOf(db, "radacct", "radacctid", session), "radacct_default");
      const later = await ensurePartitions(db, at("2030-12-20T00:00:00Z"), 0);
      assert.deepEqual(later.sort(), [
        "radacct_y2030m12",
        "radacct_y2031m01",
        "radpostauth_y2030m12",
        "radpostauth_y2031m01",
      ]);
      assert.equal(await partitionOf(db, "radpostauth", "id", auth), "radpostauth_y2031m01");
      assert.equal(await partitionOf(db, "radacct", "radacctid", session), "radacct_y2031m01");
      // The moved session's key is still taken.
      await rejectsDuplicate(db, "early-session", at("2030-12-21T00:00:00Z"));
    });
  });

  test("dropPartitionsBefore drops whole months before the cutoff, never one with an open session", async () => {
    await withDatabase("postgres", async (database) => {
      const db = database.db as Db;
      await ensurePartitions(db, at("2024-01-05T00:00:00Z"), 2);
      const janAuth = await addAuth(db, "jan", at("2024-01-20T00:00:00Z"));
      const febAuth = await addAuth(db, "feb", at("2024-02-10T00:00:00Z"));
      await addSession(db, "jan-closed", at("2024-01-03T00:00:00Z"), at("2024-01-03T01:00:00Z"));
      await addSession(db, "feb-open", at("2024-02-03T00:00:00Z"), null);
      const febClosed = await addSession(
        db,
        "feb-closed",
        at("2024-02-04T00:00:00Z"),
        at("2024-02-04T01:00:00Z"),
      );

      // February ends after the cutoff: only January goes.
      assert.deepEqual(await dropPartitionsBefore(db, "radpostauth", at("2024-02-15T00:00:00Z")), {
        dropped: ["radpostauth_y2024m01"],
        rows: 1,
      });
      assert.deepEqual(await ids(db, "radpostauth", "id"), [febAuth]);
      assert.ok(!(await ids(db, "radpostauth", "id")).includes(janAuth));

      // February ends on the cutoff but holds an open session: it stays, whole.
      assert.deepEqual(await dropPartitionsBefore(db, "radacct", at("2024-03-01T00:00:00Z")), {
        dropped: ["radacct_y2024m01"],
        rows: 1,
      });
      const names = await partitionNames(db, "radacct");
      assert.ok(names.includes("radacct_y2024m02") && names.includes("radacct_default"));
      assert.ok(!names.includes("radacct_y2024m01"));
      assert.ok((await ids(db, "radacct", "radacctid")).includes(febClosed));
      // The dropped sessions' keys are free again; the kept ones' are not.
      await addSession(db, "jan-closed", at("2024-02-05T00:00:00Z"), at("2024-02-05T00:10:00Z"));
      await rejectsDuplicate(db, "feb-closed", at("2024-02-06T00:00:00Z"));

      // Once the session is closed, February goes too; again: nothing left to drop.
      await sql`update radacct set acctstoptime = now() where acctuniqueid = 'feb-open'`.execute(db);
      assert.deepEqual(await dropPartitionsBefore(db, "radacct", at("2024-03-01T00:00:00Z")), {
        dropped: ["radacct_y2024m02"],
        rows: 3,
      });
      assert.deepEqual(await dropPartitionsBefore(db, "radacct", at("2024-03-01T00:00:00Z")), {
        dropped: [],
        rows: 0,
      });
    });
  });

  test("the worker's recurring job makes a missing partition again, and stays queued", async () => {
    const server = await startTestServer({ dialect: "postgres", env: { WORKER: "0" } });
    const quiet = { error: () => {}, warn: () => {} };
    const worker = new Worker(server.core.jobs, { log: quiet, pollMs: 20 });
    try {
      const db = server.core.database.db as Db;
      const now = new Date();
      const ahead = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1));
      const name = `radpostauth_y${ahead.getUTCFullYear()}m${String(ahead.getUTCMonth() + 1).padStart(2, "0")}`;
      assert.ok((await partitionNames(db, "radpostauth")).includes(name), "made at start");
      await sql`alter table radpostauth detach partition ${sql.id(name)}`.execute(db);
      await sql`drop table ${sql.id(name)}`.execute(db);

      registerPartitionJobs(worker, server.core, 200);
      worker.start();
      const deadline = Date.now() + 60_000;
      while (!(await partitionNames(db, "radpostauth")).includes(name)) {
        assert.ok(Date.now() < deadline, `${name} made again by the job`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Recurring: one job, queued again for its next run.
      const jobs = await server.core.jobs.active("db.partitions");
      assert.equal(jobs.length, 1);
    } finally {
      await worker.stop();
      await server.stop();
    }
  });

  describe("accounting across a month boundary", () => {
    let server: TestServer;
    let send: ReturnType<typeof accountingSender>;
    let key: string;
    const SECRET = "boundary-secret-1";
    // The next month boundary: this month's and next month's partitions exist from the start.
    const now = new Date();
    const boundary = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
    const thisMonth = `radacct_y${now.getUTCFullYear()}m${String(now.getUTCMonth() + 1).padStart(2, "0")}`;

    before(async () => {
      const acctPort = await freeUdpPort();
      server = await startTestServer({
        dialect: "postgres",
        env: { RADIUS_HOST: "127.0.0.1", RADIUS_ACCT_PORT: String(acctPort) },
      });
      const account = await server.account("default");
      await server.core.networks.create(account.id, { name: "Lab", nas_ip: "127.0.0.1", secret: SECRET });
      key = await server.key(account);
      send = accountingSender(acctPort, SECRET);
    });
    after(() => server?.stop());

    const rows = async (session: string) => {
      const { rows } = await sql<{ id: number; part: string; stop: Date | null; time: number; out: number }>`
        select radacctid as id, tableoid::regclass::text as part, acctstoptime as stop,
          acctsessiontime as time, acctoutputoctets as out
        from radacct where acctsessionid = ${session}`.execute(server.core.database.db as Db);
      return rows;
    };

    test("Start before midnight, Interim-Update and Stop after it: one row, in the start's month", async () => {
      const station = { user: "carol", session: "boundary-1", mac: "02-00-00-00-01-01" };
      await send(station, "Start", [["Event-Timestamp", boundary - 600]]);
      await send(station, "Interim-Update", [
        ["Event-Timestamp", boundary + 600],
        ["Acct-Session-Time", 1200],
        ["Acct-Output-Octets", 5000],
      ]);
      await send(station, "Stop", [
        ["Event-Timestamp", boundary + 1200],
        ["Acct-Session-Time", 1800],
        ["Acct-Output-Octets", 9000],
        ["Acct-Terminate-Cause", "User-Request"],
      ]);
      const found = await rows("boundary-1");
      assert.equal(found.length, 1);
      assert.equal(found[0]!.part, thisMonth);
      assert.equal(found[0]!.stop?.getTime(), (boundary + 1200) * 1000);
      assert.equal(Number(found[0]!.time), 1800);
      assert.equal(Number(found[0]!.out), 9000);
      // The sessions API finds it by id.
      const res = await server.call("GET", `/api/sessions/${found[0]!.id}`, { key });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.id, found[0]!.id);
      assert.equal(res.body.duration, 1800);
    });

    test("an Interim-Update before the Start, then a late Start: still one row", async () => {
      const station = { user: "dave", session: "boundary-2", mac: "02-00-00-00-01-02" };
      // The Start was lost: the Interim-Update after midnight opens the row (start = event - time)...
      await send(station, "Interim-Update", [
        ["Event-Timestamp", boundary + 60],
        ["Acct-Session-Time", 30],
      ]);
      assert.equal((await rows("boundary-2"))[0]?.part !== thisMonth, true);
      // ...then the Start arrives, dated before midnight: the row moves to its month, not doubled.
      await send(station, "Start", [["Event-Timestamp", boundary - 300]]);
      await send(station, "Stop", [
        ["Event-Timestamp", boundary + 900],
        ["Acct-Session-Time", 1200],
      ]);
      const found = await rows("boundary-2");
      assert.equal(found.length, 1);
      assert.equal(found[0]!.part, thisMonth);
      assert.notEqual(found[0]!.stop, null);
      const { rows: keys } = await sql<{ n: number }>`select count(*)::int as n from radacct_keys k
        join radacct r using (acctuniqueid) where r.acctsessionid = 'boundary-2'`.execute(
        server.core.database.db as Db,
      );
      assert.equal(keys[0]!.n, 1);
    });
  });
});

test("SQLite: no partitions, nothing changes", async () => {
  await withDatabase("sqlite", async (database) => {
    const db = database.db as Db;
    assert.deepEqual(await ensurePartitions(db, new Date()), []);
    assert.deepEqual(await dropPartitionsBefore(db, "radacct", new Date()), { dropped: [], rows: 0 });
    assert.deepEqual(await dropPartitionsBefore(db, "radpostauth", new Date()), { dropped: [], rows: 0 });
    const { rows } = await sql<{ name: string; unique: number }>`
      select name, "unique" from pragma_index_list('radacct') where name = 'wisp_radacct_uniqueid'`.execute(
      db,
    );
    assert.deepEqual(rows, [{ name: "wisp_radacct_uniqueid", unique: 1 }]);
    const tables = await sql<{ name: string }>`select name from sqlite_master
      where name in ('radacct_keys', 'radacct_default', 'radpostauth_default')`.execute(db);
    assert.deepEqual(tables.rows, []);
  });
});

// Rows of every table retention prunes, written straight into a test database with chosen ages:
// authentication records, sessions, events with deliveries and attempts, jobs, report tasks with
// files. Times are stored as each dialect stores them (see src/core/retention/repo.ts).
import fs from "node:fs";
import path from "node:path";
import { type Kysely, sql } from "kysely";
import { DEFAULT_RETENTION_DAYS } from "../../src/core/retention/rules.ts";
import type { Database } from "../../src/db/database.ts";
import type { Schema } from "../../src/db/schema.ts";

/** The default periods, for processes (test processes run with retention off otherwise). */
export const RETENTION_DEFAULTS: Record<string, string> = {
  RETENTION_AUTH_DAYS: String(DEFAULT_RETENTION_DAYS.auth),
  RETENTION_SESSIONS_DAYS: String(DEFAULT_RETENTION_DAYS.sessions),
  RETENTION_EVENTS_DAYS: String(DEFAULT_RETENTION_DAYS.events),
  RETENTION_JOBS_DAYS: String(DEFAULT_RETENTION_DAYS.jobs),
};

export const DAY_MS = 86_400_000;
export const daysAgo = (days: number, now = Date.now()) => new Date(now - days * DAY_MS);
const iso = (at: Date) => `${at.toISOString().slice(0, 19)}Z`;

export class RetentionSeed {
  readonly db: Kysely<Schema>;
  readonly pg: boolean;

  constructor(readonly database: Database) {
    this.db = database.db;
    this.pg = database.dialect === "postgres";
  }

  async account(name: string): Promise<number> {
    const row = await this.db
      .insertInto("accounts")
      .values({ name, created: iso(new Date()) })
      .returning("id")
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** `count` authentication records of the account at `at`, in one statement. */
  async auth(accountId: number | null, at: Date, count: number): Promise<void> {
    const when = this.pg ? sql`${at}::timestamptz` : sql`${at.toISOString().slice(0, 19).replace("T", " ")}`;
    const series = this.pg
      ? sql`generate_series(1, ${count}) as s(i)`
      : sql`(with recursive s(i) as (select 1 union all select i + 1 from s where i < ${count}) select i from s) as s`;
    await sql`insert into radpostauth (username, pass, reply, authdate, account_id, reason)
      select 'user' || i, '', 'Access-Accept', ${when}, cast(${accountId} as integer), 'ok' from ${series}`.execute(
      this.db,
    );
  }

  /** One session; `stop` null leaves it open. */
  async session(accountId: number | null, start: Date, stop: Date | null): Promise<number> {
    const time = (at: Date) => (this.pg ? at : Math.floor(at.getTime() / 1000));
    const unique = `u${Math.random().toString(36).slice(2)}${Date.now()}`;
    const row = await this.db
      .insertInto("radacct")
      .values({
        acctsessionid: unique,
        acctuniqueid: unique,
        username: "guest",
        nasipaddress: "192.0.2.1",
        acctstarttime: time(start),
        acctstoptime: stop ? time(stop) : null,
        account_id: accountId,
      })
      .returning("radacctid")
      .executeTakeFirstOrThrow();
    return Number(row.radacctid);
  }

  async event(accountId: number, created: Date): Promise<number> {
    const row = await this.db
      .insertInto("events")
      .values({ account_id: accountId, kind: "user.authenticated", data: "{}", created: iso(created) })
      .returning("id")
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async endpoint(accountId: number): Promise<number> {
    const { rows } = await sql<{ id: number }>`insert into webhook_endpoints
      (account_id, url, event_kinds, enabled, secret, created, updated)
      values (${accountId}, 'https://example.com/hook', '["*"]', 1, 'sealed', ${iso(new Date())},
        ${iso(new Date())}) returning id`.execute(this.db);
    return Number(rows[0]!.id);
  }

  /** Puts the account's dispatch cursor at this event: it and every earlier one were fanned out. */
  async cursorAt(accountId: number, eventId: number): Promise<void> {
    const txid = this.pg ? sql`(select txid from events where id = ${eventId})` : sql`0`;
    await sql`delete from webhook_cursors where account_id = ${accountId}`.execute(this.db);
    await sql`insert into webhook_cursors (account_id, last_txid, last_event_id)
      values (${accountId}, ${txid}, ${eventId})`.execute(this.db);
  }

  /** A delivery of the event with `attempts` attempts. */
  async delivery(
    accountId: number,
    endpointId: number,
    eventId: number,
    status: "pending" | "succeeded" | "failed",
    attempts: number,
  ): Promise<number> {
    const now = iso(new Date());
    const { rows } = await sql<{ id: number }>`insert into webhook_deliveries
      (account_id, endpoint_id, event_id, message_id, status, tries, attempts, next_at, created, updated)
      values (${accountId}, ${endpointId}, ${eventId}, ${`msg_${eventId}_${endpointId}_${Math.random()}`},
        ${status}, ${attempts}, ${attempts}, 0, ${now}, ${now}) returning id`.execute(this.db);
    const id = Number(rows[0]!.id);
    for (let a = 1; a <= attempts; a++) {
      await sql`insert into webhook_attempts (account_id, delivery_id, attempt, started, duration_ms)
        values (${accountId}, ${id}, ${a}, ${now}, 5)`.execute(this.db);
    }
    return id;
  }

  /** `count` events at `created`, each with one delivery (status) and one attempt, in three statements. */
  async eventsWithDeliveries(
    accountId: number,
    endpointId: number,
    created: Date,
    count: number,
    status: "succeeded" | "pending",
  ): Promise<void> {
    const series = this.pg
      ? sql`generate_series(1, ${count}) as s(i)`
      : sql`(with recursive s(i) as (select 1 union all select i + 1 from s where i < ${count}) select i from s) as s`;
    const before = await this.maxId("events");
    await sql`insert into events (account_id, kind, data, created)
      select cast(${accountId} as integer), 'user.authenticated', '{}', ${iso(created)} from ${series}`.execute(
      this.db,
    );
    const now = iso(new Date());
    await sql`insert into webhook_deliveries
      (account_id, endpoint_id, event_id, message_id, status, tries, attempts, next_at, created, updated)
      select cast(${accountId} as integer), cast(${endpointId} as integer), id, 'msg_' || id || '_' || ${String(endpointId)},
        ${status}, 1, 1, 0, ${now}, ${now}
      from events where account_id = ${accountId} and id > ${before}`.execute(this.db);
    await sql`insert into webhook_attempts (account_id, delivery_id, attempt, started, duration_ms)
      select cast(${accountId} as integer), d.id, 1, ${now}, 5 from webhook_deliveries d
      where d.account_id = ${accountId} and d.event_id > ${before}`.execute(this.db);
  }

  async maxId(table: "events" | "radpostauth" | "jobs"): Promise<number> {
    const { rows } = await sql<{ id: number | null }>`select max(id) as id from ${sql.table(table)}`.execute(
      this.db,
    );
    return Number(rows[0]?.id ?? 0);
  }

  /** A job of this status that was due and last changed at `at`. */
  async job(status: string, at: Date): Promise<number> {
    const row = await this.db
      .insertInto("jobs")
      .values({
        kind: "test.job",
        account_id: null,
        payload: "{}",
        status,
        run_at: at.getTime(),
        created: iso(at),
        updated: iso(at),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** A finished report task expiring at `expires` (Unix seconds), with its file in `directory`. */
  async reportTask(accountId: number, name: string, expires: number, directory: string): Promise<void> {
    await sql`insert into report_tasks (account_id, name, report_id, earliest, latest, job_id, status,
        rows, created, finished, expires)
      values (${accountId}, ${name}, 110, 0, 1, 0, 'done', 1, ${iso(new Date())}, ${iso(new Date())},
        ${expires})`.execute(this.db);
    fs.mkdirSync(directory, { recursive: true });
    fs.writeFileSync(path.join(directory, `${name}.csv`), "a,b\n1,2\n");
  }

  async count(table: string, where = sql`true`): Promise<number> {
    const { rows } = await sql<{
      n: number;
    }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(this.db);
    return Number(rows[0]!.n);
  }

  /**
   * What must never happen whatever moment a prune stopped at: an attempt without its delivery,
   * a delivery without its event, a report task without its file. (A file whose task is gone is
   * possible for one batch and deleted by the next run: see ReportsService.cleanup.)
   */
  async broken(reportsDirectory: string): Promise<string[]> {
    const problems: string[] = [];
    const orphanAttempts = await this.count(
      "webhook_attempts",
      sql`not exists (select 1 from webhook_deliveries d where d.id = webhook_attempts.delivery_id)`,
    );
    if (orphanAttempts > 0) problems.push(`${orphanAttempts} attempts without their delivery`);
    const orphanDeliveries = await this.count(
      "webhook_deliveries",
      sql`not exists (select 1 from events e where e.id = webhook_deliveries.event_id)`,
    );
    if (orphanDeliveries > 0) problems.push(`${orphanDeliveries} deliveries without their event`);
    const { rows } = await sql<{ name: string }>`select name from report_tasks where status = 'done'`.execute(
      this.db,
    );
    for (const { name } of rows) {
      if (!fs.existsSync(path.join(reportsDirectory, `${name}.csv`)))
        problems.push(`task ${name} without its file`);
    }
    return problems;
  }

  /** Result files whose task row is gone. */
  async filesWithoutTask(reportsDirectory: string): Promise<string[]> {
    if (!fs.existsSync(reportsDirectory)) return [];
    const { rows } = await sql<{ name: string }>`select name from report_tasks`.execute(this.db);
    const names = new Set(rows.map((r) => r.name));
    return fs.readdirSync(reportsDirectory).filter((f) => f.endsWith(".csv") && !names.has(f.slice(0, -4)));
  }
}

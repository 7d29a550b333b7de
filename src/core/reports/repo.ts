// The reports' SQL: each report as a page (offset, for the synchronous form) and as keyset chunks
// (newest first, for files of any size), and the report tasks. Times are converted here, where
// the dialect is known: radacct holds Unix seconds on SQLite, radpostauth 'YYYY-MM-DD HH:MM:SS'
// text there; PostgreSQL holds timestamptz in both.
import SqliteDatabase from "better-sqlite3";
import {
  type Compilable,
  type Generated,
  type Kysely,
  type OrderByItemBuilder,
  type Selectable,
  type SelectQueryBuilder,
  sql,
} from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { insertEvents, type NewEvent } from "../events/repo.ts";
import type { JobQueue, NewJob } from "../jobs/queue.ts";
import type { Cell } from "./csv.ts";
import type { ReportId, ReportSort, ReportSortField } from "./definitions.ts";
import { isoSeconds } from "./time.ts";

export type ReportTasksTable = {
  id: Generated<number>;
  account_id: number;
  name: string;
  report_id: number;
  earliest: number;
  latest: number;
  job_id: number;
  status: string;
  rows: number | null;
  error: string | null;
  created: string;
  finished: string | null;
  expires: number;
};

export type DemoSeedsTable = {
  account_id: number;
  created: string;
  summary: string;
};

/** Tables of migration 005, beside the shared Schema (type aliases: withTables needs them). */
export type ReportTables = {
  report_tasks: ReportTasksTable;
  demo_seeds: DemoSeedsTable;
};

export type TaskRow = Selectable<ReportTasksTable>;
export type TaskWithJob = TaskRow & { job_status: string | null; job_progress: string | null };

/** Unix seconds: earliest <= t < latest. */
export interface Window {
  earliest: number;
  latest: number;
  /** Report 110 only: the attempts that came from this captive portal's sign-ins. */
  portalId?: number | undefined;
}

/** Where the previous chunk ended: the last row's time (as stored) and id. */
export interface Cursor {
  t: unknown;
  id: number;
}

/** Rows as cells in the report's column order, and where the next chunk starts. */
export interface Chunk {
  rows: Cell[][];
  next: Cursor | null;
}

/** Runs a query and answers its rows as arrays, in the order of the select list. */
export interface RowSource {
  rows(query: Compilable<unknown>): Promise<unknown[][]>;
  close(): void;
}

type Db = Kysely<Schema & ReportTables>;

/** The first key of the advisory lock an account's file requests take turns under: "WRPT". */
const TASKS_LOCK = 0x57_52_50_54;
type Convert = ((value: unknown) => Cell) | null;

/** Any stored time (Unix seconds, FreeRADIUS's SQLite text, a Date) as ISO 8601 UTC. */
function iso(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return isoSeconds(value);
  if (value instanceof Date) return isoSeconds(Math.floor(value.getTime() / 1000));
  const text = String(value);
  if (/^\d+$/.test(text)) return isoSeconds(Number(text));
  return `${text.slice(0, 10)}T${text.slice(11, 19)}Z`;
}
/** SQLite keeps FreeRADIUS's '' for absent values where PostgreSQL has NULL. */
const blankIsNull = (value: unknown): Cell => (value === "" || value === undefined ? null : (value as Cell));
const nullIsBlank = (value: unknown): Cell => (value ?? "") as Cell;

/**
 * How each report reads its rows: the select list (the report's columns in order, then the id
 * when it is not one of them, then the time as the cursor carries it), where the cursor's time
 * and id are, and per-column conversions.
 */
const LAYOUT = {
  110: { width: 16, time: 17, id: 16, convert: [iso, null, null, nullIsBlank] as Convert[] },
  120: {
    width: 14,
    time: 14,
    id: 0,
    convert: [
      null,
      nullIsBlank,
      null,
      iso,
      iso,
      null,
      null,
      null,
      null,
      null,
      null,
      blankIsNull,
      blankIsNull,
      blankIsNull,
    ] as Convert[],
  },
} as const;

/** Reads through Kysely's connection (objects, whose keys keep the select list's order). */
class KyselyRows implements RowSource {
  constructor(private readonly db: Kysely<Schema>) {}
  async rows(query: Compilable<unknown>): Promise<unknown[][]> {
    const result = await this.db.executeQuery(query.compile());
    return result.rows.map((row) => Object.values(row as object));
  }
  close(): void {}
}

/**
 * A read-only connection of its own on the SQLite file, answering arrays (better-sqlite3's raw
 * mode): about a third faster than objects on large reports, and the shared connection stays
 * free for requests while a file is built.
 */
class SqliteRows implements RowSource {
  private readonly connection: SqliteDatabase.Database;
  private readonly statements = new Map<string, SqliteDatabase.Statement>();

  constructor(file: string) {
    this.connection = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
    this.connection.pragma("busy_timeout = 5000");
  }

  async rows(query: Compilable<unknown>): Promise<unknown[][]> {
    const { sql: text, parameters } = query.compile();
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.connection.prepare(text).raw(true);
      this.statements.set(text, statement);
    }
    return statement.all(...parameters) as unknown[][];
  }

  close(): void {
    this.connection.close();
  }
}

/**
 * How a sortable field orders: its column, whether text (ignoring case), whether it may be NULL.
 * Not db/sort.ts's plan: report text columns compare NULL as '' (radacct.username is NULL on
 * PostgreSQL where FreeRADIUS's SQLite queries write ''), and the default order is the keyset the
 * file builder walks.
 */
interface SortKey {
  column: string;
  text?: boolean;
  nullable?: boolean;
}

/** Each report's time and id: the default order (newest first), the tie-break, the keyset. */
const ORDER = {
  110: { time: "authdate", id: "id" },
  115: { time: "created", id: "id" },
  120: { time: "acctstarttime", id: "radacctid" },
} as const;

const SORT_KEYS: { [R in ReportId]: Record<ReportSortField<R>, SortKey> } = {
  110: {
    time: { column: "authdate" },
    username: { column: "username", text: true },
    result: { column: "reply", text: true },
  },
  115: {
    created: { column: "created" },
    username: { column: "username", text: true },
    email: { column: "email", text: true },
    status: { column: "status", text: true },
  },
  120: {
    start: { column: "acctstarttime" },
    stop: { column: "acctstoptime", nullable: true },
    duration: { column: "acctsessiontime", nullable: true },
    // NULL on PostgreSQL where SQLite has '': both read as '' (answered ""), first ascending.
    username: { column: "username", text: true },
    input_bytes: { column: "acctinputoctets", nullable: true },
    output_bytes: { column: "acctoutputoctets", nullable: true },
  },
};

const sumOf = (column: string) => sql<number | string>`coalesce(sum(${sql.ref(column)}), 0)`;

export class ReportsRepo {
  readonly db: Db;
  private readonly shared: RowSource;

  constructor(
    db: Kysely<Schema>,
    private readonly dialect: DialectName,
    private readonly queue: JobQueue,
    /** The SQLite file, for the file builder's own connection. */
    private readonly sqliteFile?: string,
  ) {
    this.db = db.withTables<ReportTables>();
    this.shared = new KyselyRows(db);
  }

  /** Where large reports read from: its own connection on SQLite, the pool on PostgreSQL. */
  openStream(): RowSource {
    return this.dialect === "sqlite" && this.sqliteFile ? new SqliteRows(this.sqliteFile) : this.shared;
  }

  // --- time conversions ------------------------------------------------------------------------

  /** A radacct time parameter: Unix seconds on SQLite, a Date on PostgreSQL. */
  private sessionTime(seconds: number): number | Date {
    return this.dialect === "sqlite" ? seconds : new Date(seconds * 1000);
  }

  /** A radpostauth.authdate parameter: FreeRADIUS's SQLite text, or a Date on PostgreSQL. */
  private authTime(seconds: number): string | Date {
    return this.dialect === "sqlite"
      ? isoSeconds(seconds).slice(0, 19).replace("T", " ")
      : new Date(seconds * 1000);
  }

  /**
   * A time column as the keyset cursor carries it. PostgreSQL's timestamptz may hold microseconds
   * (FreeRADIUS writes authdate so) and a Date keeps milliseconds: a cursor rounded down would skip
   * the rest of its second's rows. Text keeps every digit, with its offset.
   */
  private cursorTime(column: "authdate" | "acctstarttime") {
    return (this.dialect === "postgres" ? sql<string>`${sql.ref(column)}::text` : sql.ref(column)).as(
      "cursor_time",
    );
  }

  // --- the reports ----------------------------------------------------------------------------

  async count(report: ReportId, accountId: number, w: Window): Promise<number> {
    const query =
      report === 110
        ? this.authWhere(accountId, w).select((eb) => eb.fn.countAll<number>().as("n"))
        : report === 115
          ? this.usersWhere(accountId, w).select((eb) => eb.fn.countAll<number>().as("n"))
          : this.sessionsWhere(accountId, w).select((eb) => eb.fn.countAll<number>().as("n"));
    const row = await query.executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** One page in the sort's order, as cells. */
  async page(
    report: ReportId,
    accountId: number,
    w: Window,
    limit: number,
    offset: number,
    sort: ReportSort,
  ): Promise<Cell[][]> {
    return (await this.fetch(this.shared, report, accountId, w, null, limit, offset, sort)).rows;
  }

  /**
   * Up to `size` rows after `after` (null: from the newest). The upper bound becomes the cursor's
   * time, so the index range starts at the cursor (with only `latest` as the bound, SQLite would
   * walk from the top every chunk).
   */
  chunk(
    source: RowSource,
    report: ReportId,
    accountId: number,
    w: Window,
    after: Cursor | null,
    size: number,
  ) {
    return this.fetch(source, report, accountId, w, after, size, 0, null);
  }

  /**
   * Orders a report's rows: by the sort's field (text ignoring case, in byte order on both
   * databases; NULL last), then by time and id in the same direction, so that pages neither
   * overlap nor skip a row. Without a sort, newest first: the order the keyset chunks walk.
   */
  private ordered<DB, TB extends keyof DB, O>(
    query: SelectQueryBuilder<DB, TB, O>,
    report: ReportId,
    sort: ReportSort | null,
  ): SelectQueryBuilder<DB, TB, O> {
    const descending = sort?.descending ?? true;
    const { time, id } = ORDER[report];
    const keys: SortKey[] = [{ column: time }, { column: id }];
    const key = sort && (SORT_KEYS[report] as Record<string, SortKey>)[sort.field];
    if (key && key.column !== time) keys.unshift(key);
    let result = query;
    for (const k of keys) {
      const expression = k.text ? sql`lower(coalesce(${sql.ref(k.column)}, ''))` : sql.ref(k.column);
      result = result.orderBy(expression, (item: OrderByItemBuilder) => {
        let order = descending ? item.desc() : item.asc();
        if (k.text && this.dialect === "postgres") order = order.collate("C");
        return k.nullable ? order.nullsLast() : order;
      });
    }
    return result;
  }

  private async fetch(
    source: RowSource,
    report: ReportId,
    accountId: number,
    w: Window,
    after: Cursor | null,
    limit: number,
    offset: number,
    sort: ReportSort | null,
  ): Promise<Chunk> {
    if (report === 115) return this.userData(source, accountId, w, after, limit, offset, sort);
    const raw = await source.rows(
      report === 110
        ? this.ordered(this.authRequests(accountId, w, after), 110, sort)
            .limit(limit)
            .offset(offset)
        : this.ordered(this.sessions(accountId, w, after), 120, sort)
            .limit(limit)
            .offset(offset),
    );
    const layout = LAYOUT[report];
    const last = raw[raw.length - 1];
    const next = last ? { t: last[layout.time], id: Number(last[layout.id]) } : null;
    const convert = layout.convert;
    for (const row of raw) {
      for (let i = 0; i < convert.length; i++) {
        const f = convert[i];
        if (f) row[i] = f(row[i]);
      }
      row.length = layout.width;
    }
    return { rows: raw as Cell[][], next };
  }

  private authWhere(accountId: number, w: Window, before?: Cursor | null) {
    return this.db
      .selectFrom("radpostauth")
      .where("account_id", "=", accountId)
      .where("authdate", ">=", this.authTime(w.earliest))
      .$if(w.portalId !== undefined, (q) => q.where("portal_id", "=", w.portalId!))
      .$if(!before, (q) => q.where("authdate", "<", this.authTime(w.latest)))
      .$if(!!before, (q) =>
        q
          .where("authdate", "<=", before!.t as string)
          .where(sql<boolean>`(authdate, id) < (${before!.t}, ${before!.id})`),
      );
  }

  private authRequests(accountId: number, w: Window, after: Cursor | null) {
    return this.authWhere(accountId, w, after).select([
      "authdate",
      "username",
      "user_id",
      "reply",
      "reason",
      "client_mac",
      "ap_mac",
      "ssid",
      "nas_ip",
      "nas_identifier",
      "network_id",
      "method",
      "outer_identity",
      // The device's name, where the account knows the client's MAC (a named device; else null).
      (eb) =>
        eb
          .selectFrom("devices as d")
          .select(sql<string | null>`nullif(d.name, '')`.as("name"))
          .whereRef("d.account_id", "=", "radpostauth.account_id")
          .whereRef("d.mac", "=", "radpostauth.client_mac")
          .as("device_name"),
      "policy_id",
      "policy_name",
      "id",
      this.cursorTime("authdate"),
    ]);
  }

  private sessionsWhere(accountId: number, w: Window, before?: Cursor | null) {
    return this.db
      .selectFrom("radacct")
      .where("account_id", "=", accountId)
      .where("acctstarttime", ">=", this.sessionTime(w.earliest))
      .$if(!before, (q) => q.where("acctstarttime", "<", this.sessionTime(w.latest)))
      .$if(!!before, (q) =>
        q
          .where("acctstarttime", "<=", before!.t as number)
          .where(sql<boolean>`(acctstarttime, radacctid) < (${before!.t}, ${before!.id})`),
      );
  }

  private sessions(accountId: number, w: Window, after: Cursor | null) {
    return this.sessionsWhere(accountId, w, after).select([
      "radacctid",
      "username",
      "user_id",
      "acctstarttime",
      "acctstoptime",
      "acctsessiontime",
      "acctinputoctets",
      "acctoutputoctets",
      "client_mac",
      "ap_mac",
      "ssid",
      "nasipaddress",
      "framedipaddress",
      "acctterminatecause",
      this.cursorTime("acctstarttime"),
    ]);
  }

  private usersWhere(accountId: number, w: Window, before?: Cursor | null) {
    return this.db
      .selectFrom("users")
      .where("account_id", "=", accountId)
      .where("created", ">=", isoSeconds(w.earliest))
      .$if(!before, (q) => q.where("created", "<", isoSeconds(w.latest)))
      .$if(!!before, (q) =>
        q
          .where("created", "<=", before!.t as string)
          .where(sql<boolean>`(created, id) < (${before!.t}, ${before!.id})`),
      );
  }

  /** Users created in the window, with totals over all their sessions (read per chunk of users). */
  private async userData(
    source: RowSource,
    accountId: number,
    w: Window,
    after: Cursor | null,
    limit: number,
    offset: number,
    sort: ReportSort | null,
  ): Promise<Chunk> {
    const users = await source.rows(
      this.ordered(
        this.usersWhere(accountId, w, after).select([
          "id",
          "username",
          "email",
          "fullname",
          "status",
          "created",
        ]),
        115,
        sort,
      )
        .limit(limit)
        .offset(offset),
    );
    const totals = new Map<number, unknown[]>();
    if (users.length > 0) {
      const sums = await source.rows(
        this.db
          .selectFrom("radacct")
          .where("account_id", "=", accountId)
          .where(
            "user_id",
            "in",
            users.map((u) => Number(u[0])),
          )
          .select((eb) => [
            "user_id",
            sql<unknown>`max(coalesce(acctstoptime, acctupdatetime, acctstarttime))`.as("last"),
            eb.fn.countAll<number>().as("n"),
            sumOf("acctsessiontime").as("time"),
            sumOf("acctinputoctets").as("input"),
            sumOf("acctoutputoctets").as("output"),
          ])
          .groupBy("user_id"),
      );
      for (const s of sums) totals.set(Number(s[0]), s);
    }
    const rows = users.map((u): Cell[] => {
      const t = totals.get(Number(u[0]));
      return [
        ...(u as Cell[]),
        t ? iso(t[1]) : null,
        t ? Number(t[2]) : 0,
        t ? Number(t[3]) : 0,
        t ? Number(t[4]) : 0,
        t ? Number(t[5]) : 0,
      ];
    });
    const last = users[users.length - 1];
    return { rows, next: last ? { t: last[5], id: Number(last[0]) } : null };
  }

  // --- tasks ----------------------------------------------------------------------------------

  /**
   * The task row and its jobs, in one transaction: no job exists without its task. The first job
   * is the one that builds the file. False, writing nothing, when the account already has `limit`
   * files queued or being built: requests of one account take turns (an advisory lock on
   * PostgreSQL; SQLite writes one transaction at a time), so a burst cannot pass the limit.
   */
  async createTask(task: Omit<TaskRow, "id" | "job_id">, jobs: NewJob[], limit: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      if (this.dialect === "postgres") {
        await sql`select pg_advisory_xact_lock(${TASKS_LOCK}::int, ${task.account_id}::int)`.execute(trx);
      }
      const { unfinished } = await trx
        .selectFrom("jobs")
        .select((eb) => eb.fn.countAll<number | string>().as("unfinished"))
        .where("account_id", "=", task.account_id)
        .where("kind", "=", jobs[0]!.kind)
        .where("status", "in", ["queued", "running"])
        .executeTakeFirstOrThrow();
      if (Number(unfinished) >= limit) return false;
      const [jobId] = await this.queue.enqueue(trx as unknown as Kysely<Schema>, jobs);
      await trx
        .insertInto("report_tasks")
        .values({ ...task, job_id: jobId! })
        .execute();
      return true;
    });
  }

  /** The account's task with its job's state; another account's task is not found. */
  findTask(accountId: number, name: string): Promise<TaskWithJob | undefined> {
    return this.db
      .selectFrom("report_tasks as t")
      .leftJoin("jobs as j", "j.id", "t.job_id")
      .selectAll("t")
      .select(["j.status as job_status", "j.progress as job_progress"])
      .where("t.account_id", "=", accountId)
      .where("t.name", "=", name)
      .executeTakeFirst();
  }

  findTaskByName(accountId: number, name: string): Promise<TaskRow | undefined> {
    return this.db
      .selectFrom("report_tasks")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("name", "=", name)
      .executeTakeFirst();
  }

  /** Whether `workerId` still holds the job's lease (a worker that lost it must not finish it). */
  async holdsJob(jobId: number, workerId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("jobs")
      .select("id")
      .where("id", "=", jobId)
      .where("locked_by", "=", workerId)
      .where("status", "=", "running")
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Ends the job, marks the task done and writes its event, all in one transaction, so the event
   * is raised exactly when the task is done. False when the worker no longer holds the job.
   */
  async completeTask(
    task: TaskRow,
    workerId: string,
    done: { rows: number; finished: string; expires: number },
    event: NewEvent,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const ended = await trx
        .updateTable("jobs")
        .set({
          status: "done",
          result: JSON.stringify({ rows: done.rows }),
          locked_by: null,
          locked_until: null,
          updated: done.finished,
        })
        .where("id", "=", task.job_id)
        .where("locked_by", "=", workerId)
        .where("status", "=", "running")
        .executeTakeFirst();
      if (Number(ended.numUpdatedRows) === 0) return false;
      await trx
        .updateTable("report_tasks")
        .set({ status: "done", rows: done.rows, finished: done.finished, expires: done.expires })
        .where("account_id", "=", task.account_id)
        .where("id", "=", task.id)
        .execute();
      await insertEvents(trx as unknown as Kysely<Schema>, [event], done.finished);
      return true;
    });
  }

  async failTask(
    task: Pick<TaskRow, "id" | "account_id">,
    error: string,
    finished: string,
    expires: number,
  ): Promise<void> {
    await this.db
      .updateTable("report_tasks")
      .set({ status: "failed", error, finished, expires })
      .where("account_id", "=", task.account_id)
      .where("id", "=", task.id)
      .where("status", "=", "queued")
      .execute();
  }

  /** Tasks whose results may go, oldest first. */
  expiredTasks(now: number, limit: number): Promise<Pick<TaskRow, "id" | "account_id" | "name">[]> {
    return this.db
      .selectFrom("report_tasks")
      .select(["id", "account_id", "name"])
      .where("expires", "<=", now)
      .orderBy("expires")
      .limit(limit)
      .execute();
  }

  async deleteTask(task: Pick<TaskRow, "id" | "account_id">): Promise<void> {
    await this.db
      .deleteFrom("report_tasks")
      .where("account_id", "=", task.account_id)
      .where("id", "=", task.id)
      .execute();
  }

  /** Deletes these tasks in one transaction; returns the names of those it deleted. */
  async deleteTasks(tasks: readonly Pick<TaskRow, "id" | "account_id">[]): Promise<string[]> {
    if (tasks.length === 0) return [];
    const accounts = [...new Set(tasks.map((t) => t.account_id))];
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .deleteFrom("report_tasks")
        .where("account_id", "in", accounts)
        .where(
          "id",
          "in",
          tasks.map((t) => t.id),
        )
        .returning("name")
        .execute();
      return rows.map((r) => r.name);
    });
  }

  /** Which of these task names the account has. */
  async existingNames(accountId: number, names: readonly string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await this.db
      .selectFrom("report_tasks")
      .select("name")
      .where("account_id", "=", accountId)
      .where("name", "in", names)
      .execute();
    return new Set(rows.map((r) => r.name));
  }

  /** How many tasks have expired at `now` (a dry run's count). */
  async countExpired(now: number): Promise<number> {
    const row = await this.db
      .selectFrom("report_tasks")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("expires", "<=", now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

// Reports: a page of recent data (windows up to 4 hours), or a CSV file of any window built by a
// background job. A file task is a row in report_tasks plus a job in the jobs table, written
// together; the job streams the rows newest first in keyset chunks into a temporary file, renames
// it into place, and marks the task done with its report.ready event in one transaction. A worker
// that dies leaves its lease to run out; the job is claimed again and starts from scratch.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Database } from "../../db/database.ts";
import { JobQueue } from "../jobs/queue.ts";
import { AppError, NotFoundError, TooManyRequestsError, ValidationError } from "../shared/errors.ts";
import type { Page } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { isoNow } from "../shared/time.ts";
import { type Cell, CsvWriter, csvTable } from "./csv.ts";
import {
  type AnyReportRow,
  isReportId,
  REPORT_COLUMNS,
  REPORT_IDS,
  REPORT_SORT_FIELDS,
  REPORT_TITLES,
  RESULT_TTL_SECONDS,
  type ReportId,
  type ReportSort,
  SYNC_WINDOW_SECONDS,
} from "./definitions.ts";
import { type Chunk, type Cursor, ReportsRepo, type TaskRow, type Window } from "./repo.ts";
import { isoSeconds, parseTime, TimeExpressionError } from "./time.ts";

export const REPORT_JOB = "report";
export const REPORT_EXPIRE_JOB = "report.expire";
/** A task whose worker died this many times fails instead of being tried again. */
export const MAX_TASK_ATTEMPTS = 3;
/** Pending tasks are dropped after this long even if no worker ever took them. */
const PENDING_TTL_SECONDS = 7 * 86_400;
const TASK_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A cleanup's list of the tasks it deletes, until their files are gone. */
const JOURNAL_PREFIX = ".cleanup-";
/** `expires` of a result kept for ever (RETENTION_REPORTS_DAYS=0): never reached. */
export const NEVER_EXPIRES = Number.MAX_SAFE_INTEGER;
/** Expired tasks deleted per transaction by cleanup(). */
const CLEANUP_BATCH = 500;
/** What a refused file request is told to wait: files take seconds to minutes to build. */
const BUSY_RETRY_SECONDS = 30;

/** How many report files one account may have at once (REPORT_TASKS_PER_ACCOUNT and friends). */
export interface ReportLimits {
  /** Queued or being built; past it a request is refused with 429. */
  tasksPerAccount: number;
  /** Being built at the same time, over every worker. */
  runningPerAccount: number;
}

export const DEFAULT_REPORT_LIMITS: ReportLimits = { tasksPerAccount: 10, runningPerAccount: 3 };

export interface WindowQuery {
  earliest?: string | undefined;
  latest?: string | undefined;
  /** Report 110's pages only: one captive portal's sign-ins. */
  portal_id?: number | undefined;
}

export interface PageQuery extends WindowQuery {
  page: number;
  limit: number;
  /** `field` or `-field` of REPORT_SORT_FIELDS; newest first without it. */
  sort?: string | undefined;
}

export interface FileQuery extends WindowQuery {
  /** Files are newest first: only that order (or none) is accepted. */
  sort?: string | undefined;
}

export interface QueuedTask {
  task_name: string;
  status: "queued";
}

export type TaskState =
  | { status: "queued" | "running"; task_name: string; progress: number }
  | { status: "done"; task_name: string; file: string; filename: string; rows: number }
  | { status: "failed"; task_name: string; message: string };

/** What the report job handler passes in: the claimed job, and a way to report progress. */
export interface ReportJob {
  id: number;
  /** The task's account: every statement on its rows names it (docs/scaling.md). */
  account_id: number | null;
  payload: string;
  attempts: number;
  locked_by: string | null;
}
export type ProgressFn = (value: { rows: number; total: number }) => Promise<void>;

/** The job lost its lease to another worker: it must neither finish nor fail the task. */
export class LostLease extends Error {}

const nowSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? "" : "s"}`;
  const hours = Math.round((seconds / 3600) * 10) / 10;
  return `${hours} hour${hours === 1 ? "" : "s"}`;
}

/** 2026-11-25T21:16:18Z -> 20261125T211618Z, for file names. */
const compact = (seconds: number) => isoSeconds(seconds).replace(/[-:]/g, "");

export class ReportsService {
  /** How files are built; tests shrink the chunks to stop a worker half-way. */
  readonly tuning = {
    /** Rows per keyset query; 115 reads its users' session totals per chunk. */
    chunkRows: { 110: 2000, 115: 1000, 120: 2000 } as Record<ReportId, number>,
    progressIntervalMs: 1000,
  };

  constructor(
    private readonly repo: ReportsRepo,
    /** Where report files live: DATA_DIR/reports. */
    readonly directory: string,
    private readonly clock: () => Date = () => new Date(),
    readonly limits: ReportLimits = DEFAULT_REPORT_LIMITS,
    /** How long a finished result is kept (RETENTION_REPORTS_DAYS); 0: for ever. */
    readonly resultTtlSeconds: number = RESULT_TTL_SECONDS,
  ) {}

  /** The report for a numeric id, or 404 naming the ones that exist. */
  report(id: number): ReportId {
    if (isReportId(id)) return id;
    const known = REPORT_IDS.map((r) => `${r} (${REPORT_TITLES[r].toLowerCase()})`).join(", ");
    throw new NotFoundError(`no report ${id}; the reports are ${known}`);
  }

  /** The order asked for (`field` or `-field`), or newest first; anything else is a 400. */
  sort(report: ReportId, text: string | undefined): ReportSort {
    const fields: readonly string[] = REPORT_SORT_FIELDS[report];
    return (parseSort(text, fields) ?? { field: fields[0], descending: true }) as ReportSort;
  }

  /** Parses earliest/latest (defaults -4h and now) against one `now`; 400s name the field. */
  window(query: WindowQuery, sync: boolean, now = this.clock()): Window {
    const parse = (field: "earliest" | "latest", text: string) => {
      try {
        return parseTime(text, now);
      } catch (error) {
        if (!(error instanceof TimeExpressionError)) throw error;
        throw ValidationError.field(field, error.message);
      }
    };
    const earliest = parse("earliest", query.earliest ?? "-4h");
    const latest = parse("latest", query.latest ?? "now");
    if (earliest >= latest) {
      const both = `earliest ${isoSeconds(earliest)}, latest ${isoSeconds(latest)}`;
      throw ValidationError.field("latest", `must be later than earliest (${both})`);
    }
    if (sync && latest - earliest > SYNC_WINDOW_SECONDS) {
      const message =
        `is ${duration(latest - earliest)} before latest; the synchronous form covers at most ` +
        `${duration(SYNC_WINDOW_SECONDS)}: add format=csvfile to get the whole window as a CSV file`;
      throw ValidationError.field("earliest", message);
    }
    return query.portal_id === undefined
      ? { earliest, latest }
      : { earliest, latest, portalId: query.portal_id };
  }

  /** One page of a report (newest first unless sorted) over a window of at most 4 hours. */
  async page(accountId: number, reportId: number, query: PageQuery): Promise<Page<AnyReportRow>> {
    const report = this.report(reportId);
    const sort = this.sort(report, query.sort);
    const w = this.window(query, true);
    const offset = (query.page - 1) * query.limit;
    const cells = await this.repo.page(report, accountId, w, query.limit, offset, sort);
    const total = await this.repo.count(report, accountId, w);
    const columns = REPORT_COLUMNS[report];
    const data = cells.map((row) => {
      const object: Record<string, Cell> = {};
      for (let i = 0; i < columns.length; i++) object[columns[i]!] = row[i] ?? null;
      return object as unknown as AnyReportRow;
    });
    return { data, page: query.page, total, limit: query.limit };
  }

  /** The same page as CSV text, with a header row. */
  csv(reportId: ReportId, rows: readonly AnyReportRow[]): string {
    const columns = REPORT_COLUMNS[reportId];
    return csvTable(
      columns,
      rows.map((row) => columns.map((c) => (row as unknown as Record<string, Cell>)[c] ?? null)),
    );
  }

  /**
   * Queues a CSV file of the report over any window; the answer names the task. An account with
   * `limits.tasksPerAccount` files queued or being built is refused (429) and nothing is written.
   */
  async requestFile(accountId: number, reportId: number, query: FileQuery): Promise<QueuedTask> {
    const report = this.report(reportId);
    const sort = this.sort(report, query.sort);
    if (sort.field !== REPORT_SORT_FIELDS[report][0] || !sort.descending) {
      const newest = `-${REPORT_SORT_FIELDS[report][0]}`;
      throw ValidationError.field("sort", `cannot order a file: files are newest first (${newest})`);
    }
    const now = this.clock();
    const w = this.window(query, false, now);
    const name = randomBytes(16).toString("hex");
    const created = nowSeconds(now);
    const stored = await this.repo.createTask(
      {
        account_id: accountId,
        name,
        report_id: report,
        earliest: w.earliest,
        latest: w.latest,
        status: "queued",
        rows: null,
        error: null,
        created: isoNow(now),
        finished: null,
        expires: created + PENDING_TTL_SECONDS,
      },
      [
        { kind: REPORT_JOB, accountId, payload: { task: name } },
        // Its own clean-up, due when a result finished now would expire; it waits longer if needed.
        ...(this.resultTtlSeconds === 0
          ? []
          : [
              {
                kind: REPORT_EXPIRE_JOB,
                accountId,
                payload: { task: name },
                runAt: (created + this.resultTtlSeconds) * 1000,
              },
            ]),
      ],
      this.limits.tasksPerAccount,
    );
    if (!stored) {
      const limit = this.limits.tasksPerAccount;
      throw new TooManyRequestsError(
        `${limit} report file${limit === 1 ? "" : "s"} of this account ${limit === 1 ? "is" : "are"} ` +
          "queued or being built, the most allowed at once; ask again when one is done",
        BUSY_RETRY_SECONDS,
      );
    }
    return { task_name: name, status: "queued" };
  }

  /** Where a task stands; unknown names and other accounts' tasks are 404. */
  async task(accountId: number, name: string): Promise<TaskState> {
    const task = TASK_NAME.test(name) ? await this.repo.findTask(accountId, name) : undefined;
    if (!task) {
      const kept =
        this.resultTtlSeconds === 0 ? "" : ` (results are kept for ${duration(this.resultTtlSeconds)})`;
      throw new NotFoundError(`no report task "${name}"${kept}`);
    }
    if (task.status === "done") {
      const file = this.fileOf(task.name);
      if (!fs.existsSync(file)) {
        throw new AppError(500, `the file of report task "${name}" is missing; request the report again`);
      }
      const filename = `report-${task.report_id}-${compact(task.earliest)}-${compact(task.latest)}.csv`;
      return { status: "done", task_name: name, file, filename, rows: Number(task.rows ?? 0) };
    }
    // A job that ended without finishing its task (it failed, or gave up) failed the task too.
    if (task.status === "failed" || task.job_status === "failed" || task.job_status === "done") {
      const reason = task.error ?? "the report could not be built; request it again";
      return { status: "failed", task_name: name, message: `report task "${name}" failed: ${reason}` };
    }
    if (task.job_status !== "running") return { status: "queued", task_name: name, progress: 0 };
    let progress = 0;
    try {
      const p = JSON.parse(task.job_progress ?? "null") as { rows?: number; total?: number } | null;
      if (p?.total && p.rows) progress = Math.min(99, Math.floor((100 * p.rows) / p.total));
    } catch {
      // no progress reported yet
    }
    return { status: "running", task_name: name, progress };
  }

  fileOf(name: string): string {
    return path.join(this.directory, `${name}.csv`);
  }

  /** Builds a task's file: the report job's body. */
  async runTask(job: ReportJob, progress: ProgressFn): Promise<{ rows: number } | { skipped: string }> {
    const { task: name } = JSON.parse(job.payload) as { task: string };
    const task = job.account_id === null ? undefined : await this.repo.findTaskByName(job.account_id, name);
    if (task?.status !== "queued") return { skipped: `task ${name} is gone or finished` };
    const workerId = job.locked_by ?? "";
    const finishedAt = () => {
      const now = this.clock();
      const ttl = this.resultTtlSeconds;
      return { finished: isoNow(now), expires: ttl === 0 ? NEVER_EXPIRES : nowSeconds(now) + ttl };
    };
    if (job.attempts > MAX_TASK_ATTEMPTS) {
      const { finished, expires } = finishedAt();
      const reason = `its worker stopped ${job.attempts - 1} times while building it; request it again`;
      await this.repo.failTask(task, reason, finished, expires);
      return { skipped: reason };
    }
    try {
      const rows = await this.writeFile(task, workerId, progress);
      const { finished, expires } = finishedAt();
      const event = {
        accountId: task.account_id,
        kind: "report.ready" as const,
        data: {
          task_name: task.name,
          report_id: task.report_id,
          rows,
          earliest: isoSeconds(task.earliest),
          latest: isoSeconds(task.latest),
        },
      };
      if (!(await this.repo.completeTask(task, workerId, { rows, finished, expires }, event))) {
        throw new LostLease(`report task ${name}: another worker took the job over`);
      }
      return { rows };
    } catch (error) {
      if (!(error instanceof LostLease)) {
        const { finished, expires } = finishedAt();
        await this.repo.failTask(task, "the report could not be built; request it again", finished, expires);
      }
      throw error;
    }
  }

  /** Streams the report into a temporary file, then renames it into place; returns the row count. */
  private async writeFile(task: TaskRow, workerId: string, progress: ProgressFn): Promise<number> {
    const report = this.report(task.report_id);
    const w = { earliest: task.earliest, latest: task.latest };
    fs.mkdirSync(this.directory, { recursive: true });
    const temporary = path.join(this.directory, `${task.name}.${randomBytes(4).toString("hex")}.tmp`);
    // A deep buffer lets the disk write one chunk while the next is formatted; still bounded.
    const out = fs.createWriteStream(temporary, { highWaterMark: 1024 * 1024 });
    const writer = new CsvWriter(out);
    const source = this.repo.openStream();
    let rows = 0;
    try {
      const total = await this.repo.count(report, task.account_id, w);
      await progress({ rows: 0, total });
      const size = this.tuning.chunkRows[report];
      writer.add(REPORT_COLUMNS[report]);
      let after: Cursor | null = null;
      let reported = Date.now();
      for (;;) {
        const chunk: Chunk = await this.repo.chunk(source, report, task.account_id, w, after, size);
        for (const row of chunk.rows) {
          if (writer.add(row)) await writer.flush();
        }
        rows += chunk.rows.length;
        if (chunk.rows.length < size || !chunk.next) break;
        after = chunk.next;
        if (Date.now() - reported >= this.tuning.progressIntervalMs) {
          reported = Date.now();
          await progress({ rows, total: Math.max(total, rows) });
        }
      }
      await writer.end();
      if (!(await this.repo.holdsJob(task.job_id, workerId))) {
        throw new LostLease(`report task ${task.name}: another worker took the job over`);
      }
      fs.renameSync(temporary, this.fileOf(task.name));
      return rows;
    } catch (error) {
      out.destroy();
      fs.rmSync(temporary, { force: true });
      throw error;
    } finally {
      source.close();
    }
  }

  /**
   * The clean-up job of one task: once the task's result has expired, deletes every expired task
   * and its file. Returns when to look again if this task is not due yet (epoch ms).
   */
  async expire(accountId: number, name: string): Promise<{ retryAt: number } | { deleted: number }> {
    const task = await this.repo.findTaskByName(accountId, name);
    const now = nowSeconds(this.clock());
    if (task && task.expires > now) return { retryAt: task.expires * 1000 };
    return { deleted: await this.cleanup(now) };
  }

  /**
   * Deletes tasks expired at `now` (Unix seconds) with their files, `batch` tasks per transaction,
   * and stray files. A task's row goes first, then its file: a process killed in between leaves a
   * file no task names (never a task whose file is gone, which would answer 500), and the next
   * cleanup deletes it. `pause` runs between batches (retention yields the database there).
   */
  async cleanup(
    now = nowSeconds(this.clock()),
    batch = CLEANUP_BATCH,
    pause: () => Promise<void> = async () => {},
  ): Promise<number> {
    let deleted = 0;
    for (;;) {
      const expired = await this.repo.expiredTasks(now, batch);
      // The batch's names go to a journal first: a process killed after the rows' commit leaves
      // files the next cleanup finds there (and deletes once their rows are gone).
      const journal = this.writeJournal(expired);
      const names = await this.repo.deleteTasks(expired);
      for (const name of names) fs.rmSync(this.fileOf(name), { force: true });
      if (journal) fs.rmSync(journal, { force: true });
      deleted += names.length;
      if (expired.length < batch) break;
      await pause();
    }
    await this.removeOrphans();
    // Temporary files of workers that died; a live one is younger than a day.
    if (fs.existsSync(this.directory)) {
      for (const entry of fs.readdirSync(this.directory)) {
        if (!entry.endsWith(".tmp")) continue;
        const file = path.join(this.directory, entry);
        const stat = fs.statSync(file, { throwIfNoEntry: false });
        if (stat && stat.mtimeMs / 1000 < now - RESULT_TTL_SECONDS) fs.rmSync(file, { force: true });
      }
    }
    return deleted;
  }

  private writeJournal(tasks: readonly { name: string; account_id: number }[]): string | undefined {
    if (tasks.length === 0) return undefined;
    fs.mkdirSync(this.directory, { recursive: true });
    const file = path.join(this.directory, `${JOURNAL_PREFIX}${randomBytes(6).toString("hex")}.json`);
    fs.writeFileSync(file, JSON.stringify(tasks.map((t) => ({ name: t.name, account_id: t.account_id }))));
    return file;
  }

  /** Files of tasks whose cleanup was killed between the rows' commit and the files (journals). */
  private async removeOrphans(): Promise<void> {
    if (!fs.existsSync(this.directory)) return;
    for (const entry of fs.readdirSync(this.directory)) {
      if (!entry.startsWith(JOURNAL_PREFIX) || !entry.endsWith(".json")) continue;
      const journal = path.join(this.directory, entry);
      let tasks: { name: string; account_id: number }[] = [];
      try {
        tasks = JSON.parse(fs.readFileSync(journal, "utf8"));
      } catch {
        // cut short while written: its cleanup never reached the delete
      }
      const byAccount = new Map<number, string[]>();
      for (const t of tasks) byAccount.set(t.account_id, [...(byAccount.get(t.account_id) ?? []), t.name]);
      for (const [accountId, names] of byAccount) {
        const existing = await this.repo.existingNames(accountId, names);
        // Still there: the kill came before the commit; the task's own cleanup deletes both later.
        for (const name of names) if (!existing.has(name)) fs.rmSync(this.fileOf(name), { force: true });
      }
      fs.rmSync(journal, { force: true });
    }
  }

  /** How many tasks a cleanup at `now` would delete (wisp prune --dry-run). */
  countExpired(now = nowSeconds(this.clock())): Promise<number> {
    return this.repo.countExpired(now);
  }
}

/**
 * The reports service over one database; files go to DATA_DIR/reports. createCore is given the
 * whole configuration (with dataDir) by the server, the worker and the CLI; without it (scripts)
 * SQLite's folder, or ./data, is used.
 */
export function createReports(
  database: Database,
  options: {
    publicUrl?: string;
    dataDir?: string | undefined;
    reportTasksPerAccount?: number | undefined;
    reportRunningPerAccount?: number | undefined;
    /** RETENTION_REPORTS_DAYS: days a finished result is kept (default 1); 0: for ever. */
    retention?: { reports: number } | undefined;
  },
): ReportsService {
  const queue = new JobQueue(database.db, database.dialect);
  const dataDir =
    options.dataDir ??
    (database.dialect === "sqlite" ? path.dirname(database.location) : path.resolve("data"));
  const sqliteFile = database.dialect === "sqlite" ? database.location : undefined;
  return new ReportsService(
    new ReportsRepo(database.db, database.dialect, queue, sqliteFile),
    path.join(dataDir, "reports"),
    () => new Date(),
    {
      tasksPerAccount: options.reportTasksPerAccount ?? DEFAULT_REPORT_LIMITS.tasksPerAccount,
      runningPerAccount: options.reportRunningPerAccount ?? DEFAULT_REPORT_LIMITS.runningPerAccount,
    },
    options.retention ? options.retention.reports * 86_400 : RESULT_TTL_SECONDS,
  );
}

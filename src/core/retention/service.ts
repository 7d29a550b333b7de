// Retention: prunes what is older than its period (RETENTION_*_DAYS, rules.ts), run by the worker's
// recurring job and by `wisp prune`. Each table goes in small batches, one short transaction each,
// with a pause after every batch as long as the batch took (at least a few milliseconds): on SQLite
// every write of the process shares one connection (db/sqlite-writer.ts), so RADIUS's records and
// the API's writes get the database between batches, and pruning takes at most about half of it.
// On PostgreSQL whole monthly partitions of radpostauth and radacct are dropped first.
import type { Database } from "../../db/database.ts";
import { dropPartitionsBefore, type PartitionedTable } from "../../db/partitions.ts";
import { JobQueue, olderJobQueued } from "../jobs/queue.ts";
import type { ReportsService } from "../reports/service.ts";
import { type AccountScope, type Found, RetentionRepo, type TimeKey } from "./repo.ts";
import { cutoff, DEFAULT_RETENTION_DAYS, type RetentionDays } from "./rules.ts";

/** What was pruned from one table (or, in a dry run, would be). */
export interface TableOutcome {
  table: string;
  rows: number;
  batches: number;
  /** PostgreSQL partitions dropped whole. */
  partitions: string[];
  /** The period applied; 0: the table is kept for ever and was not read. */
  days: number;
}

export interface PruneProgress {
  table: string;
  /** Rows pruned from the table so far in this run. */
  rows: number;
  batches: number;
}

export interface PruneOptions {
  dryRun?: boolean;
  now?: Date;
  /** Called after every batch (and once per table at its end, with `done`). */
  onProgress?: (progress: PruneProgress & { done: boolean }) => void | Promise<void>;
}

/** The worker's recurring job: one prune of every table, then again after an interval. */
export const RETENTION_JOB = "retention.prune";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One table's scan: its scopes, a batch of doomed ids after a key, and their deletion. */
interface Step<S, K> {
  table: string;
  days: number;
  partitioned?: PartitionedTable;
  scopes(): Promise<S[]>;
  find(scope: S, before: Date, after: K | undefined, limit: number): Promise<Found<K>>;
  /** Deletes in one transaction; rows per table (the events step deletes from three). */
  remove(scope: S, ids: number[], before: Date): Promise<Record<string, number>>;
}

export class RetentionService {
  /** Tests and the bench change these. */
  readonly tuning = {
    /** Rows read and deleted per transaction. */
    batchRows: 2000,
    /** Bounds of the pause after each batch (it lasts as long as the batch did, within these). */
    minPauseMs: 2,
    maxPauseMs: 200,
  };

  constructor(
    private readonly repo: RetentionRepo,
    private readonly database: Pick<Database, "db">,
    private readonly reports: ReportsService,
    readonly days: RetentionDays = DEFAULT_RETENTION_DAYS,
  ) {}

  /** Makes sure the recurring retention job exists (one per installation). */
  async ensureJob(): Promise<void> {
    await new JobQueue(this.repo.db, this.repo.dialect).ensureRecurring(RETENTION_JOB);
  }

  /** Whether this retention job should stand down for an older one (two were queued at once). */
  isDuplicateJob(jobId: number): Promise<boolean> {
    return olderJobQueued(this.repo.db, RETENTION_JOB, jobId);
  }

  /** Prunes every table once; what went (or would go), table by table. */
  async prune(options: PruneOptions = {}): Promise<TableOutcome[]> {
    const now = options.now ?? new Date();
    const outcomes: TableOutcome[] = [];
    for (const step of this.steps()) {
      outcomes.push(...(await this.run(step as Step<unknown, unknown>, now, options)));
    }
    outcomes.push(await this.pruneReports(now, options));
    return outcomes;
  }

  private steps() {
    const repo = this.repo;
    const auth: Step<AccountScope, TimeKey> = {
      table: "radpostauth",
      days: this.days.auth,
      partitioned: "radpostauth",
      scopes: () => repo.accountScopes(),
      find: (scope, before, after, limit) => repo.oldAuth(scope, before, after, limit),
      remove: async (scope, ids) => ({ radpostauth: await repo.deleteAuth(scope, ids) }),
    };
    const sessions: Step<AccountScope, TimeKey> = {
      table: "radacct",
      days: this.days.sessions,
      partitioned: "radacct",
      scopes: () => repo.accountScopes(),
      find: (scope, before, after, limit) => repo.oldSessions(scope, before, after, limit),
      remove: async (scope, ids, before) => ({ radacct: await repo.deleteSessions(scope, ids, before) }),
    };
    const events: Step<number, number> = {
      table: "events",
      days: this.days.events,
      scopes: async () => (await repo.accountScopes()).filter((s): s is number => s !== null),
      find: (scope, before, after, limit) => repo.oldEvents(scope, before, after, limit),
      remove: async (scope, ids) => ({ ...(await repo.deleteEvents(scope, ids)) }),
    };
    const jobs: Step<string, TimeKey> = {
      table: "jobs",
      days: this.days.jobs,
      scopes: async () => ["done", "failed"],
      find: (status, before, after, limit) => repo.oldJobs(status, before, after, limit),
      remove: async (_status, ids) => ({ jobs: await repo.deleteJobs(ids) }),
    };
    // The audit log: deleted only here (no door edits or deletes it), by when the change was made.
    const audit: Step<number, TimeKey> = {
      table: "audit_log",
      days: this.days.audit,
      scopes: async () => (await repo.accountScopes()).filter((s): s is number => s !== null),
      find: (scope, before, after, limit) => repo.oldAudit(scope, before, after, limit),
      remove: async (scope, ids, before) => ({ audit_log: await repo.deleteAudit(scope, ids, before) }),
    };
    return [auth, sessions, events, jobs, audit];
  }

  private async run<S, K>(step: Step<S, K>, now: Date, options: PruneOptions): Promise<TableOutcome[]> {
    const before = cutoff(step.days, now);
    const counts: Record<string, number> = { [step.table]: 0 };
    const outcome = { table: step.table, batches: 0, partitions: [] as string[], days: step.days };
    const report = async (done: boolean) =>
      options.onProgress?.({ table: step.table, rows: counts[step.table]!, batches: outcome.batches, done });
    if (before) {
      if (step.partitioned && !options.dryRun) {
        // Whole months first (PostgreSQL, migration 020); nothing on SQLite or a plain table.
        const whole = await dropPartitionsBefore(this.database.db, step.partitioned, before);
        outcome.partitions = whole.dropped;
        counts[step.table] = whole.rows;
      }
      for (const scope of await step.scopes()) {
        let after: K | undefined;
        do {
          const started = performance.now();
          const batch = await step.find(scope, before, after, this.tuning.batchRows);
          after = batch.next;
          if (batch.ids.length === 0) continue;
          const removed = options.dryRun
            ? { [step.table]: batch.ids.length }
            : await step.remove(scope, batch.ids, before);
          for (const [table, rows] of Object.entries(removed)) counts[table] = (counts[table] ?? 0) + rows;
          outcome.batches++;
          await report(false);
          await this.pause(performance.now() - started);
        } while (after !== undefined);
      }
    }
    await report(true);
    return Object.entries(counts).map(([table, rows]) => ({
      ...outcome,
      table,
      rows,
      partitions: table === step.table ? outcome.partitions : [],
    }));
  }

  /** Report tasks past their expiry, with their files (the reports area's own rule). */
  private async pruneReports(now: Date, options: PruneOptions): Promise<TableOutcome> {
    const seconds = Math.floor(now.getTime() / 1000);
    const outcome: TableOutcome = {
      table: "report_tasks",
      rows: 0,
      batches: 0,
      partitions: [],
      days: this.days.reports,
    };
    if (options.dryRun) outcome.rows = await this.reports.countExpired(seconds);
    else {
      outcome.rows = await this.reports.cleanup(seconds, this.tuning.batchRows, async () => {
        outcome.batches++;
        await this.pause(this.tuning.minPauseMs);
      });
      if (outcome.rows > 0) outcome.batches++;
    }
    await options.onProgress?.({
      table: outcome.table,
      rows: outcome.rows,
      batches: outcome.batches,
      done: true,
    });
    return outcome;
  }

  private pause(batchMs: number): Promise<void> {
    const { minPauseMs, maxPauseMs } = this.tuning;
    return sleep(Math.min(maxPauseMs, Math.max(minPauseMs, batchMs)));
  }
}

export function createRetention(
  database: Database,
  reports: ReportsService,
  days: RetentionDays | undefined,
): RetentionService {
  return new RetentionService(new RetentionRepo(database.db, database.dialect), database, reports, days);
}

// The durable job queue over the jobs table. Claiming takes a lease; a job whose lease ran out
// (its worker died) is claimed again. On PostgreSQL several workers claim with
// FOR UPDATE SKIP LOCKED, so no job is run twice at once; on SQLite one writer claims at a time.
import { type Kysely, type Selectable, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { prepared } from "../../db/prepared.ts";
import type { JobsTable, Schema } from "../../db/schema.ts";
import { isoNow } from "../shared/time.ts";

export type Job = Selectable<JobsTable>;

/** The advisory lock per-account claims take turns under (PostgreSQL): "WJOB". */
const PER_ACCOUNT_CLAIM_LOCK = 0x57_4a_4f_42;

export interface NewJob {
  kind: string;
  accountId: number | null;
  payload: unknown;
  /** Epoch milliseconds; default now. */
  runAt?: number;
}

export interface JobStats {
  kind: string;
  status: "queued" | "running";
  total: number;
  /** Of them, those whose run_at has passed. */
  due: number;
  /** Epoch milliseconds. */
  earliestRunAt: number;
}

/**
 * Ids of the jobs of a kind queued or running, oldest first: how a recurring job (sweep, dispatcher,
 * retention, partitions) knows it is queued once, on `db` or a transaction.
 */
async function activeJobIds(db: Kysely<Schema>, kind: string): Promise<number[]> {
  const rows = await db
    .selectFrom("jobs")
    .select("id")
    .where("kind", "=", kind)
    .where("status", "in", ["queued", "running"])
    .orderBy("id")
    .execute();
  return rows.map((r) => r.id);
}

/** Whether a job of this recurring kind is queued or running (on `db` or the caller's transaction). */
export async function recurringJobQueued(db: Kysely<Schema>, kind: string): Promise<boolean> {
  return (await activeJobIds(db, kind)).length > 0;
}

/** Whether recurring job `jobId` should stand down for an older one of its kind (two were queued at once). */
export async function olderJobQueued(db: Kysely<Schema>, kind: string, jobId: number): Promise<boolean> {
  const [oldest] = await activeJobIds(db, kind);
  return oldest !== undefined && oldest < jobId;
}

export class JobQueue {
  /** Per set of kinds, "is anything due?" compiled once: every worker pool asks it twice a second. */
  private readonly anyDue = new Map<string, (now: number) => Promise<unknown[]>>();

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  /** Adds jobs with the given connection: pass the caller's transaction to enqueue atomically. */
  async enqueue(db: Kysely<Schema>, jobs: readonly NewJob[]): Promise<number[]> {
    if (jobs.length === 0) return [];
    const now = isoNow();
    const rows = await db
      .insertInto("jobs")
      .values(
        jobs.map((job) => ({
          kind: job.kind,
          account_id: job.accountId,
          payload: JSON.stringify(job.payload),
          status: "queued",
          run_at: job.runAt ?? Date.now(),
          created: now,
          updated: now,
        })),
      )
      .returning("id")
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Claims up to `limit` due jobs of these kinds for `workerId`, leased for `leaseMs`. With
   * `perAccount`, no account gets more than that many of these kinds running at once, counted
   * over every worker (jobs without an account are not limited).
   */
  async claim(
    workerId: string,
    kinds: readonly string[],
    limit: number,
    leaseMs: number,
    perAccount?: number,
  ): Promise<Job[]> {
    if (kinds.length === 0 || limit <= 0) return [];
    // Looking first keeps an idle poll to one compiled-once read. On SQLite an UPDATE takes the
    // database's write lock even when it changes nothing, and waits in a synchronous busy handler
    // while another process (FreeRADIUS) writes.
    if (!(await this.anythingDue(kinds, Date.now()))) return [];
    if (perAccount !== undefined) return this.claimPerAccount(workerId, kinds, limit, leaseMs, perAccount);
    const now = Date.now();
    return this.take(this.db, workerId, this.due(kinds, now).limit(limit), now, leaseMs);
  }

  private async anythingDue(kinds: readonly string[], now: number): Promise<boolean> {
    const key = kinds.join("\n");
    let check = this.anyDue.get(key);
    if (!check) {
      check = prepared(this.db, (at: number) => this.due(kinds, at).limit(1), 1);
      this.anyDue.set(key, check);
    }
    return (await check(now)).length > 0;
  }

  /**
   * One job at a time, each from an account below its share. One statement on SQLite (which
   * writes one at a time); on PostgreSQL the claimers of limited kinds take turns under an
   * advisory lock, so two workers cannot both see an account one below its share.
   */
  private async claimPerAccount(
    workerId: string,
    kinds: readonly string[],
    limit: number,
    leaseMs: number,
    perAccount: number,
  ): Promise<Job[]> {
    const claimed: Job[] = [];
    while (claimed.length < limit) {
      const now = Date.now();
      const full = this.db
        .selectFrom("jobs as r")
        .select("r.account_id")
        .where("r.kind", "in", kinds)
        .where("r.status", "=", "running")
        .where("r.locked_until", ">=", now)
        .where("r.account_id", "is not", null)
        .groupBy("r.account_id")
        .having((eb) => eb.fn.countAll(), ">=", perAccount);
      const due = this.due(kinds, now)
        .where((eb) => eb.or([eb("account_id", "is", null), eb("account_id", "not in", full)]))
        .limit(1);
      // Looking first keeps idle polls to one read: no write lock on SQLite, no lock on PostgreSQL.
      if ((await due.execute()).length === 0) break;
      let jobs: Job[];
      if (this.dialect === "sqlite") {
        jobs = await this.take(this.db, workerId, due, now, leaseMs);
      } else {
        jobs = await this.db.transaction().execute(async (trx) => {
          await sql`select pg_advisory_xact_lock(${PER_ACCOUNT_CLAIM_LOCK}::bigint)`.execute(trx);
          return this.take(trx as unknown as Kysely<Schema>, workerId, due, now, leaseMs);
        });
      }
      if (jobs.length === 0) break;
      claimed.push(...jobs);
    }
    return claimed;
  }

  /** Due jobs of these kinds (queued and due, or running with a lapsed lease), oldest first. */
  private due(kinds: readonly string[], now: number) {
    return this.db
      .selectFrom("jobs")
      .select("id")
      .where("kind", "in", kinds)
      .where((eb) =>
        eb.or([
          eb.and([eb("status", "=", "queued"), eb("run_at", "<=", now)]),
          eb.and([eb("status", "=", "running"), eb("locked_until", "<", now)]),
        ]),
      )
      .orderBy("run_at")
      .orderBy("id");
  }

  private take(
    db: Kysely<Schema>,
    workerId: string,
    due: ReturnType<JobQueue["due"]>,
    now: number,
    leaseMs: number,
  ): Promise<Job[]> {
    const lockedDue = this.dialect === "postgres" ? due.forUpdate().skipLocked() : due;
    return db
      .updateTable("jobs")
      .set({
        status: "running",
        locked_by: workerId,
        locked_until: now + leaseMs,
        attempts: sql`attempts + 1`,
        updated: isoNow(),
      })
      .where("id", "in", lockedDue)
      .returningAll()
      .execute();
  }

  /** Extends the lease of a job this worker still holds; false when it lost it. */
  async renew(id: number, workerId: string, leaseMs: number, progress?: unknown): Promise<boolean> {
    const result = await this.db
      .updateTable("jobs")
      .set({
        locked_until: Date.now() + leaseMs,
        updated: isoNow(),
        ...(progress === undefined ? {} : { progress: JSON.stringify(progress) }),
      })
      .where("id", "=", id)
      .where("locked_by", "=", workerId)
      .where("status", "=", "running")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async complete(id: number, workerId: string, result?: unknown): Promise<void> {
    await this.finish(id, workerId, {
      status: "done",
      result: result === undefined ? null : JSON.stringify(result),
    });
  }

  async fail(id: number, workerId: string, error: string): Promise<void> {
    await this.finish(id, workerId, { status: "failed", last_error: error });
  }

  /** Puts the job back in the queue for `runAt` (epoch ms). */
  async retry(id: number, workerId: string, error: string, runAt: number): Promise<void> {
    await this.finish(id, workerId, { status: "queued", last_error: error, run_at: runAt });
  }

  /**
   * The queue at this moment, per kind and status (queued, running): how many, how many of them
   * are due, and the earliest run_at. Reads only queued and running rows, through the
   * (status, run_at) index wisp_jobs_due, never the finished history.
   */
  async stats(now = Date.now()): Promise<JobStats[]> {
    const rows = await this.db
      .selectFrom("jobs")
      .select((eb) => [
        "kind",
        "status",
        eb.fn.countAll<number>().as("total"),
        eb.fn.sum<number>(eb.case().when("run_at", "<=", now).then(1).else(0).end()).as("due"),
        eb.fn.min<number>("run_at").as("earliest"),
      ])
      .where("status", "in", ["queued", "running"])
      .groupBy(["status", "kind"])
      .execute();
    return rows.map((r) => ({
      kind: r.kind,
      status: r.status as JobStats["status"],
      total: Number(r.total),
      due: Number(r.due),
      earliestRunAt: Number(r.earliest),
    }));
  }

  /** Queues one job of a recurring kind (no account, no payload) unless one is queued or running. */
  async ensureRecurring(kind: string): Promise<void> {
    if (await recurringJobQueued(this.db, kind)) return;
    await this.enqueue(this.db, [{ kind, accountId: null, payload: {} }]);
  }

  /** See olderJobQueued. */
  isDuplicate(kind: string, jobId: number): Promise<boolean> {
    return olderJobQueued(this.db, kind, jobId);
  }

  /** Ids of the jobs of a kind queued or running, oldest first. */
  active(kind: string): Promise<number[]> {
    return activeJobIds(this.db, kind);
  }

  get(id: number): Promise<Job | undefined> {
    return this.db.selectFrom("jobs").selectAll().where("id", "=", id).executeTakeFirst();
  }

  private async finish(id: number, workerId: string, changes: Partial<Omit<Job, "id">>): Promise<void> {
    await this.db
      .updateTable("jobs")
      .set({ ...changes, locked_by: null, locked_until: null, updated: isoNow() })
      .where("id", "=", id)
      .where("locked_by", "=", workerId)
      .execute();
  }
}

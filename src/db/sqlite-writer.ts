// SQLite's write connection behind Kysely, which never waits for the database's lock inside SQLite.
// better-sqlite3 runs a statement synchronously: one that waits for the write lock another process
// holds (the CLI, a worker, a backup) in SQLite's busy handler stalls the whole event loop, so every
// door (API, console, RADIUS, /healthz) with it. This connection runs with busy_timeout 0 instead:
// a statement that finds the lock taken fails at once (SQLITE_BUSY, having done nothing), gives the
// connection back to the others, sleeps without blocking (exponential backoff with jitter) and runs
// again, until a deadline; past it, DatabaseBusyError (HTTP: 503 with Retry-After).
// Every write goes through here: a transaction's BEGIN IMMEDIATE and every statement outside one.
// Inside a transaction nothing waits: BEGIN IMMEDIATE took the lock, and in WAL mode reads never
// wait for a writer.
import type SqliteDatabase from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  type QueryResult,
  SelectQueryNode,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from "kysely";

/** How long a write waits for another process's lock before it gives up (DatabaseBusyError). */
export const WRITE_WAIT_MS = 3000;
/** The first pause after a busy attempt; each next one doubles, up to the cap. */
const FIRST_PAUSE_MS = 2;
const MAX_PAUSE_MS = 100;
/** What a client that got DatabaseBusyError is told to wait (HTTP Retry-After, seconds). */
export const BUSY_RETRY_AFTER_S = 2;

/** The write lock stayed taken by another process until the deadline; nothing was written. */
export class DatabaseBusyError extends Error {
  override readonly name = "DatabaseBusyError";
  readonly retryAfterSeconds = BUSY_RETRY_AFTER_S;
  constructor(waitedMs?: number, cause?: unknown) {
    const waited = waitedMs === undefined ? "" : ` (waited ${Math.round(waitedMs)} ms)`;
    super(`the database is busy: another process holds its write lock${waited}; try again shortly`, {
      cause,
    });
  }
}

/** True for a write that failed because another process holds the database's lock. */
export function isDatabaseBusy(error: unknown): boolean {
  if (error instanceof DatabaseBusyError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_"));
}

/** A pause of about FIRST_PAUSE_MS * 2^attempt, capped, with jitter so waiters do not march in step. */
export function backoffMs(attempt: number, first = FIRST_PAUSE_MS, max = MAX_PAUSE_MS): number {
  const ceiling = Math.min(max, first * 2 ** Math.min(attempt, 30));
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Kysely's one-connection lock: whoever acquired the connection holds it until release. */
class Mutex {
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;

  get locked(): boolean {
    return this.held !== undefined;
  }

  async lock(): Promise<void> {
    while (this.held) await this.held;
    this.held = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  unlock(): void {
    const release = this.release;
    this.held = undefined;
    this.release = undefined;
    release?.();
  }
}

/** The better-sqlite3 connection with its statement cache, shared by the Kysely instances over it. */
export interface SqliteWriterHandle {
  database: SqliteDatabase.Database;
  prepare(sql: string): SqliteDatabase.Statement;
  close(): void;
  /**
   * Called before every statement of this connection that is not a read (BEGIN, a write, COMMIT):
   * the hot reads end their snapshot there (database.ts, openReader).
   */
  beforeWrite: () => void;
  /** True while a Kysely query, stream or transaction holds the connection (set by writerDialects). */
  inUse: () => boolean;
}

class Writer {
  readonly mutex = new Mutex();
  constructor(readonly handle: SqliteWriterHandle) {}
}

class WriterConnection implements DatabaseConnection {
  constructor(
    private readonly writer: Writer,
    private readonly waitMs: number,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    let started: number | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        return this.run<R>(compiled);
      } catch (error) {
        if (!isDatabaseBusy(error)) throw error;
        const now = performance.now();
        started ??= now;
        const left = this.waitMs - (now - started);
        // Inside a transaction the statement cannot be run alone again: the caller retries it all.
        if (left <= 0 || this.writer.handle.database.inTransaction) {
          throw new DatabaseBusyError(now - started, error);
        }
        await this.pause(Math.min(left, backoffMs(attempt)));
      }
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error("SQLite streams select queries only");
    const statement = this.writer.handle.prepare(compiled.sql);
    for (const row of statement.iterate(compiled.parameters as unknown[])) yield { rows: [row as R] };
  }

  private run<R>({ sql, parameters }: CompiledQuery): QueryResult<R> {
    const statement = this.writer.handle.prepare(sql);
    const values = parameters as unknown[];
    // An INSERT ... RETURNING returns rows and writes; BEGIN and COMMIT return none.
    if (!statement.reader || !statement.readonly) this.writer.handle.beforeWrite();
    if (statement.reader) return { rows: statement.all(values) as R[] };
    const { changes, lastInsertRowid } = statement.run(values);
    return {
      numAffectedRows: changes !== undefined && changes !== null ? BigInt(changes) : undefined,
      insertId:
        lastInsertRowid !== undefined && lastInsertRowid !== null ? BigInt(lastInsertRowid) : undefined,
      rows: [],
    };
  }

  /** Lets the other queries of this process use the connection while this one waits. */
  private async pause(ms: number): Promise<void> {
    this.writer.mutex.unlock();
    try {
      await sleep(ms);
    } finally {
      await this.writer.mutex.lock();
    }
  }
}

/**
 * Kysely's SqliteDriver (commit, rollback and savepoints are its own), on the shared connection:
 * transactions start with BEGIN IMMEDIATE. A deferred BEGIN that reads and then writes fails at
 * once with SQLITE_BUSY_SNAPSHOT when another process wrote in between, as the CLI does beside a
 * running server, and only the caller could run it again; IMMEDIATE takes the write lock up front.
 */
class WriterDriver extends SqliteDriver {
  private readonly connection: WriterConnection;

  constructor(
    private readonly writer: Writer,
    waitMs: number,
    private readonly owner: boolean,
  ) {
    super({ database: writer.handle as unknown as SqliteDialectConfig["database"] });
    this.connection = new WriterConnection(writer, waitMs);
  }

  override async init(): Promise<void> {}

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.writer.mutex.lock();
    return this.connection;
  }

  override async releaseConnection(): Promise<void> {
    this.writer.mutex.unlock();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }

  override async destroy(): Promise<void> {
    if (this.owner) this.writer.handle.close();
  }
}

class WriterDialect extends SqliteDialect {
  constructor(
    private readonly writer: Writer,
    private readonly waitMs: number,
    private readonly owner: boolean,
  ) {
    super({ database: writer.handle as unknown as SqliteDialectConfig["database"] });
  }

  override createDriver(): WriterDriver {
    return new WriterDriver(this.writer, this.waitMs, this.owner);
  }
}

/**
 * Two dialects over one connection: `waiting` retries a busy write until `waitMs` has passed,
 * `immediate` fails at once with DatabaseBusyError (for a caller that keeps the write and retries
 * it later itself, as the RADIUS write batcher does). Destroying the waiting one closes the connection.
 */
export function writerDialects(handle: SqliteWriterHandle, waitMs: number) {
  handle.database.pragma("busy_timeout = 0");
  const writer = new Writer(handle);
  handle.inUse = () => writer.mutex.locked;
  return { waiting: new WriterDialect(writer, waitMs, true), immediate: new WriterDialect(writer, 0, false) };
}

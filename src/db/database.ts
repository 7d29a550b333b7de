// Opens the configured database (SQLite in DATA_DIR by default, PostgreSQL with DATABASE_URL)
// behind one Kysely interface, so repositories never see which one it is.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresDialect, sql } from "kysely";
import type pg from "pg";
import { type QueryObserver, type QueryTiming, timedDialect } from "./query-timing.ts";
import type { Schema } from "./schema.ts";
import { isDatabaseBusy, type SqliteWriterHandle, WRITE_WAIT_MS, writerDialects } from "./sqlite-writer.ts";

export type DialectName = "sqlite" | "postgres";

export interface Database {
  db: Kysely<Schema>;
  dialect: DialectName;
  /** Where the data lives, for log lines (never includes a password). */
  location: string;
  /** Reads from the database (a catalog row), for health checks; rejects when it cannot. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Told how long each statement took (milliseconds): every Kysely query (transactions and the
   * SQLite immediate writer included) and every read of db/prepared.ts on SQLite's read connection.
   */
  observeQueries(observer: QueryObserver | undefined): void;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string | undefined;
  /** Connections in the PostgreSQL pool. */
  poolSize?: number;
  /** SQLite: how long a write waits for another process's lock (default WRITE_WAIT_MS). */
  writeWaitMs?: number;
}

let pgModule: typeof pg | undefined;
/** pg is loaded only for PostgreSQL: a process on SQLite never pays its start-up time and memory. */
function loadPg(): typeof pg {
  if (pgModule) return pgModule;
  pgModule = createRequire(import.meta.url)("pg") as typeof pg;
  // COUNT(*) and BIGINT come back from pg as strings; ids and counts here fit in a double.
  pgModule.types.setTypeParser(pgModule.types.builtins.INT8, (value) => Number(value));
  return pgModule;
}

/**
 * What `make` gives for a key, made once and kept. Keys here are SQL texts, which are few (they
 * come from code, values are bound), so the cache stays small; it is bounded anyway.
 */
function cachedBy<V>(make: (key: string) => V, limit = 1000): (key: string) => V {
  const made = new Map<string, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined) {
      value = make(key);
      if (made.size >= limit) made.delete(made.keys().next().value!);
      made.set(key, value);
    }
    return value;
  };
}

/**
 * better-sqlite3 with prepared statements kept per SQL text: Kysely prepares every query anew,
 * which costs more than running a small indexed query.
 */
function withStatementCache(database: SqliteDatabase.Database): SqliteWriterHandle {
  return {
    database,
    beforeWrite: () => {},
    inUse: () => false,
    prepare: cachedBy((sql) => database.prepare(sql)),
    close: () => database.close(),
  };
}

/** Where the configured data lives, for log lines and messages (never includes a password). */
export function databaseLocation(options: DatabaseOptions): string {
  if (!options.databaseUrl) return path.join(options.dataDir, "wisp.db");
  try {
    const url = new URL(options.databaseUrl);
    return `postgres://${url.host}${url.pathname}`;
  } catch {
    return "postgres://(an address that is not a valid URL)";
  }
}

export function openDatabase(options: DatabaseOptions): Database {
  if (options.databaseUrl) {
    const pool = new (loadPg().Pool)({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    // An idle connection the server dropped (restart, idle timeout) is discarded by the pool and
    // the next query reconnects; without a listener the error would end the process.
    pool.on("error", () => {});
    // The pool listens only to idle connections. One checked out (in a transaction, or whose query
    // just failed) that the server ends (restart, pg_terminate_backend) emits "Connection
    // terminated unexpectedly" on the client itself: its queries fail on their own, the pool drops
    // it on release (it is no longer queryable), and without this listener the process would end.
    pool.on("connect", (client) => client.on("error", () => {}));
    const timing: QueryTiming = { observer: undefined };
    const db = new Kysely<Schema>({ dialect: timedDialect(new PostgresDialect({ pool }), timing) });
    return {
      db,
      dialect: "postgres",
      location: databaseLocation(options),
      async ping() {
        await sql`select 1 from pg_catalog.pg_class limit 1`.execute(db);
      },
      close: () => db.destroy(),
      observeQueries(observer) {
        timing.observer = observer;
      },
    };
  }
  fs.mkdirSync(options.dataDir, { recursive: true });
  const file = databaseLocation(options);
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  // busy_timeout 0 on this connection: a write never waits inside SQLite (sqlite-writer.ts).
  const handle = withStatementCache(sqlite);
  const dialects = writerDialects(handle, options.writeWaitMs ?? WRITE_WAIT_MS);
  const timing: QueryTiming = { observer: undefined };
  const db = new Kysely<Schema>({ dialect: timedDialect(dialects.waiting, timing) });
  immediateWriters.set(db, new Kysely<Schema>({ dialect: timedDialect(dialects.immediate, timing) }));
  const read = openReader(file, timing, handle);
  readers.set(db, read.reader);
  return {
    db,
    dialect: "sqlite",
    location: file,
    async ping() {
      // A connection of its own, opened anew: the open ones would keep reading a file that was
      // deleted, replaced or made unreadable under them. WAL: a reader never waits for a writer.
      const probe = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
      try {
        probe.prepare("select count(*) from sqlite_master").get();
      } finally {
        probe.close();
      }
    },
    async close() {
      read.close();
      await db.destroy();
    },
    observeQueries(observer) {
      timing.observer = observer;
    },
  };
}

/**
 * SQLite only: the hot reads outside transactions (db/prepared.ts), on the writer connection when
 * it is free, else on a read connection (openReader). Either way they read the last committed
 * state, never a transaction half-done; this process's commits are visible to them at once.
 */
export interface SqliteReader {
  /** Runs this SQL text (prepared once) with these values: its rows, or its first column's values. */
  all(sql: string, values: unknown[], column: boolean): unknown[];
  /** Changes exactly when another connection (this process's writer included) commits. */
  dataVersion(): number;
}

const readers = new WeakMap<Kysely<Schema>, SqliteReader>();

/** The read connection behind a database's root Kysely; none for transactions or PostgreSQL. */
export function readerFor(db: Kysely<Schema>): SqliteReader | undefined {
  return readers.get(db);
}

const immediateWriters = new WeakMap<Kysely<Schema>, Kysely<Schema>>();

/**
 * The same database, for a caller that keeps its write and retries it later itself: on SQLite a
 * write that finds another process's lock fails at once with DatabaseBusyError instead of waiting
 * (sqlite-writer.ts); the root Kysely itself on PostgreSQL (nothing waits that way there).
 */
export function withoutWaiting(db: Kysely<Schema>): Kysely<Schema> {
  return immediateWriters.get(db) ?? db;
}

/**
 * One read transaction (one snapshot) on a connection for the reads of one turn of the event loop,
 * ended at the next setImmediate. SQLite begins and ends a read transaction around every statement
 * run alone: in WAL mode that is two fcntl() locks on the -shm file and a stat() of the database,
 * about 8 µs here against the 1.7 µs an indexed lookup costs inside a transaction (measured on this
 * machine's 2-core VMs), and a RADIUS login runs about ten such reads. The snapshot ends before
 * every statement of the writer connection that is not a read (BEGIN, a write, COMMIT), so the next
 * read sees this process's own commits at once, and a checkpoint of the WAL never waits for it
 * (held across the writer's commits, it raised the writer's time per PAP request from 28 to 51 µs:
 * the WAL could not start over). Other processes' commits (the CLI, a worker) are seen from the
 * next turn on, a fraction of a millisecond later, as if they had committed just after this turn's
 * reads.
 */
class TurnSnapshot {
  private open = false;
  private endScheduled = false;
  private readonly beginStatement: SqliteDatabase.Statement;
  private readonly commitStatement: SqliteDatabase.Statement;

  /** `busy`: the connection cannot end the snapshot now (a query of someone else's is running). */
  constructor(
    private readonly connection: SqliteDatabase.Database,
    private readonly busy: () => boolean = () => false,
  ) {
    this.beginStatement = connection.prepare("begin");
    this.commitStatement = connection.prepare("commit");
  }

  get active(): boolean {
    return this.open;
  }

  begin(): void {
    if (!this.open) {
      this.beginStatement.run();
      this.open = true;
    }
    if (this.endScheduled) return;
    this.endScheduled = true;
    setImmediate(() => {
      this.endScheduled = false;
      // A stream still reading inside this snapshot: it ends at the next turn, or at the next write.
      if (this.busy()) this.begin();
      else this.end();
    });
  }

  end(): void {
    if (!this.open) return;
    this.open = false;
    if (this.connection.open && this.connection.inTransaction) this.commitStatement.run();
  }
}

/**
 * The hot reads' statements on one connection, apart from Kysely's: a statement's mode is its own,
 * and one left plucking or raw would change what Kysely reads with the same SQL text. Rows come back
 * as arrays and become objects through a function made once per query: better-sqlite3 sets each
 * column on a new object through V8's slow path (a users row: 5.4 µs a query against 2.9 µs).
 */
function hotReads(connection: SqliteDatabase.Database) {
  const make = (sql: string, column: boolean): ((values: unknown[]) => unknown[]) => {
    const statement = connection.prepare(sql);
    if (column) {
      statement.pluck(true);
      return (values) => statement.all(values);
    }
    const build = rowBuilder(statement.columns().map((c) => c.name));
    if (!build) return (values) => statement.all(values);
    statement.raw(true);
    return (values) => (statement.all(values) as unknown[][]).map(build);
  };
  const rows = cachedBy((sql) => make(sql, false));
  const columns = cachedBy((sql) => make(sql, true));
  return (sql: string, values: unknown[], column: boolean): unknown[] =>
    (column ? columns : rows)(sql)(values);
}

/**
 * `(row) => ({ name0: row[0], ... })` for these column names; the last of two equal names wins, as
 * in better-sqlite3's objects. Names come from the code's SQL; JSON.stringify quotes them anyway.
 */
function rowBuilder(names: string[]): ((row: unknown[]) => unknown) | undefined {
  // In an object literal this key would set the prototype instead of a property.
  if (names.includes("__proto__")) return undefined;
  const fields = names.map((name, i) => `${JSON.stringify(name)}: row[${i}]`).join(", ");
  return new Function("row", `return { ${fields} };`) as (row: unknown[]) => unknown;
}

/**
 * The hot reads outside transactions (db/prepared.ts) run on the writer connection whenever no
 * Kysely query or transaction holds it, else on a read connection of their own. The writer's page
 * cache survives its own commits; the read connection's is dropped at the first read after any
 * other connection's commit, this process's writer included, and a RADIUS login writes its attempt
 * every time: reading the next user then cost 87-91 µs against 41 µs (in one process, src/ through
 * tsx). In WAL mode the read connection sees the last committed state without waiting for the
 * writer, whose open transactions it never sees half-done.
 */
function openReader(
  file: string,
  timing: QueryTiming,
  writer: SqliteWriterHandle,
): { reader: SqliteReader; close(): void } {
  const connection = new SqliteDatabase(file);
  connection.pragma("busy_timeout = 5000");
  connection.pragma("query_only = ON");
  const ownReads = hotReads(connection);
  const writerReads = hotReads(writer.database);
  const dataVersion = connection.prepare("pragma data_version").pluck();
  const own = new TurnSnapshot(connection);
  const onWriter = new TurnSnapshot(writer.database, writer.inUse);
  writer.beforeWrite = () => {
    own.end();
    onWriter.end();
  };
  // Kysely holds the writer (a statement, a stream, a transaction between its statements), or it
  // is inside a transaction that is not this snapshot: the read connection reads the committed state.
  const writerFree = () => !writer.inUse() && (onWriter.active || !writer.database.inTransaction);
  const run = (sql: string, values: unknown[], column: boolean) => {
    if (writerFree()) {
      try {
        onWriter.begin();
        return writerReads(sql, values, column);
      } catch (error) {
        // busy_timeout is 0 on the writer: the rare read that finds a lock (another process
        // recovering the WAL, say) waits on the read connection instead.
        if (!isDatabaseBusy(error)) throw error;
        onWriter.end();
      }
    }
    own.begin();
    return ownReads(sql, values, column);
  };
  return {
    reader: {
      all(sql, values, column) {
        const observer = timing.observer;
        if (!observer) return run(sql, values, column);
        const started = performance.now();
        const rows = run(sql, values, column);
        observer(performance.now() - started);
        return rows;
      },
      // PRAGMA data_version on the writer would not change at its own commits: the read connection's.
      dataVersion: () => {
        own.begin();
        return dataVersion.get() as number;
      },
    },
    close: () => {
      own.end();
      onWriter.end();
      connection.close();
    },
  };
}

/** True when the error is a UNIQUE constraint violation in either database. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "23505";
}

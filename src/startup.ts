// What every process (server, worker, CLI) does first, and how it says it could not: one line on
// stderr an operator can act on, never a stack trace.
import { ConfigError } from "./config.ts";
import { AppError } from "./core/shared/errors.ts";
import { ShippedFileError } from "./core/shared/shipped-files.ts";
import { type Database, type DatabaseOptions, databaseLocation, openDatabase } from "./db/database.ts";
import { migrate } from "./db/migrate.ts";
import { ensurePartitions } from "./db/partitions.ts";

/** A failure to start that the message alone explains (a port in use, an unreachable database). */
export class StartupError extends Error {}

/** The words of an error; pg reports a refused connection as an AggregateError with no message. */
function reason(error: unknown): string {
  const e = error as NodeJS.ErrnoException & { errors?: unknown[] };
  if (e?.message) return e.message;
  if (Array.isArray(e?.errors) && e.errors.length > 0) return reason(e.errors[0]);
  return e?.code ?? String(error);
}

/** Opens the configured database and brings its schema up to date. */
export async function openMigratedDatabase(options: DatabaseOptions): Promise<Database> {
  let database: Database | undefined;
  try {
    database = openDatabase(options);
    await migrate(database);
    // This month's partitions and 3 ahead (PostgreSQL). A lock not granted in time is no reason to
    // refuse to start: the DEFAULT partition takes the rows, and the worker's job tries again.
    await ensurePartitions(database.db, new Date()).catch(() => {});
    return database;
  } catch (error) {
    await database?.close().catch(() => {});
    throw new StartupError(`cannot open the database ${databaseLocation(options)}: ${reason(error)}`);
  }
}

/** A listen/bind failure of one of the server's sockets, said in words. */
export function listenFailure(error: unknown, what: string, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException)?.code;
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  switch (code) {
    case "EADDRINUSE":
      return new StartupError(`cannot listen for ${what} on ${where}: the port is already in use`);
    case "EACCES":
      return new StartupError(
        `cannot listen for ${what} on ${where}: permission denied (ports below 1024 need privileges)`,
      );
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return new StartupError(`cannot listen for ${what} on ${where}: no such address on this machine`);
    default:
      return error instanceof Error ? error : new Error(String(error));
  }
}

/** The one line printed when a process cannot do what it was asked. */
export function describeFailure(error: unknown): string {
  if (error instanceof ConfigError) return `configuration error: ${error.message}`;
  if (error instanceof StartupError || error instanceof AppError || error instanceof ShippedFileError)
    return error.message;
  return `unexpected error: ${reason(error)}`;
}

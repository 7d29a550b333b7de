// Hot-path queries built and compiled once: Kysely rebuilds and recompiles a query on every call,
// which costs as much as running a small indexed query. The query is built once with a marker in
// place of each argument; each call binds its arguments where the markers landed in the SQL.
// Reads outside transactions run on SQLite's read connection (database.ts, SqliteReader).
import type { Compilable, CompiledQuery, Kysely } from "kysely";
import { readerFor } from "./database.ts";
import type { Schema } from "./schema.ts";

interface Template<R> {
  compiled: CompiledQuery<R>;
  /** For each bound parameter: which argument goes there, or -1 for a constant of the query. */
  slots: number[];
}

function template<R>(arity: number, build: (...markers: unknown[]) => Compilable<R>): Template<R> {
  const markers = Array.from({ length: arity }, (_, i) => ({ argument: i }));
  const compiled = build(...markers).compile();
  return { compiled, slots: compiled.parameters.map((p) => markers.indexOf(p as { argument: number })) };
}

function values<R>({ compiled, slots }: Template<R>, args: readonly unknown[]): unknown[] {
  return slots.map((slot, i) => (slot < 0 ? compiled.parameters[i] : args[slot]));
}

function bind<R>(template: Template<R>, args: readonly unknown[]): CompiledQuery<R> {
  return { ...template.compiled, parameters: values(template, args) };
}

/**
 * Runs a compiled-once read. On SQLite it runs on the read connection (see SqliteReader), straight
 * through better-sqlite3, without Kysely's executor. `column`: the first column's values only.
 */
function reading<P extends unknown[]>(
  db: Kysely<Schema>,
  build: (...parameters: P) => Compilable<unknown>,
  arity: P["length"],
  column: boolean,
): (...parameters: P) => Promise<unknown[]> {
  let compiled: Template<unknown> | undefined;
  const reader = readerFor(db);
  return async (...parameters: P) => {
    compiled ??= template(arity, build as (...markers: unknown[]) => Compilable<unknown>);
    if (reader) return reader.all(compiled.compiled.sql, values(compiled, parameters), column);
    const { rows } = await db.executeQuery(bind(compiled, parameters));
    return column ? rows.map((row) => Object.values(row as object)[0]) : rows;
  };
}

/** `arity`: how many arguments the query takes. Reads only (see `reading`). */
export function prepared<P extends unknown[], R>(
  db: Kysely<Schema>,
  build: (...parameters: P) => Compilable<R>,
  arity: P["length"],
): (...parameters: P) => Promise<R[]> {
  return reading(db, build, arity, false) as (...parameters: P) => Promise<R[]>;
}

/** The same, for a query of one column: its values, without a row object around each. */
export function preparedColumn<P extends unknown[], V>(
  db: Kysely<Schema>,
  build: (...parameters: P) => Compilable<Record<string, V>>,
  arity: P["length"],
): (...parameters: P) => Promise<V[]> {
  return reading(db, build, arity, true) as (...parameters: P) => Promise<V[]>;
}

/**
 * The same, run on the connection given at each call (a transaction, say). The compiled text
 * depends on the dialect: keep one per database (a repository field), never a module constant.
 */
export function preparedOn<P extends unknown[], R>(
  build: (db: Kysely<Schema>, ...parameters: P) => Compilable<R>,
  arity: P["length"],
): (db: Kysely<Schema>, ...parameters: P) => Promise<R[]> {
  let compiled: Template<R> | undefined;
  return async (db: Kysely<Schema>, ...parameters: P) => {
    compiled ??= template(arity, (...markers) => build(db, ...(markers as P)));
    return (await db.executeQuery<R>(bind(compiled, parameters))).rows;
  };
}

// Hot-path queries built and compiled once: Kysely rebuilds and recompiles a query on every call,
// which costs as much as running a small indexed query. The query is built once with a marker in
// place of each argument; each call binds its arguments where the markers landed in the SQL.
// Reads outside transactions run straight on better-sqlite3 (database.ts, SqliteReader).
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
 * Runs a compiled-once read. On SQLite it runs outside Kysely (see SqliteReader), straight
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

/** Compiled templates by compiling adapter (the SQL differs by dialect), then by the query's shape. */
class TemplateCache {
  private readonly byAdapter = new WeakMap<object, Map<number | string, Template<unknown>>>();

  get(db: Kysely<Schema>, shape: number | string, make: () => Template<unknown>): Template<unknown> {
    const adapter = db.getExecutor().adapter;
    let byShape = this.byAdapter.get(adapter);
    if (!byShape) {
      byShape = new Map();
      this.byAdapter.set(adapter, byShape);
    }
    let compiled = byShape.get(shape);
    if (!compiled) {
      compiled = make();
      byShape.set(shape, compiled);
    }
    return compiled;
  }
}

/**
 * A multi-row INSERT of `columns`, compiled once per row count up to `maxCached` rows (more rows
 * are built by Kysely each time), on the connection given at each call. Every row gives every
 * column (undefined is written as NULL). Building and compiling a 19-column insert cost Kysely
 * more than SQLite took to run it: 3% of an EAP login's CPU (bench/eap.ts, --cpu-prof).
 */
export function preparedInsert<R extends Record<string, unknown>>(
  build: (db: Kysely<Schema>, rows: R[]) => Compilable<unknown>,
  columns: readonly (keyof R & string)[],
  maxCached = 16,
): (db: Kysely<Schema>, rows: readonly R[]) => Promise<void> {
  const width = columns.length;
  const templates = new TemplateCache();
  return async (db, rows) => {
    const n = rows.length;
    if (n === 0) return;
    if (n > maxCached) {
      await db.executeQuery(build(db, rows as R[]).compile());
      return;
    }
    const compiled = templates.get(db, n, () =>
      template(n * width, (...markers) => {
        const markerRows = Array.from(
          { length: n },
          (_, r) => Object.fromEntries(columns.map((column, c) => [column, markers[r * width + c]])) as R,
        );
        return build(db, markerRows);
      }),
    );
    const args = new Array<unknown>(n * width);
    for (let r = 0; r < n; r++) {
      const row = rows[r]!;
      for (let c = 0; c < width; c++) args[r * width + c] = row[columns[c]!] ?? null;
    }
    await db.executeQuery(bind(compiled, args));
  };
}

/**
 * A read whose arguments are lists (an IN list, or a one-element list for a single value), on the
 * connection given at each call, compiled once per dialect and list lengths while every list has at
 * most `maxCached` elements (longer ones are built by Kysely each time).
 */
export function preparedLists<L extends unknown[][], R>(
  build: (db: Kysely<Schema>, ...lists: L) => Compilable<R>,
  maxCached = 8,
): (db: Kysely<Schema>, ...lists: L) => Promise<R[]> {
  const templates = new TemplateCache();
  return async (db, ...lists) => {
    if (lists.some((list) => list.length > maxCached))
      return (await db.executeQuery(build(db, ...lists).compile())).rows;
    const lengths = lists.map((list) => list.length);
    const compiled = templates.get(db, lengths.join(","), () =>
      template(
        lengths.reduce((a, b) => a + b, 0),
        (...markers) => {
          let at = 0;
          const markerLists = lengths.map((n) => {
            at += n;
            return markers.slice(at - n, at);
          });
          return build(db, ...(markerLists as L));
        },
      ),
    );
    return (await db.executeQuery(bind(compiled as Template<R>, lists.flat()))).rows;
  };
}

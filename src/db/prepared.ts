// Hot-path queries built and compiled once: Kysely rebuilds and recompiles a query on every call,
// which costs as much as running a small indexed query. The SQL text is kept and only the
// parameters change (they are bound in the order the builder placed them).
import type { Compilable, CompiledQuery, Kysely } from "kysely";
import type { Schema } from "./schema.ts";

export function prepared<P extends unknown[], R>(
  db: Kysely<Schema>,
  build: (...parameters: P) => Compilable<R>,
  sample: P,
): (...parameters: P) => Promise<R[]> {
  let compiled: CompiledQuery<R> | undefined;
  return async (...parameters: P) => {
    compiled ??= build(...sample).compile();
    const result = await db.executeQuery<R>({ ...compiled, parameters });
    return result.rows;
  };
}

import type { SelectQueryBuilder } from "kysely";
import type { DialectName } from "./database.ts";

/**
 * Adds FOR UPDATE inside a PostgreSQL transaction, so the row read stays locked until commit and
 * a concurrent rename or delete cannot slip in between. SQLite runs one transaction at a time
 * (and has no FOR UPDATE), so the query is left as it is there.
 */
// biome-ignore lint/suspicious/noExplicitAny: any select query over any tables can take the lock
export function lockedInTransaction<Q extends SelectQueryBuilder<any, any, any>>(
  query: Q,
  dialect: DialectName,
  inTransaction: boolean,
): Q {
  return inTransaction && dialect === "postgres" ? (query.forUpdate() as Q) : query;
}

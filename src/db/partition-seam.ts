// Retention's way to the monthly partitions of radpostauth and radacct on PostgreSQL (migration
// 020, src/db/partitions.ts): whole months before the cutoff are dropped instead of deleted row by
// row. Where the table is a plain one (SQLite, or PostgreSQL before migration 020) this drops
// nothing and retention deletes in batches.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "./database.ts";
import { dropPartitionsBefore } from "./partitions.ts";
import type { Schema } from "./schema.ts";

export type PartitionedTable = "radpostauth" | "radacct";

/** Whether the table is a declaratively partitioned table in the current schema. */
export async function isPartitioned(db: Kysely<Schema>, table: PartitionedTable): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_catalog.pg_partitioned_table p
    join pg_catalog.pg_class c on c.oid = p.partrelid
    where c.relname = ${table} and c.relnamespace = current_schema()::regnamespace`.execute(db);
  return Number(rows[0]?.n ?? 0) > 0;
}

/**
 * Drops the table's monthly partitions that lie wholly before `cutoff` (and, for radacct, hold no
 * open session): their names and how many rows they held. Nothing on SQLite or when the table is
 * not partitioned.
 */
export async function dropWholePartitions(
  db: Kysely<Schema>,
  dialect: DialectName,
  table: PartitionedTable,
  cutoff: Date,
): Promise<{ dropped: string[]; rows: number }> {
  if (dialect !== "postgres" || !(await isPartitioned(db, table))) return { dropped: [], rows: 0 };
  return dropPartitionsBefore(db, table, cutoff);
}

import type { CreateTableBuilder } from "kysely";
import type { DialectName } from "../database.ts";

/** Adds the auto-incrementing integer key: SQLite's rowid alias, PostgreSQL's serial. */
export function withId<T extends string>(table: CreateTableBuilder<T, never>, dialect: DialectName) {
  return dialect === "sqlite"
    ? table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
    : table.addColumn("id", "serial", (c) => c.primaryKey());
}

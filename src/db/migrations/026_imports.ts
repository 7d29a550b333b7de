// Imports of an existing FreeRADIUS / daloRADIUS database (`wisp import freeradius`, issue 28):
// where each import stands, so a run cut short resumes where its last committed chunk ended, and
// the phone number daloRADIUS's userinfo holds for a user (Wisp's users had none).
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  await db.schema
    .alterTable("users")
    .addColumn("phone", "varchar(64)", (c) => c.notNull().defaultTo(""))
    .execute();

  // One row per account, source and phase (users, radacct, radpostauth). `cursor` is the last key
  // committed: a username for users (meaningful while the run is unfinished), a source row id for
  // the history tables (kept after the run, so the next run reads only newer rows).
  await db.schema
    .createTable("import_progress")
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("source", "varchar(255)", (c) => c.notNull())
    .addColumn("phase", "varchar(16)", (c) => c.notNull())
    .addColumn("cursor", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("finished", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("rows_done", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .addPrimaryKeyConstraint("import_progress_pk", ["account_id", "source", "phase"])
    .execute();
}

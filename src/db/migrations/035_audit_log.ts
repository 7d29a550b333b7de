// The audit log (issue 29 point 3): one row per change made through any door, written in the
// change's transaction (core/audit). Rows are only ever inserted, and deleted by retention.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const id =
    dialect === "postgres" ? sql`id bigserial primary key` : sql`id integer primary key autoincrement`;
  await sql`create table audit_log (
    ${id},
    account_id integer not null,
    created varchar(32) not null,
    actor_type varchar(16) not null,
    actor_id varchar(100) not null default '',
    actor_name varchar(320) not null default '',
    actor_role varchar(40) not null default '',
    address varchar(64) not null default '',
    resource varchar(40) not null,
    resource_id varchar(200) not null default '',
    action varchar(40) not null,
    before text,
    after text
  )`.execute(db);
  // The console and GET /api/audit list newest first within a date range; retention deletes by date.
  await sql`create index wisp_audit_log_created on audit_log (account_id, created)`.execute(db);
  await sql`create index wisp_audit_log_resource on audit_log (account_id, resource, resource_id)`.execute(
    db,
  );
  await sql`create index wisp_audit_log_age on audit_log (created)`.execute(db);
}

// Plans (issue 25 point 3): named bundles of bandwidth, data and time quotas, validity from first
// use and concurrent devices, per account; a plan_id on users, groups and voucher batches; and the
// gateway vendor of each network (nas.vendor), which picks the attributes bandwidth is written in.
// The users' API JSON (migration 008) gains plan_id: its triggers are made again with it.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

const FIELDS = ["id", "username", "email", "fullname", "status", "created", "updated", "plan_id"] as const;

function userJson(dialect: DialectName, row: string): string {
  const pairs = FIELDS.map((f) => `'${f}', ${row}${f}`).join(", ");
  return dialect === "postgres" ? `json_build_object(${pairs})::text` : `json_object(${pairs})`;
}

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const run = (text: string) => sql.raw(text).execute(db);
  const id = dialect === "postgres" ? "id bigserial primary key" : "id integer primary key autoincrement";
  await run(`create table plans (
    ${id},
    account_id integer not null,
    name varchar(64) not null,
    description varchar(200) not null default '',
    download_kbps bigint,
    upload_kbps bigint,
    data_quota bigint,
    data_period varchar(8),
    time_quota bigint,
    time_period varchar(8),
    validity bigint,
    devices integer,
    role varchar(64) not null default '',
    created varchar(32) not null,
    updated varchar(32) not null
  )`);
  await run("create unique index wisp_plans_name on plans (account_id, name)");
  for (const table of ["users", "groups", "voucher_batches"]) {
    await run(`alter table ${table} add column plan_id integer`);
    await run(`create index wisp_${table}_plan on ${table} (account_id, plan_id)`);
  }
  await run("alter table nas add column vendor varchar(16) not null default 'generic'");

  if (dialect === "postgres") {
    // Before the backfill: PostgreSQL's trigger fires on every update of users and would write the
    // JSON again with the old function.
    await run(`create or replace function wisp_users_json() returns trigger language plpgsql as $$
    begin
      NEW.api_json := ${userJson(dialect, "NEW.")};
      return NEW;
    end $$`);
    await run(`update users set api_json = ${userJson(dialect, "")}`);
    return;
  }
  await run(`update users set api_json = ${userJson(dialect, "")}`);
  await run("drop trigger wisp_users_json_insert");
  await run("drop trigger wisp_users_json_update");
  const refresh = `update users set api_json = ${userJson(dialect, "NEW.")} where id = NEW.id;`;
  await run(`create trigger wisp_users_json_insert after insert on users begin ${refresh} end`);
  await run(
    `create trigger wisp_users_json_update after update of ${FIELDS.join(", ")} on users begin ${refresh} end`,
  );
}

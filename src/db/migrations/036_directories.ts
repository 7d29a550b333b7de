// LDAP / Active Directory as an authentication source (issue 30): an account's directories (servers
// in failover order, TLS, the service bind with its sealed password, user and group searches,
// attribute mapping, resilience settings, sync interval and last result), the mapping of directory
// groups to Wisp groups, and on users the directory a shadow user comes from (its DN, and the last
// sync run that saw it: users of the directory not seen by a finished run are disabled).
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const id =
    dialect === "postgres" ? sql`id bigserial primary key` : sql`id integer primary key autoincrement`;
  await sql`create table directories (
    ${id},
    account_id integer not null,
    name varchar(20) not null,
    enabled integer not null default 1,
    servers text not null,
    start_tls integer not null default 0,
    ca_pem text not null default '',
    bind_dn text not null default '',
    bind_password text not null default '',
    user_base text not null,
    user_scope varchar(8) not null default 'sub',
    user_filter text not null default '(objectClass=person)',
    username_attribute varchar(100) not null default 'uid',
    name_attribute varchar(100) not null default 'cn',
    email_attribute varchar(100) not null default 'mail',
    disabled_mode varchar(12) not null default 'none',
    disabled_attribute varchar(100) not null default '',
    disabled_value varchar(200) not null default '',
    nt_hash_attribute varchar(100) not null default '',
    group_base text not null default '',
    group_filter text not null default '(|(objectClass=groupOfNames)(objectClass=group))',
    group_member_attribute varchar(100) not null default 'member',
    group_name_attribute varchar(100) not null default 'cn',
    sync_interval integer not null default 0,
    group_cache_seconds integer not null default 300,
    connect_timeout_ms integer not null default 2000,
    timeout_ms integer not null default 3000,
    pool_size integer not null default 4,
    breaker_failures integer not null default 3,
    breaker_cooldown_seconds integer not null default 30,
    last_sync_at bigint,
    last_sync text not null default '',
    created varchar(32) not null,
    updated varchar(32) not null
  )`.execute(db);
  await sql`create unique index wisp_directories_name on directories (account_id, name)`.execute(db);
  await sql`create table directory_groups (
    ${id},
    account_id integer not null,
    directory_id integer not null,
    directory_group varchar(500) not null,
    group_id integer not null
  )`.execute(db);
  await sql`create unique index wisp_directory_groups_map on directory_groups (account_id, directory_id, directory_group)`.execute(
    db,
  );
  await db.schema.alterTable("users").addColumn("directory_id", "integer").execute();
  await db.schema.alterTable("users").addColumn("directory_dn", "text").execute();
  await db.schema.alterTable("users").addColumn("directory_seen", "bigint").execute();
  await sql`create index wisp_users_directory on users (account_id, directory_id)`.execute(db);
}

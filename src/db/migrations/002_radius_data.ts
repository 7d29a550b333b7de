// Groups, group attributes, networks (FreeRADIUS's `nas`), captive portals, vouchers, and the
// FreeRADIUS session and post-auth tables. FreeRADIUS's own tables keep its column names and, where
// its queries depend on them, its column types per database (PostgreSQL `inet`, timestamps).
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const pg = dialect === "postgres";

  await withId(db.schema.createTable("groups"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "varchar(64)", (c) => c.notNull())
    .addColumn("description", "varchar(255)", (c) => c.notNull().defaultTo(""))
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("groups_account_name")
    .on("groups")
    .columns(["account_id"])
    .expression(sql`lower(name)`)
    .unique()
    .execute();

  for (const [table, defaultOp] of [
    ["radgroupcheck", "=="],
    ["radgroupreply", "="],
  ] as const) {
    await withId(db.schema.createTable(table), dialect)
      .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
      .addColumn("groupname", "varchar(64)", (c) => c.notNull().defaultTo(""))
      .addColumn("attribute", "varchar(64)", (c) => c.notNull().defaultTo(""))
      .addColumn("op", "char(2)", (c) => c.notNull().defaultTo(defaultOp))
      .addColumn("value", "varchar(253)", (c) => c.notNull().defaultTo(""))
      .execute();
    await db.schema
      .createIndex(`wisp_${table}_groupname`)
      .on(table)
      .columns(["account_id", "groupname"])
      .execute();
  }

  // Networks are RADIUS clients: FreeRADIUS reads them from `nas` (read_clients = yes).
  const autoId = pg ? "serial primary key" : "integer primary key autoincrement";
  await sql`create table nas (
    id ${sql.raw(autoId)},
    nasname varchar(128) not null,
    shortname varchar(32) not null,
    type varchar(30) not null default 'other',
    ports integer,
    secret varchar(128) not null,
    server varchar(64),
    community varchar(50),
    description varchar(200) default 'RADIUS Client',
    account_id integer not null references accounts(id),
    name varchar(100) not null,
    nas_identifier varchar(64) not null default '',
    require_message_authenticator integer not null default 0,
    created varchar(20) not null,
    updated varchar(20) not null
  )`.execute(db);
  // One address, one client: FreeRADIUS refuses to start with two, and Wisp's RADIUS server
  // finds the account from the packet's source address.
  await sql`create unique index wisp_nas_nasname on nas (nasname)`.execute(db);
  await sql`create index wisp_nas_account on nas (account_id)`.execute(db);

  await withId(db.schema.createTable("captive_portals"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("network_id", "integer", (c) => c.notNull().references("nas.id"))
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("success_url", "varchar(2000)", (c) => c.notNull().defaultTo(""))
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_captive_portals_account")
    .on("captive_portals")
    .columns(["account_id", "network_id"])
    .execute();

  await withId(db.schema.createTable("voucher_batches"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("prefix", "varchar(8)", (c) => c.notNull().defaultTo(""))
    .addColumn("quantity", "integer", (c) => c.notNull())
    .addColumn("validity", "integer", (c) => c.notNull())
    .addColumn("usage_limit", "integer", (c) => c.notNull())
    .addColumn("session_timeout", "integer")
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wisp_voucher_batches_account")
    .on("voucher_batches")
    .column("account_id")
    .execute();

  await withId(db.schema.createTable("vouchers"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull().references("accounts.id"))
    .addColumn("code", "varchar(16)", (c) => c.notNull())
    .addColumn("status", "varchar(16)", (c) => c.notNull())
    .addColumn("validity", "integer", (c) => c.notNull())
    .addColumn("usage_limit", "integer", (c) => c.notNull())
    .addColumn("session_timeout", "integer")
    .addColumn("batch_id", "integer", (c) => c.references("voucher_batches.id"))
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("first_used", "varchar(20)")
    .addColumn("expires", "varchar(20)")
    .addColumn("devices_used", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  // Codes are stored upper-case and matched ignoring case: unique per account.
  await db.schema
    .createIndex("wisp_vouchers_code")
    .on("vouchers")
    .columns(["account_id", "code"])
    .unique()
    .execute();
  await db.schema
    .createIndex("wisp_vouchers_batch")
    .on("vouchers")
    .columns(["account_id", "batch_id"])
    .execute();

  // FreeRADIUS's session table, with the types and nullability of FreeRADIUS's schema for each
  // database: its PostgreSQL queries write NULL where its SQLite ones write ''. account_id is null
  // only for rows a stock FreeRADIUS wrote itself.
  const time = pg ? "timestamp with time zone" : "datetime";
  const address = pg ? "inet" : "varchar(45)";
  const blank = pg ? "" : "not null default ''";
  const ip = (sqliteType: string) => sql.raw(pg ? "inet" : `${sqliteType} not null default ''`);
  await sql`create table radacct (
    radacctid ${sql.raw(pg ? "bigserial primary key" : "integer primary key autoincrement")},
    acctsessionid varchar(64) not null default '',
    acctuniqueid varchar(32) not null default '',
    username varchar(64) ${sql.raw(blank)},
    realm varchar(64) default '',
    nasipaddress ${sql.raw(pg ? "inet not null" : "varchar(15) not null default ''")},
    nasportid varchar(32) default null,
    nasporttype varchar(32) default null,
    acctstarttime ${sql.raw(time)} null default null,
    acctupdatetime ${sql.raw(time)} null default null,
    acctstoptime ${sql.raw(time)} null default null,
    acctinterval bigint default null,
    acctsessiontime bigint default null,
    acctauthentic varchar(32) default null,
    connectinfo_start varchar(128) default null,
    connectinfo_stop varchar(128) default null,
    acctinputoctets bigint default null,
    acctoutputoctets bigint default null,
    calledstationid varchar(50) ${sql.raw(blank)},
    callingstationid varchar(50) ${sql.raw(blank)},
    acctterminatecause varchar(32) ${sql.raw(blank)},
    servicetype varchar(32) default null,
    framedprotocol varchar(32) default null,
    framedipaddress ${ip("varchar(15)")},
    framedipv6address ${ip("varchar(45)")},
    framedipv6prefix ${ip("varchar(45)")},
    framedinterfaceid varchar(44) ${sql.raw(blank)},
    delegatedipv6prefix ${ip("varchar(45)")},
    class varchar(64) default null,
    account_id integer references accounts(id)
  )`.execute(db);
  await sql`create unique index wisp_radacct_uniqueid on radacct (acctuniqueid)`.execute(db);
  await sql`create index wisp_radacct_account_start on radacct (account_id, acctstarttime)`.execute(db);
  await sql`create index wisp_radacct_open on radacct (account_id, username, acctstoptime)`.execute(db);
  await sql`create index wisp_radacct_nas_open on radacct (nasipaddress, acctstoptime)`.execute(db);

  await sql`create table nasreload (
    nasipaddress ${sql.raw(address)} primary key,
    reloadtime ${sql.raw(time)} not null
  )`.execute(db);

  // One row per authentication attempt. FreeRADIUS's columns (pass stays empty: Wisp never stores
  // the password tried) plus the account.
  await sql`create table radpostauth (
    id ${sql.raw(pg ? "bigserial primary key" : "integer primary key autoincrement")},
    username varchar(64) not null default '',
    pass varchar(64) ${sql.raw(blank)},
    reply varchar(32) ${sql.raw(blank)},
    calledstationid varchar(50) ${sql.raw(blank)},
    callingstationid varchar(50) ${sql.raw(blank)},
    authdate ${sql.raw(pg ? "timestamp with time zone not null default now()" : "timestamp not null")},
    class varchar(64) default null,
    account_id integer references accounts(id)
  )`.execute(db);
  await sql`create index wisp_radpostauth_account_date on radpostauth (account_id, authdate)`.execute(db);
}

// PostgreSQL: radpostauth and radacct become tables partitioned by month (declarative RANGE
// partitioning on authdate and acctstarttime, in UTC), so retention drops a whole month instead of
// deleting millions of rows (src/db/partitions.ts keeps partitions made ahead and drops old ones).
// SQLite has no partitioning: nothing changes there.
//
// Each table is rebuilt in this step's transaction: renamed, a partitioned copy made (same columns,
// defaults and foreign keys), one partition per month that holds rows, this month and 3 ahead, and a
// DEFAULT partition (rows of a month without one, and radacct rows without a start time, which a
// RANGE partition cannot hold), so no insert ever fails for want of a partition. Rows are copied,
// the old table dropped, its indexes made again on the new one, and the id sequence handed over,
// so ids continue where they were.
//
// A unique index on a partitioned table must include the partition key, so two keys change:
// - radpostauth's primary key becomes (id, authdate), radacct's a unique (radacctid, acctstarttime);
//   ids still come from one sequence, and a lookup by id alone uses that index's first column in
//   each partition;
// - acctuniqueid, the session key accounting finds sessions by, must stay unique across months (a
//   Stop in December for a session started in November updates that row; two Wisp instances that
//   take the same Start at once must not both insert it). A unique (acctuniqueid, acctstarttime)
//   would not say so (a session's start time can change: a Start after its Interim-Update moves
//   it), so the key lives in radacct_keys, a small unpartitioned table whose primary key is the
//   session key, kept by a trigger on radacct: an insert of a key already there fails with the
//   unique violation the unique index used to raise. The plain index on acctuniqueid stays for
//   lookups. (FreeRADIUS's own PostgreSQL queries write "ON CONFLICT (AcctUniqueId)", which needs
//   a unique index on that column alone: see deploy/freeradius/README.md.)
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

const MONTHS_AHEAD = 3;

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  if (dialect !== "postgres") return;
  await partitionByMonth(db, "radpostauth", "id", "authdate", false);
  await partitionByMonth(db, "radacct", "radacctid", "acctstarttime", true);

  await sql`create table radacct_keys (acctuniqueid varchar(32) primary key)`.execute(db);
  await sql`insert into radacct_keys (acctuniqueid) select acctuniqueid from radacct`.execute(db);
  // Every row change of radacct, from Wisp or from FreeRADIUS's queries, keeps the keys. An
  // UPDATE that changes acctstarttime to another month moves the row: PostgreSQL runs it as a
  // DELETE and an INSERT (CREATE TRIGGER, "partitioned tables"), each handled below.
  await sql`create function wisp_radacct_keys() returns trigger language plpgsql as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then
        delete from radacct_keys where acctuniqueid = old.acctuniqueid;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into radacct_keys (acctuniqueid) values (new.acctuniqueid);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger wisp_radacct_keys after insert or delete or update of acctuniqueid on radacct
    for each row execute function wisp_radacct_keys()`.execute(db);
}

/** The first instant of a month in UTC, as PostgreSQL reads it; month 0-based, any number. */
function monthStart(year: number, month: number): string {
  return new Date(Date.UTC(year, month, 1)).toISOString();
}

async function partitionByMonth(
  db: Kysely<unknown>,
  table: string,
  id: string,
  time: string,
  timeNullable: boolean,
) {
  const old = `${table}_unpartitioned`;
  const t = sql.id(table);
  await sql`alter table ${t} rename to ${sql.id(old)}`.execute(db);
  const { rows: indexes } = await sql<{ def: string; primary: boolean; unique: boolean }>`
    select pg_get_indexdef(x.indexrelid) as def, x.indisprimary as primary, x.indisunique as unique
    from pg_index x where x.indrelid = ${old}::regclass`.execute(db);
  const { rows: foreignKeys } = await sql<{ name: string; def: string }>`
    select conname as name, pg_get_constraintdef(oid) as def from pg_constraint
    where conrelid = ${old}::regclass and contype = 'f'`.execute(db);
  const { rows: sequences } = await sql<{ name: string | null }>`
    select pg_get_serial_sequence(${old}, ${id}) as name`.execute(db);
  const sequence = sequences[0]?.name;
  // Unowned, the sequence outlives the old table; the new table's default already names it.
  if (sequence) await sql`alter sequence ${sql.raw(sequence)} owned by none`.execute(db);

  await sql`create table ${t} (like ${sql.id(old)} including defaults including constraints
    including storage including comments) partition by range (${sql.id(time)})`.execute(db);
  const { rows: months } = await sql<{ year: number; month: number }>`
    select distinct extract(year from ${sql.id(time)} at time zone 'UTC')::int as year,
      extract(month from ${sql.id(time)} at time zone 'UTC')::int - 1 as month
    from ${sql.id(old)} where ${sql.id(time)} is not null`.execute(db);
  const now = new Date();
  for (let ahead = 0; ahead <= MONTHS_AHEAD; ahead++) {
    months.push({ year: now.getUTCFullYear(), month: now.getUTCMonth() + ahead });
  }
  const made = new Set<string>();
  for (const { year, month } of months) {
    const from = monthStart(year, month);
    if (made.has(from)) continue;
    made.add(from);
    const name = `${table}_y${from.slice(0, 4)}m${from.slice(5, 7)}`;
    await sql`create table ${sql.id(name)} partition of ${t}
      for values from (${sql.lit(from)}) to (${sql.lit(monthStart(year, month + 1))})`.execute(db);
  }
  await sql`create table ${sql.id(`${table}_default`)} partition of ${t} default`.execute(db);

  await sql`insert into ${t} select * from ${sql.id(old)}`.execute(db);
  await sql`drop table ${sql.id(old)}`.execute(db);
  if (sequence) await sql`alter sequence ${sql.raw(sequence)} owned by ${t}.${sql.id(id)}`.execute(db);

  for (const key of foreignKeys) {
    await sql`alter table ${t} add constraint ${sql.id(key.name)} ${sql.raw(key.def)}`.execute(db);
  }
  const onOld = new RegExp(` ON (ONLY )?(\\S+\\.)?"?${old}"? `);
  for (const index of indexes) {
    if (index.primary) continue;
    // Unique indexes without the month cannot exist here; acctuniqueid's is kept by radacct_keys.
    const def = index.def.replace(onOld, ` ON ${table} `).replace(/^CREATE UNIQUE INDEX/, "CREATE INDEX");
    await sql.raw(def).execute(db);
  }
  // radacct's start time may be NULL (FreeRADIUS's schema): a unique index, not a primary key,
  // which would make the column NOT NULL.
  const key = sql`(${sql.id(id)}, ${sql.id(time)})`;
  if (timeNullable) await sql`create unique index ${sql.id(`wisp_${table}_id`)} on ${t} ${key}`.execute(db);
  else await sql`alter table ${t} add constraint ${sql.id(`${table}_pkey`)} primary key ${key}`.execute(db);
  await sql`analyze ${t}`.execute(db);
}

// Monthly partitions of radpostauth and radacct on PostgreSQL (made by migration 020): partitions
// are made ahead of time (at every start and by the worker's recurring job), and retention drops
// whole months. Partitions are named <table>_y<year>m<month> and cover one UTC month; rows of a
// month without a partition land in <table>_default and are moved out when that month's partition
// is made. Everything here does nothing on SQLite (no partitions) and on tables not partitioned.
import { type Kysely, PostgresAdapter, sql, type Transaction } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: raw SQL over catalogs and partitions no schema type names
type AnyDb = Kysely<any>;
// biome-ignore lint/suspicious/noExplicitAny: as above
type AnyTransaction = Transaction<any>;

export type PartitionedTable = "radpostauth" | "radacct";

const TIME_COLUMN: Record<PartitionedTable, string> = { radpostauth: "authdate", radacct: "acctstarttime" };

/** Advisory lock key for partition changes ("WPRT"): two processes never make the same one at once. */
const PARTITION_LOCK = 0x57_50_52_54;

/**
 * A partition change waits at most this long for the table's lock: making or dropping a partition
 * takes an exclusive lock on the table, and waiting behind a long report would hold up every
 * login queued behind it. It is tried again at the next run.
 */
const LOCK_TIMEOUT = "500ms";

interface Partition {
  name: string;
  /** First instant of its month (UTC), or null for the DEFAULT partition. */
  from: Date | null;
}

function isPostgres(db: AnyDb): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

function monthStart(year: number, month: number): Date {
  return new Date(Date.UTC(year, month, 1));
}

function nextMonth(from: Date): Date {
  return monthStart(from.getUTCFullYear(), from.getUTCMonth() + 1);
}

export function partitionName(table: PartitionedTable, from: Date): string {
  const month = String(from.getUTCMonth() + 1).padStart(2, "0");
  return `${table}_y${from.getUTCFullYear()}m${month}`;
}

/** The partitions of a table, or null when it is not partitioned. */
async function partitionsOf(db: AnyDb, table: PartitionedTable): Promise<Partition[] | null> {
  const { rows: parent } = await sql<{ kind: string }>`
    select relkind as kind from pg_class where oid = to_regclass(${table})`.execute(db);
  if (parent[0]?.kind !== "p") return null;
  const { rows } = await sql<{ name: string; bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass(${table})`.execute(db);
  const monthly = new RegExp(`^${table}_y(\\d{4})m(\\d{2})$`);
  const found: Partition[] = [];
  for (const row of rows) {
    if (row.bound === "DEFAULT") {
      found.push({ name: row.name, from: null });
      continue;
    }
    const match = monthly.exec(row.name);
    if (match) found.push({ name: row.name, from: monthStart(Number(match[1]), Number(match[2]) - 1) });
  }
  return found;
}

async function guarded<T>(db: AnyDb, fn: (trx: AnyTransaction) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${PARTITION_LOCK})`.execute(trx);
    await sql`set local lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx);
    return fn(trx);
  });
}

/**
 * Makes the monthly partitions missing from now's month to `monthsAhead` months after it, and
 * those of months that rows in the DEFAULT partition belong to (moving those rows into them).
 * Returns the names of the partitions made.
 */
export async function ensurePartitions(db: AnyDb, now: Date, monthsAhead = 3): Promise<string[]> {
  if (!isPostgres(db)) return [];
  const made: string[] = [];
  for (const table of Object.keys(TIME_COLUMN) as PartitionedTable[]) {
    const partitions = await partitionsOf(db, table);
    if (!partitions) continue;
    const time = sql.id(TIME_COLUMN[table]);
    const fallback = partitions.find((p) => p.from === null);
    const wanted = new Map<string, Date>();
    for (let ahead = 0; ahead <= monthsAhead; ahead++) {
      const from = monthStart(now.getUTCFullYear(), now.getUTCMonth() + ahead);
      wanted.set(partitionName(table, from), from);
    }
    if (fallback) {
      const { rows } = await sql<{ month: Date }>`
        select distinct date_trunc('month', ${time} at time zone 'UTC') at time zone 'UTC' as month
        from ${sql.id(fallback.name)} where ${time} is not null`.execute(db);
      for (const { month } of rows) wanted.set(partitionName(table, month), month);
    }
    const existing = new Set(partitions.map((p) => p.name));
    for (const [name, from] of wanted) {
      if (existing.has(name)) continue;
      const created = await guarded(db, async (trx) => {
        if ((await partitionsOf(trx, table))?.some((p) => p.name === name)) return false;
        await createPartition(trx, table, name, from, fallback?.name);
        return true;
      });
      if (created) made.push(name);
    }
  }
  return made;
}

/**
 * One month's partition. Rows of that month waiting in the DEFAULT partition would make the
 * CREATE fail (the default may not hold rows of a partition's range), so they are taken out first
 * and put back through the table, which routes them into the new partition.
 */
async function createPartition(
  trx: AnyTransaction,
  table: PartitionedTable,
  name: string,
  from: Date,
  fallback: string | undefined,
): Promise<void> {
  const time = sql.id(TIME_COLUMN[table]);
  const to = nextMonth(from);
  const range = sql`${time} >= ${from} and ${time} < ${to}`;
  let waiting = false;
  if (fallback) {
    const { rows } = await sql<{ found: boolean }>`
      select exists (select 1 from ${sql.id(fallback)} where ${range}) as found`.execute(trx);
    waiting = rows[0]?.found === true;
  }
  if (waiting) {
    await sql`create temporary table wisp_waiting (like ${sql.id(table)}) on commit drop`.execute(trx);
    await sql`with taken as (delete from ${sql.id(fallback!)} where ${range} returning *)
      insert into wisp_waiting select * from taken`.execute(trx);
  }
  await sql`create table ${sql.id(name)} partition of ${sql.id(table)}
    for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`.execute(trx);
  if (waiting) await sql`insert into ${sql.id(table)} select * from wisp_waiting`.execute(trx);
}

/**
 * Detaches and drops the monthly partitions of `table` whose whole month ends on or before
 * `cutoff`; for radacct, only those without an open session (acctstoptime null), whose row must
 * stay for the Stop to update. The DEFAULT partition is never dropped.
 */
export async function dropPartitionsBefore(
  db: AnyDb,
  table: PartitionedTable,
  cutoff: Date,
): Promise<{ dropped: string[]; rows: number }> {
  const dropped: string[] = [];
  let rows = 0;
  if (!isPostgres(db)) return { dropped, rows };
  const partitions = await partitionsOf(db, table);
  if (!partitions) return { dropped, rows };
  const old = partitions
    .filter((p): p is Partition & { from: Date } => p.from !== null && nextMonth(p.from) <= cutoff)
    .sort((a, b) => a.from.getTime() - b.from.getTime());
  for (const partition of old) {
    const name = sql.id(partition.name);
    const gone = await guarded(db, async (trx) => {
      if (!(await partitionsOf(trx, table))?.some((p) => p.name === partition.name)) return 0;
      if (table === "radacct") {
        // Locked against writes first: no session can open in it between the check and the drop.
        await sql`lock table ${name} in share mode`.execute(trx);
        const { rows } = await sql<{ open: boolean }>`
          select exists (select 1 from ${name} where acctstoptime is null) as open`.execute(trx);
        if (rows[0]?.open) return 0;
        // Dropping a table runs no row triggers: its sessions' keys go here (migration 020).
        await sql`delete from radacct_keys k using ${name} p where k.acctuniqueid = p.acctuniqueid`.execute(
          trx,
        );
      }
      // Counted before the detach, which locks the parent: the operator's log says how many rows went.
      const { rows: counted } = await sql<{ n: string }>`select count(*) as n from ${name}`.execute(trx);
      await sql`alter table ${sql.id(table)} detach partition ${name}`.execute(trx);
      await sql`drop table ${name}`.execute(trx);
      return { rows: Number(counted[0]?.n ?? 0) };
    });
    if (gone) {
      dropped.push(partition.name);
      rows += gone.rows;
    }
  }
  return { dropped, rows };
}

// What an import reads from a FreeRADIUS / daloRADIUS database: its tables and columns, users and
// groups a chunk of names at a time (every table keyed by the name, read by ranges the source's own
// index and collation order), the nas table, and the history tables by id. Never a whole table at
// once: memory stays bounded whatever the source's size.
import type { SourceDb, SourceDialect, SourceRow } from "./source-db.ts";

/** The tables that carry a user's rows, and the name column of each. */
export const USER_SOURCES = [
  ["radcheck", "username"],
  ["radreply", "username"],
  ["radusergroup", "username"],
  ["userinfo", "username"],
] as const;
export const GROUP_SOURCES = [
  ["radgroupcheck", "groupname"],
  ["radgroupreply", "groupname"],
  ["radusergroup", "groupname"],
] as const;
export type NamedSource = readonly (readonly [string, string])[];

/** The tables an import knows; any other table of the source is left alone. */
const KNOWN_TABLES = [
  "radcheck",
  "radreply",
  "radgroupcheck",
  "radgroupreply",
  "radusergroup",
  "nas",
  "radacct",
  "radpostauth",
  "userinfo",
];

/** radacct's columns an import copies (FreeRADIUS 3.2's schema); those a source lacks are left empty. */
export const RADACCT_TEXT_COLUMNS = [
  "acctsessionid",
  "acctuniqueid",
  "username",
  "realm",
  "nasipaddress",
  "nasportid",
  "nasporttype",
  "acctauthentic",
  "connectinfo_start",
  "connectinfo_stop",
  "calledstationid",
  "callingstationid",
  "acctterminatecause",
  "servicetype",
  "framedprotocol",
  "framedipaddress",
  "framedipv6address",
  "framedipv6prefix",
  "framedinterfaceid",
  "delegatedipv6prefix",
  "class",
] as const;
export const RADACCT_NUMBER_COLUMNS = [
  "acctinterval",
  "acctsessiontime",
  "acctinputoctets",
  "acctoutputoctets",
] as const;
export const RADACCT_TIME_COLUMNS = ["acctstarttime", "acctupdatetime", "acctstoptime"] as const;
export const RADPOSTAUTH_TEXT_COLUMNS = [
  "username",
  "reply",
  "calledstationid",
  "callingstationid",
  "class",
] as const;
/** Address columns: PostgreSQL's FreeRADIUS schema types them inet, read back as text. */
const INET_COLUMNS = new Set([
  "nasipaddress",
  "framedipaddress",
  "framedipv6address",
  "framedipv6prefix",
  "delegatedipv6prefix",
]);

/** A time column as Unix seconds, whatever the source stores (datetime, timestamptz, text or integer). */
function unixSeconds(dialect: SourceDialect, column: string): string {
  if (dialect === "mysql") return `unix_timestamp(${column})`;
  if (dialect === "postgres") return `extract(epoch from ${column})`;
  return `case typeof(${column}) when 'integer' then ${column} when 'real' then cast(${column} as integer) when 'text' then cast(strftime('%s', ${column}) as integer) end`;
}

/** The source's text of a name as hex of its UTF-8, so names differing only in case stay apart. */
function hexOf(dialect: SourceDialect, column: string): string {
  if (dialect === "postgres") return `encode(convert_to(${column}, 'UTF8'), 'hex')`;
  return `hex(${column})`;
}

export class FreeradiusSource {
  /** Known tables present in the source, with their (lower-case) column names. */
  private readonly tables = new Map<string, Set<string>>();

  constructor(readonly db: SourceDb) {}

  get label(): string {
    return this.db.label;
  }

  /** Reads which known tables and columns the source has. */
  async inspect(): Promise<void> {
    const rows = await this.db.query(this.columnsQuery(), []);
    for (const row of rows) {
      const table = String(row.table_name ?? row.TABLE_NAME).toLowerCase();
      const column = String(row.column_name ?? row.COLUMN_NAME).toLowerCase();
      if (!KNOWN_TABLES.includes(table)) continue;
      if (!this.tables.has(table)) this.tables.set(table, new Set());
      this.tables.get(table)!.add(column);
    }
  }

  private columnsQuery(): string {
    if (this.db.dialect === "mysql") {
      return "select table_name, column_name from information_schema.columns where table_schema = database()";
    }
    if (this.db.dialect === "postgres") {
      return "select table_name, column_name from information_schema.columns where table_schema = current_schema()";
    }
    return "select m.name as table_name, p.name as column_name from sqlite_master m join pragma_table_info(m.name) p where m.type in ('table', 'view')";
  }

  has(table: string, ...columns: string[]): boolean {
    const found = this.tables.get(table);
    return found !== undefined && columns.every((column) => found.has(column));
  }

  /** The name sources present: each table that exists with its name column. */
  present(sources: NamedSource): NamedSource {
    return sources.filter(([table, column]) => this.has(table, column));
  }

  async count(table: string, where = "", params: unknown[] = []): Promise<number> {
    if (!this.tables.has(table)) return 0;
    const [row] = await this.db.query(`select count(*) as n from ${table} ${where}`, params);
    return Number(row?.n ?? 0);
  }

  /** Rows of a name source whose name is empty or NULL: FreeRADIUS never matches them. */
  async blankNames(table: string, column: string): Promise<number> {
    return this.count(table, `where ${column} is null or ${column} = ''`);
  }

  private union(sources: NamedSource, select: (table: string, column: string) => string): string {
    return sources.map(([table, column]) => select(table, column)).join(" union all ");
  }

  /** How many distinct names the sources hold (the progress bar's total). */
  async countNames(sources: NamedSource): Promise<number> {
    if (sources.length === 0) return 0;
    const names = sources
      .map(([table, column]) => `select ${column} as name from ${table} where ${column} > ''`)
      .join(" union ");
    const [row] = await this.db.query(`select count(*) as n from (${names}) u`);
    return Number(row?.n ?? 0);
  }

  /**
   * The next `limit` names after `after`, in the source's own order (its collation): each table's
   * next names by its index, merged by the database. The last one bounds the next chunk.
   */
  async nextNames(sources: NamedSource, after: string, limit: number): Promise<string[]> {
    if (sources.length === 0) return [];
    const parts = sources.map(
      ([table, column], i) =>
        `select name from (select ${column} as name from ${table} where ${column} > ? order by ${column} limit ${limit}) t${i}`,
    );
    const rows = await this.db.query(
      `select name from (${parts.join(" union ")}) u order by name limit ${limit}`,
      sources.map(() => after),
    );
    return rows.map((row) => String(row.name));
  }

  /** A table's rows whose name is in (after, upTo], by name then id. */
  async rowsInRange(table: string, column: string, after: string, upTo: string): Promise<SourceRow[]> {
    if (!this.has(table, column)) return [];
    const order = this.has(table, "id") ? `${column}, id` : column;
    return this.db.query(`select * from ${table} where ${column} > ? and ${column} <= ? order by ${order}`, [
      after,
      upTo,
    ]);
  }

  /**
   * Names that differ only in case (Wisp's users and groups are unique ignoring case; FreeRADIUS on
   * MySQL matches them as one): lower-case name -> the variants, as the source spells them.
   */
  async caseDuplicates(sources: NamedSource): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    if (sources.length === 0) return found;
    const hex = hexOf(this.db.dialect, "name");
    const names = this.union(sources, (t, c) => `select ${c} as name from ${t} where ${c} > ''`);
    const list =
      this.db.dialect === "postgres" ? `string_agg(distinct ${hex}, ',')` : `group_concat(distinct ${hex})`;
    const rows = await this.db.query(
      `select lower(name) as k, ${list} as variants from (${names}) u group by lower(name) having count(distinct ${hex}) > 1`,
    );
    for (const row of rows) {
      const variants = String(row.variants)
        .split(",")
        .map((h) => Buffer.from(h, "hex").toString("utf8"))
        .sort();
      found.set(variants[0]!.toLowerCase(), variants);
    }
    return found;
  }

  /** nas rows after an id, by id. */
  async nasRows(afterId: number, limit: number): Promise<SourceRow[]> {
    if (!this.has("nas", "id", "nasname")) return [];
    return this.db.query(`select * from nas where id > ? order by id limit ${limit}`, [afterId]);
  }

  /** radacct rows after an id, times as Unix seconds, addresses as text. */
  async radacctRows(afterId: number, limit: number): Promise<SourceRow[]> {
    const d = this.db.dialect;
    const columns = [
      "radacctid",
      ...RADACCT_TEXT_COLUMNS.filter((c) => this.has("radacct", c)).map((c) =>
        d === "postgres" && INET_COLUMNS.has(c) ? `${c}::text as ${c}` : c,
      ),
      ...RADACCT_NUMBER_COLUMNS.filter((c) => this.has("radacct", c)),
      ...RADACCT_TIME_COLUMNS.filter((c) => this.has("radacct", c)).map(
        (c) => `${unixSeconds(d, c)} as ${c}`,
      ),
    ];
    return this.db.query(
      `select ${columns.join(", ")} from radacct where radacctid > ? order by radacctid limit ${limit}`,
      [afterId],
    );
  }

  /** radpostauth rows after an id (never the password column), the time as Unix seconds. */
  async radpostauthRows(afterId: number, limit: number): Promise<SourceRow[]> {
    const columns = [
      "id",
      ...RADPOSTAUTH_TEXT_COLUMNS.filter((c) => this.has("radpostauth", c)),
      `${unixSeconds(this.db.dialect, "authdate")} as authdate`,
    ];
    return this.db.query(
      `select ${columns.join(", ")} from radpostauth where id > ? order by id limit ${limit}`,
      [afterId],
    );
  }
}

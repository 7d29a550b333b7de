// One account cannot claim another's RADIUS clients (issue 12): a network may not share an address
// with another account's networks. To find such networks with an index, each nas row gets its
// first and last address as keys that compare as text: "4" and 8 hex digits for IPv4, "6" and 32
// for IPv6 (core/networks/address.ts computes them for new rows; this step fills in the existing
// ones, with its own copy of the rule, as migrations stay as they were written).
//
// Rows that already overlap across accounts are left as they are: refusing to start would also
// stop the CLI that could fix them, and moving their traffic to another account at an upgrade
// could cut off a site that works today. Lookups stay as they were (the narrowest network holding
// the source wins; addresses are unique, so the choice is deterministic), and docs/radius.md gives the
// query that lists such pairs.
import ipaddr from "ipaddr.js";
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

/** The range keys of a nasname as Wisp writes it ("address" or "address/prefix"), or null. */
function rangeOf(nasname: string): { start: string; end: string } | null {
  const [text = "", prefixText, extra] = nasname.split("/");
  if (extra !== undefined || !ipaddr.isValid(text)) return null;
  let address = ipaddr.parse(text);
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) address = address.toIPv4Address();
  const bytes = address.toByteArray();
  const width = bytes.length * 8;
  const prefix = prefixText === undefined ? width : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > width) return null;
  const bits = (i: number) => Math.min(8, Math.max(0, prefix - i * 8));
  const first = bytes.map((byte, i) => byte & (0xff << (8 - bits(i))) & 0xff);
  const last = first.map((byte, i) => byte | (0xff >> bits(i)));
  const key = (list: number[]) =>
    (list.length === 4 ? "4" : "6") + list.map((b) => b.toString(16).padStart(2, "0")).join("");
  return { start: key(first), end: key(last) };
}

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  // Byte order, whatever the database's collation.
  const type = sql.raw(dialect === "postgres" ? 'varchar(33) collate "C"' : "varchar(33)");
  await sql`alter table nas add column range_start ${type}`.execute(db);
  await sql`alter table nas add column range_end ${type}`.execute(db);
  const rows = await sql<{ id: number; nasname: string }>`select id, nasname from nas`.execute(db);
  for (const row of rows.rows) {
    const range = rangeOf(row.nasname);
    if (!range) continue;
    await sql`update nas set range_start = ${range.start}, range_end = ${range.end}
      where id = ${row.id}`.execute(db);
  }
  await sql`create index wisp_nas_range on nas (range_start)`.execute(db);
}

import { type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { NasTable, Schema } from "../../db/schema.ts";
import { NAMED_ROWS, ordered, type SortPlan } from "../../db/sort.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import { likePattern } from "../shared/text.ts";
import type { NetworkSortField } from "./rules.ts";

/** A `nas` row, secret included: only services see it, and only the RADIUS door gets it out. */
export type NetworkRow = Selectable<NasTable>;
export type NetworkListRow = NetworkRow & { account_name: string };
export type NetworkChanges = Omit<Updateable<NasTable>, "id" | "account_id" | "created">;
export type NewNetworkRow = Omit<
  NetworkRow,
  | "id"
  | "type"
  | "ports"
  | "server"
  | "community"
  | "eap_method"
  | "coa_enabled"
  | "coa_port"
  | "coa_fallback"
  | "coa_rate"
  | "interim_interval"
  | "stale_after"
  | "mab_mode"
  | "mab_password"
  | "mab_secret"
  | "time_zone"
  | "vendor"
> &
  Partial<
    Pick<
      NetworkRow,
      | "coa_enabled"
      | "coa_port"
      | "coa_fallback"
      | "coa_rate"
      | "interim_interval"
      | "stale_after"
      | "mab_mode"
      | "mab_password"
      | "mab_secret"
      | "time_zone"
      | "vendor"
    >
  > & {
    /** PEAP (the column's default), TTLS or TLS. */
    eap_method?: string;
  };

export interface NetworkFilter {
  search?: string | undefined;
}

const SORT: SortPlan<NetworkSortField> = NAMED_ROWS;
/**
 * The PostgreSQL advisory lock that serialises changes of network addresses: the two int4 keys
 * "wisp" (0x77697370) and 1. Held until the transaction ends.
 */
const ADDRESS_LOCK = sql.raw("2003399536, 1");

export class NetworksRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn with a repository bound to one transaction. */
  transaction<T>(fn: (repo: NetworksRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new NetworksRepo(trx, this.dialect)));
  }

  /**
   * Inside a transaction: waits until no other transaction is changing network addresses, and keeps
   * others waiting until this one ends, so "no other account's network overlaps" stays true from
   * the check to the commit. Checking two rows that do not exist yet cannot be done with row locks;
   * on PostgreSQL this takes a transaction-level advisory lock. SQLite transactions begin with
   * BEGIN IMMEDIATE (db/database.ts): one writer at a time, across processes, already.
   */
  async lockAddresses(): Promise<void> {
    if (this.dialect === "postgres")
      await sql`select pg_advisory_xact_lock(${ADDRESS_LOCK})`.execute(this.db);
  }

  /**
   * Whether a network of another account shares an address with the range. Networks either nest or
   * are disjoint, so another one overlaps this range when it starts inside it or holds it
   * (is one of `enclosing`): two index lookups, whatever the number of networks.
   */
  async overlapsOtherAccount(
    accountId: number,
    range: { start: string; end: string; enclosing: string[] },
  ): Promise<boolean> {
    const row = await this.db
      .selectFrom("nas")
      .select("id")
      .where("account_id", "<>", accountId)
      .where((eb) =>
        eb.or([
          eb.and([eb("range_start", ">=", range.start), eb("range_start", "<=", range.end)]),
          eb("nasname", "in", range.enclosing),
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async list(
    accountId: number,
    filter: NetworkFilter,
    page: PageRequest,
    sort?: Sort<NetworkSortField>,
  ): Promise<{ rows: NetworkRow[]; total: number }> {
    let query = this.db.selectFrom("nas").where("account_id", "=", accountId);
    if (filter.search) {
      query = query.where(sql<boolean>`lower(name) like ${likePattern(filter.search)} escape '\\'`);
    }
    const [rows, count] = await Promise.all([
      ordered(query.selectAll(), this.dialect, SORT, sort).limit(page.limit).offset(offsetOf(page)).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  /**
   * Operators' listing (CLI): every account's networks unless one is given, or one network by id;
   * `ranges`: only networks written as a CIDR (single addresses are never too wide).
   */
  listWithAccounts(
    filter: { accountId?: number; id?: number; ranges?: boolean } = {},
  ): Promise<NetworkListRow[]> {
    let query = this.db
      .selectFrom("nas")
      .innerJoin("accounts", "accounts.id", "nas.account_id")
      .selectAll("nas")
      .select("accounts.name as account_name")
      .orderBy("nas.id");
    if (filter.accountId !== undefined) query = query.where("nas.account_id", "=", filter.accountId);
    if (filter.id !== undefined) query = query.where("nas.id", "=", filter.id);
    if (filter.ranges) query = query.where("nas.nasname", "like", "%/%");
    return query.execute();
  }

  findById(accountId: number, id: number): Promise<NetworkRow | undefined> {
    return this.db
      .selectFrom("nas")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** Across accounts on purpose: an address belongs to one network in the whole installation. */
  async idByNasname(nasname: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom("nas")
      .select("id")
      .where("nasname", "=", nasname)
      .executeTakeFirst();
    return row?.id;
  }

  /** The rows whose address is one of the given texts (the RADIUS door's lookup, on the unique index). */
  findByNasnames(nasnames: string[]): Promise<NetworkRow[]> {
    if (nasnames.length === 0) return Promise.resolve([]);
    return this.db.selectFrom("nas").selectAll().where("nasname", "in", nasnames).execute();
  }

  insert(row: NewNetworkRow): Promise<NetworkRow> {
    return this.db.insertInto("nas").values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(accountId: number, id: number, changes: NetworkChanges): Promise<NetworkRow | undefined> {
    return this.db
      .updateTable("nas")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  async countPortals(accountId: number, id: number): Promise<number> {
    const row = await this.db
      .selectFrom("captive_portals")
      .select((eb) => eb.fn.countAll<number>().as("total"))
      .where("account_id", "=", accountId)
      .where("network_id", "=", id)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  /**
   * Deletes the network and its captive portals; returns how many portals went. The network row is
   * written first so that, on PostgreSQL, a portal being added to it concurrently waits and then fails
   * on its foreign key instead of slipping in between.
   */
  async deleteWithPortals(accountId: number, id: number, at: string): Promise<number> {
    await this.update(accountId, id, { updated: at });
    const portals = await this.db
      .deleteFrom("captive_portals")
      .where("account_id", "=", accountId)
      .where("network_id", "=", id)
      .executeTakeFirst();
    // Its uploaded RadSec CA goes too (no longer trusted by the listener); certificates Wisp issued
    // for it stay on record and are refused because the network is gone.
    await this.db
      .deleteFrom("radsec_trust")
      .where("account_id", "=", accountId)
      .where("network_id", "=", id)
      .execute();
    await this.db.deleteFrom("nas").where("account_id", "=", accountId).where("id", "=", id).execute();
    return Number(portals.numDeletedRows);
  }
}

import { type Kysely, sql } from "kysely";
import type { Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";

export interface AccountRow {
  id: number;
  name: string;
  created: string;
}

export class AccountsRepo {
  constructor(private readonly db: Kysely<Schema>) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn with a repository bound to one transaction (a change and its audit row). */
  transaction<T>(fn: (repo: AccountsRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new AccountsRepo(trx)));
  }

  findByName(name: string): Promise<AccountRow | undefined> {
    return this.db.selectFrom("accounts").selectAll().where("name", "=", name).executeTakeFirst();
  }

  findById(id: number): Promise<AccountRow | undefined> {
    return this.db
      .selectFrom("accounts")
      .select(["id", "name", "created"])
      .where("id", "=", id)
      .executeTakeFirst();
  }

  counts(accountId: number): Promise<AccountCounts> {
    return countAccount(this.db, accountId);
  }

  list(): Promise<AccountRow[]> {
    return this.db.selectFrom("accounts").selectAll().orderBy("id").execute();
  }

  insert(name: string, created: string): Promise<AccountRow> {
    return this.db.insertInto("accounts").values({ name, created }).returningAll().executeTakeFirstOrThrow();
  }
}

/** How many of each thing an account has (GET /api/account). */
export interface AccountCounts {
  users: number;
  guests: number;
  groups: number;
  networks: number;
  captive_portals: number;
  vouchers: number;
  devices: number;
  identity_providers: number;
  api_keys: number;
  sessions_open: number;
}

const COUNTED: Record<keyof AccountCounts, [table: string, where?: string]> = {
  users: ["users"],
  guests: ["users", "source in ('portal', 'idp')"],
  groups: ["groups"],
  networks: ["nas"],
  captive_portals: ["captive_portals"],
  vouchers: ["vouchers"],
  devices: ["devices"],
  identity_providers: ["identity_providers"],
  api_keys: ["api_keys", "revoked is null"],
  sessions_open: ["radacct", "acctstoptime is null"],
};

/** One statement: a count subquery per kind, each on its table's account_id index. */
export async function countAccount(db: Kysely<Schema>, accountId: number): Promise<AccountCounts> {
  const columns = Object.entries(COUNTED).map(
    ([name, [table, where]]) =>
      sql`(select count(*) from ${sql.table(table)} where account_id = ${accountId}${
        where ? sql.raw(` and ${where}`) : sql``
      }) as ${sql.ref(name)}`,
  );
  const result = await sql<Record<string, unknown>>`select ${sql.join(columns)}`.execute(db);
  const row = result.rows[0] ?? {};
  return Object.fromEntries(
    Object.keys(COUNTED).map((k) => [k, Number(row[k] ?? 0)]),
  ) as unknown as AccountCounts;
}

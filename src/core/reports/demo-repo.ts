// The demo seed's SQL: what already exists (so nothing clashes), the once-per-account marker, and
// bulk inserts of generated rows. Multi-row INSERTs are written as text (Kysely would build a node
// per value) in chunks under SQLite's 32,766 bound parameters, all inside the caller's transaction.
import { CompiledQuery, type Kysely, type Transaction } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { NetworksRepo } from "../networks/repo.ts";
import type { ReportTables } from "./repo.ts";

type Db = Kysely<Schema & ReportTables>;
const MAX_PARAMETERS = 30_000;

export interface SeedRecord {
  created: string;
  summary: string;
}

export class DemoRepo {
  private readonly db: Db;

  constructor(
    db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {
    this.db = db.withTables<ReportTables>();
  }

  findSeed(accountId: number): Promise<SeedRecord | undefined> {
    return this.db
      .selectFrom("demo_seeds")
      .select(["created", "summary"])
      .where("account_id", "=", accountId)
      .executeTakeFirst();
  }

  /**
   * Runs `fn` in one transaction: a seed is all there or not at all. Everything inside reads and
   * writes through the writer (on SQLite, the database's one connection belongs to the transaction).
   */
  transaction<T>(fn: (writer: DemoWriter) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new DemoWriter(trx, this.dialect)));
  }
}

export class DemoWriter {
  constructor(
    private readonly trx: Transaction<Schema & ReportTables>,
    private readonly dialect: DialectName,
  ) {}

  async usernames(accountId: number): Promise<Set<string>> {
    const rows = await this.trx
      .selectFrom("users")
      .select("username")
      .where("account_id", "=", accountId)
      .execute();
    return new Set(rows.map((r) => r.username.toLowerCase()));
  }

  async voucherCodes(accountId: number, prefix: string): Promise<Set<string>> {
    const rows = await this.trx
      .selectFrom("vouchers")
      .select("code")
      .where("account_id", "=", accountId)
      .where("code", "like", `${prefix}%`)
      .execute();
    return new Set(rows.map((r) => r.code));
  }

  /** The networks repository in this transaction: new sites claim their addresses through it. */
  networks(): NetworksRepo {
    return new NetworksRepo(this.trx as unknown as Kysely<Schema>, this.dialect);
  }

  /** Every network address in use (they are unique across accounts). */
  async nasAddresses(): Promise<Set<string>> {
    const rows = await this.trx.selectFrom("nas").select("nasname").execute();
    return new Set(rows.map((r) => r.nasname));
  }

  /** Written first: a concurrent second seed of the account fails on its primary key. */
  async mark(accountId: number, created: string): Promise<void> {
    await this.trx
      .insertInto("demo_seeds")
      .values({ account_id: accountId, created, summary: "{}" })
      .execute();
  }

  /** The seed's audit row, in the seed's transaction. */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.trx, entry);
  }

  async finish(accountId: number, summary: unknown): Promise<void> {
    await this.trx
      .updateTable("demo_seeds")
      .set({ summary: JSON.stringify(summary) })
      .where("account_id", "=", accountId)
      .execute();
  }

  /** A radacct time: Unix seconds on SQLite, a Date on PostgreSQL. */
  sessionTime(seconds: number | null): number | Date | null {
    if (seconds === null) return null;
    return this.dialect === "sqlite" ? seconds : new Date(seconds * 1000);
  }

  /** A radpostauth time: FreeRADIUS's 'YYYY-MM-DD HH:MM:SS' on SQLite, a Date on PostgreSQL. */
  authTime(seconds: number): string | Date {
    const date = new Date(seconds * 1000);
    return this.dialect === "sqlite" ? date.toISOString().slice(0, 19).replace("T", " ") : date;
  }

  /**
   * Inserts rows (values in `columns` order) in chunks; with `returning`, answers those columns
   * of every inserted row.
   */
  async insert(
    table: string,
    columns: readonly string[],
    rows: readonly unknown[][],
    returning?: readonly string[],
  ): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    const perChunk = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
    for (let i = 0; i < rows.length; i += perChunk) {
      const chunk = rows.slice(i, i + perChunk);
      let n = 0;
      const placeholder = this.dialect === "postgres" ? () => `$${++n}` : () => "?";
      const tuples = chunk.map((row) => `(${row.map(placeholder).join(", ")})`);
      const text =
        `insert into ${table} (${columns.join(", ")}) values ${tuples.join(", ")}` +
        (returning ? ` returning ${returning.join(", ")}` : "");
      const result = await this.trx.executeQuery<Record<string, unknown>>(
        CompiledQuery.raw(text, chunk.flat() as unknown[]),
      );
      if (returning) out.push(...result.rows);
    }
    return out;
  }
}

import { CompiledQuery, type Kysely, type Selectable, sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema, VoucherBatchesTable, VouchersTable } from "../../db/schema.ts";
import { ordered, type SortPlan } from "../../db/sort.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { planExists } from "../plans/repo.ts";
import { queueDisconnect } from "../sessions/jobs.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import { likePattern } from "../shared/text.ts";
import type { VoucherSortField } from "./rules.ts";

export type VoucherRow = Selectable<VouchersTable>;
export type NewVoucher = Omit<VoucherRow, "id" | "first_used" | "expires" | "devices_used" | "data_limit"> & {
  data_limit: number | null;
};
/** What every voucher of one insert has in common: all columns but the code. */
export type VoucherTemplate = Omit<NewVoucher, "code">;
export type NewBatch = Omit<Selectable<VoucherBatchesTable>, "id" | "data_limit" | "plan_id"> & {
  plan_id?: number | null;
  data_limit: number | null;
};

/**
 * Which stored statuses a list keeps. `timed` adds rows of other stored statuses depending on
 * whether their `expires` is past `now` (lapsed) or not yet (still running).
 */
export interface StatusCondition {
  statuses: readonly string[];
  timed?: { statuses: readonly string[]; lapsed: boolean; now: string };
}

export interface VoucherFilter {
  status?: StatusCondition | undefined;
  batchId?: number | undefined;
  /** Matched as a literal, case-insensitive substring of the code. */
  search?: string | undefined;
}

const SORT: SortPlan<VoucherSortField> = {
  keys: {
    id: { column: "id" },
    code: { column: "code", text: true },
    created: { column: "created" },
    first_used: { column: "first_used", nullable: true },
    expires: { column: "expires", nullable: true },
    batch_id: { column: "batch_id", nullable: true },
  },
  defaultOrder: [{ field: "id", descending: false }],
  unique: [{ column: "id" }],
};

/** The columns of an insert: the code varies per row, the rest comes from the template. */
const SHARED_COLUMNS = [
  "account_id",
  "status",
  "validity",
  "usage_limit",
  "session_timeout",
  "batch_id",
  "created",
  "data_limit",
] as const;
/** [SQL type for PostgreSQL's casts]: untyped parameters in a SELECT list would arrive as text. */
const PG_TYPES = ["integer", "varchar", "integer", "integer", "integer", "integer", "varchar", "bigint"];
/**
 * Rows per INSERT. Each statement binds 7 shared parameters + one per code, far below SQLite's
 * 32,766 and PostgreSQL's 65,535 bound parameters, and keeps the statement text ~30 KB.
 */
const INSERT_CHUNK = 4000;
/** Codes per `code IN (...)` probe (plus one parameter for the account). */
const PROBE_CHUNK = 5000;

export class VouchersRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn with a repository bound to one transaction. */
  /** Whether the plan is this account's (in this repository's transaction). */
  planExists(accountId: number, planId: number): Promise<boolean> {
    return planExists(this.db, accountId, planId);
  }

  transaction<T>(fn: (repo: VouchersRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new VouchersRepo(trx, this.dialect)));
  }

  async list(
    accountId: number,
    filter: VoucherFilter,
    page: PageRequest,
    sort?: Sort<VoucherSortField>,
  ): Promise<{ rows: VoucherRow[]; total: number }> {
    let query = this.db.selectFrom("vouchers").where("account_id", "=", accountId);
    const status = filter.status;
    if (status) {
      query = query.where((eb) => {
        const either = [];
        if (status.statuses.length > 0) either.push(eb("status", "in", status.statuses));
        const timed = status.timed;
        if (timed) {
          // Timestamps are ISO 8601 UTC at second precision: text order is time order.
          const clock = timed.lapsed
            ? eb("expires", "<=", timed.now)
            : eb.or([eb("expires", "is", null), eb("expires", ">", timed.now)]);
          either.push(eb.and([eb("status", "in", timed.statuses), clock]));
        }
        return eb.or(either);
      });
    }
    if (filter.batchId !== undefined) query = query.where("batch_id", "=", filter.batchId);
    if (filter.search) {
      // Codes are stored upper-case, so an upper-case pattern is case-insensitive on both databases.
      const pattern = likePattern(filter.search).toUpperCase();
      query = query.where(sql<boolean>`code like ${pattern} escape '\\'`);
    }
    const [rows, count] = await Promise.all([
      ordered(query.selectAll(), this.dialect, SORT, sort).limit(page.limit).offset(offsetOf(page)).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  findById(accountId: number, id: number): Promise<VoucherRow | undefined> {
    return this.db
      .selectFrom("vouchers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** `code` must already be upper-case, as stored; the unique index answers the lookup. */
  findByCode(accountId: number, code: string): Promise<VoucherRow | undefined> {
    return this.db
      .selectFrom("vouchers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("code", "=", code)
      .executeTakeFirst();
  }

  /** Which of the (upper-case) codes the account already has, probed in chunks, not one by one. */
  async existingCodes(accountId: number, codes: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < codes.length; i += PROBE_CHUNK) {
      const rows = await this.db
        .selectFrom("vouchers")
        .select("code")
        .where("account_id", "=", accountId)
        .where("code", "in", codes.slice(i, i + PROBE_CHUNK))
        .execute();
      for (const row of rows) found.add(row.code);
    }
    return found;
  }

  /** False when the account has no such batch. */
  async setBatchPlan(accountId: number, batchId: number, planId: number | null): Promise<boolean> {
    const result = await this.db
      .updateTable("voucher_batches")
      .set({ plan_id: planId })
      .where("account_id", "=", accountId)
      .where("id", "=", batchId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async insertBatch(batch: NewBatch): Promise<number> {
    const row = await this.db
      .insertInto("voucher_batches")
      .values(batch)
      .returning("id")
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /**
   * Inserts one voucher per code, in chunks of multi-row INSERTs, and returns the new ids in the
   * order of `codes`. Each statement is `insert ... select <shared>, code from (values (?), ...)`:
   * the columns every row shares are bound once, not once per row, which makes it faster than a
   * prepared single-row INSERT. The text is built here because Kysely's builder would create a node
   * per value (more time and garbage than the insert itself).
   */
  async insertMany(template: VoucherTemplate, codes: readonly string[]): Promise<number[]> {
    const shared = SHARED_COLUMNS.map((column) => template[column]);
    const ids = new Map<string, number>();
    for (let i = 0; i < codes.length; i += INSERT_CHUNK) {
      const chunk = codes.slice(i, i + INSERT_CHUNK);
      const query = CompiledQuery.raw(insertStatement(this.dialect, chunk.length), [...shared, ...chunk]);
      const { rows } = await this.db.executeQuery<{ id: number; code: string }>(query);
      for (const row of rows) ids.set(row.code, Number(row.id));
    }
    // Codes are unique per account, and all these rows belong to one account.
    return codes.map((code) => ids.get(code)!);
  }

  /** Sets a voucher's stored status; the row as it was before, or undefined when there is none. */
  async setStatus(accountId: number, id: number, status: string): Promise<VoucherRow | undefined> {
    const row = await this.findById(accountId, id);
    if (!row) return undefined;
    await this.db
      .updateTable("vouchers")
      .set({ status })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
    return row;
  }

  /** Queues the disconnection of the voucher's open sessions (their username is the code, any case). */
  disconnectSessions(accountId: number, code: string, reason: string): Promise<void> {
    const usernames = [...new Set([code, code.toLowerCase()])];
    return queueDisconnect(this.db, this.dialect, accountId, { usernames, reason });
  }

  /** True when a row was deleted. */
  async delete(accountId: number, id: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom("vouchers")
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

const statements = new Map<string, string>();

/** The INSERT for `rows` codes in the dialect's placeholder style; full chunks are cached. */
function insertStatement(dialect: DialectName, rows: number): string {
  const cacheKey = `${dialect}:${rows}`;
  let text = statements.get(cacheKey);
  if (text !== undefined) return text;
  const columns = `${SHARED_COLUMNS.join(", ")}, code`;
  const first = SHARED_COLUMNS.length + 1;
  if (dialect === "postgres") {
    const shared = PG_TYPES.map((type, i) => `$${i + 1}::${type}`).join(", ");
    const codes = Array.from({ length: rows }, (_, r) => `($${first + r})`).join(",");
    text = `insert into vouchers (${columns}) select ${shared}, v.code from (values ${codes}) as v(code)`;
  } else {
    const shared = SHARED_COLUMNS.map(() => "?").join(", ");
    text = `insert into vouchers (${columns}) select ${shared}, column1 from (values ${"(?),".repeat(rows - 1)}(?))`;
  }
  text += " returning id, code";
  if (rows === INSERT_CHUNK) statements.set(cacheKey, text);
  return text;
}

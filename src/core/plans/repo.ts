// The plans table, and the plan_id columns that point at it (users, groups, voucher batches).
// Every statement names the account.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { lockedInTransaction } from "../../db/locking.ts";
import type { PlansTable, Schema } from "../../db/schema.ts";
import { NAMED_ROWS, ordered } from "../../db/sort.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { NotFoundError } from "../shared/errors.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import type { PlanSortField } from "./rules.ts";

export type PlanRow = Selectable<PlansTable>;
export type NewPlanRow = Insertable<PlansTable>;
export type PlanChanges = Omit<Updateable<PlansTable>, "id" | "account_id" | "created">;

/** Who uses a plan: counts of users, groups and voucher batches naming it. */
export interface PlanUse {
  users: number;
  groups: number;
  batches: number;
}

export class PlansRepo {
  constructor(
    readonly db: Kysely<Schema>,
    readonly dialect: DialectName,
  ) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: PlansRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new PlansRepo(trx, this.dialect)));
  }

  async list(
    accountId: number,
    page: PageRequest,
    sort?: Sort<PlanSortField>,
  ): Promise<{ rows: PlanRow[]; total: number }> {
    const query = this.db.selectFrom("plans").where("account_id", "=", accountId);
    const [rows, count] = await Promise.all([
      ordered(query.selectAll(), this.dialect, NAMED_ROWS, sort)
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  /** Every plan of the account by name (the console's selects); a few dozen at most in practice. */
  names(accountId: number): Promise<{ id: number; name: string }[]> {
    return this.db
      .selectFrom("plans")
      .select(["id", "name"])
      .where("account_id", "=", accountId)
      .orderBy("name")
      .execute();
  }

  /** `lock`: held until the transaction ends (a delete checks its uses under it). */
  findById(accountId: number, id: number, lock = false): Promise<PlanRow | undefined> {
    const query = this.db
      .selectFrom("plans")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id);
    return (lock ? lockedInTransaction(query, this.dialect, true) : query).executeTakeFirst();
  }

  findByName(accountId: number, name: string): Promise<PlanRow | undefined> {
    return this.db
      .selectFrom("plans")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("name", "=", name)
      .executeTakeFirst();
  }

  insert(row: NewPlanRow): Promise<PlanRow> {
    return this.db.insertInto("plans").values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(accountId: number, id: number, changes: PlanChanges): Promise<PlanRow | undefined> {
    return this.db
      .updateTable("plans")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.db.deleteFrom("plans").where("account_id", "=", accountId).where("id", "=", id).execute();
  }

  async uses(accountId: number, id: number): Promise<PlanUse> {
    const count = async (table: "users" | "groups" | "voucher_batches") => {
      const row = await this.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("account_id", "=", accountId)
        .where("plan_id", "=", id)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    const [users, groups, batches] = [
      await count("users"),
      await count("groups"),
      await count("voucher_batches"),
    ];
    return { users, groups, batches };
  }

  /**
   * The usernames a change of this plan reaches: users with it as their own plan, and members of
   * groups with it whose own plan is unset (a user's own plan wins). Voucher codes of batches with
   * it are added as usernames too (their sessions carry the code).
   */
  async affectedUsernames(accountId: number, id: number): Promise<string[]> {
    const own = this.db
      .selectFrom("users")
      .select("username")
      .where("account_id", "=", accountId)
      .where("plan_id", "=", id);
    const viaGroups = this.db
      .selectFrom("radusergroup")
      .innerJoin("groups", (join) =>
        join
          .onRef("groups.account_id", "=", "radusergroup.account_id")
          .onRef("groups.name", "=", "radusergroup.groupname"),
      )
      .leftJoin("users", (join) =>
        join
          .onRef("users.account_id", "=", "radusergroup.account_id")
          .onRef("users.username", "=", "radusergroup.username"),
      )
      .select("radusergroup.username")
      .where("radusergroup.account_id", "=", accountId)
      .where("groups.plan_id", "=", id)
      .where("users.plan_id", "is", null);
    const vouchers = this.db
      .selectFrom("vouchers")
      .innerJoin("voucher_batches", (join) =>
        join
          .onRef("voucher_batches.id", "=", "vouchers.batch_id")
          .onRef("voucher_batches.account_id", "=", "vouchers.account_id"),
      )
      .select("vouchers.code as username")
      .where("vouchers.account_id", "=", accountId)
      .where("voucher_batches.plan_id", "=", id);
    const rows = await own.union(viaGroups).union(vouchers).execute();
    return [...new Set(rows.map((r) => r.username))].sort();
  }
}

/**
 * Whether `planId` is a plan of this account, read on `db` (the caller's transaction): users,
 * groups and voucher batches check the plan they name with it.
 */
export async function planExists(db: Kysely<Schema>, accountId: number, planId: number): Promise<boolean> {
  const row = await db
    .selectFrom("plans")
    .select("id")
    .where("account_id", "=", accountId)
    .where("id", "=", planId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The error of a plan_id naming no plan of the account (another account's reads as none). */
export function unknownPlan(planId: number): Error & { status: number } {
  return new NotFoundError(`plan ${planId} not found`);
}

/** A plan_id's own problem (not a positive whole number), or null; null and undefined are fine. */
export function planIdProblem(planId: unknown): string | null {
  if (planId === undefined || planId === null) return null;
  return Number.isSafeInteger(planId) && (planId as number) >= 1 && (planId as number) <= 2_147_483_647
    ? null
    : "must be a plan's id (a positive whole number) or null";
}

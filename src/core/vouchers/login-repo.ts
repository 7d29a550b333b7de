// The SQL of a voucher login: the voucher row locked for the login's transaction, its devices,
// and its state change.
import type { Kysely, Transaction, Updateable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { lockedInTransaction } from "../../db/locking.ts";
import type { Schema, VouchersTable } from "../../db/schema.ts";
import { type PlanLimits, planLimitsOf } from "../plans/rules.ts";
import type { VoucherRow } from "./repo.ts";

type Trx = Transaction<Schema>;

export class VoucherLoginRepo {
  constructor(private readonly dialect: DialectName) {}

  /** `code` upper-case, as stored. */
  findForLogin(trx: Trx, accountId: number, code: string): Promise<VoucherRow | undefined> {
    const query = trx
      .selectFrom("vouchers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("code", "=", code);
    return lockedInTransaction(query, this.dialect, true).executeTakeFirst();
  }

  /** The same row read without a lock, outside a transaction (a portal's pre-check writes nothing). */
  findForCheck(db: Kysely<Schema>, accountId: number, code: string): Promise<VoucherRow | undefined> {
    return db
      .selectFrom("vouchers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("code", "=", code)
      .executeTakeFirst();
  }

  /** The plan of a voucher batch, or null (no batch, no plan). */
  async batchPlan(db: Kysely<Schema>, accountId: number, batchId: number | null): Promise<PlanLimits | null> {
    if (batchId === null) return null;
    const row = await db
      .selectFrom("voucher_batches")
      .innerJoin("plans", (join) =>
        join
          .onRef("plans.id", "=", "voucher_batches.plan_id")
          .onRef("plans.account_id", "=", "voucher_batches.account_id"),
      )
      .selectAll("plans")
      .where("voucher_batches.account_id", "=", accountId)
      .where("voucher_batches.id", "=", batchId)
      .executeTakeFirst();
    return row ? planLimitsOf(row) : null;
  }

  async knowsDevice(
    trx: Kysely<Schema>,
    accountId: number,
    voucherId: number,
    mac: string,
  ): Promise<boolean> {
    const row = await trx
      .selectFrom("voucher_devices")
      .select("mac")
      .where("account_id", "=", accountId)
      .where("voucher_id", "=", voucherId)
      .where("mac", "=", mac)
      .executeTakeFirst();
    return row !== undefined;
  }

  async addDevice(trx: Trx, accountId: number, voucherId: number, mac: string, at: string): Promise<void> {
    await trx
      .insertInto("voucher_devices")
      .values({ account_id: accountId, voucher_id: voucherId, mac, first_seen: at })
      .execute();
  }

  async update(trx: Trx, accountId: number, id: number, changes: Updateable<VouchersTable>): Promise<void> {
    await trx
      .updateTable("vouchers")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }
}

// SQL of console users' second factors (migration 034): TOTP columns of console_admins, recovery
// codes, passkeys, the sign-ins waiting for a second factor, and the account's requirement. Every
// query names the account, except two entry lookups that find it: a sign-in by its cookie's hash,
// a passkey by its credential ID (a passkey sign-in does not know who signs in until then).
import type { Kysely, Selectable } from "kysely";
import type { Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import {
  type AdminDb,
  type ConsolePasskeysTable,
  type ConsoleSignInsTable,
  withAdminTables,
} from "./tables.ts";

export type PasskeyRow = Selectable<ConsolePasskeysTable>;
export type SignInRow = Selectable<ConsoleSignInsTable>;

export interface FactorColumns {
  totp_secret: string | null;
  totp_pending: string | null;
  totp_last_step: number | null;
  webauthn_user_id: string | null;
}

export class FactorsRepo {
  private readonly a: AdminDb;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly inTransaction = false,
  ) {
    this.a = withAdminTables(db);
  }

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn in one transaction (this one, when the repository is bound to one already). */
  transaction<T>(fn: (repo: FactorsRepo) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    return this.db.transaction().execute((trx) => fn(new FactorsRepo(trx, true)));
  }

  factorsOf(accountId: number, adminId: number): Promise<FactorColumns | undefined> {
    return this.a
      .selectFrom("console_admins")
      .select(["totp_secret", "totp_pending", "totp_last_step", "webauthn_user_id"])
      .where("account_id", "=", accountId)
      .where("id", "=", adminId)
      .executeTakeFirst();
  }

  private async setAdmin(accountId: number, adminId: number, values: Partial<FactorColumns>): Promise<void> {
    await this.a
      .updateTable("console_admins")
      .set(values)
      .where("account_id", "=", accountId)
      .where("id", "=", adminId)
      .execute();
  }

  setTotpPending(accountId: number, adminId: number, sealed: string | null): Promise<void> {
    return this.setAdmin(accountId, adminId, { totp_pending: sealed });
  }

  /** The confirmed secret replaces any older one; the confirming code's step counts as used. */
  confirmTotp(accountId: number, adminId: number, sealed: string, step: number): Promise<void> {
    return this.setAdmin(accountId, adminId, {
      totp_secret: sealed,
      totp_pending: null,
      totp_last_step: step,
    });
  }

  removeTotp(accountId: number, adminId: number): Promise<void> {
    return this.setAdmin(accountId, adminId, { totp_secret: null, totp_pending: null, totp_last_step: null });
  }

  /**
   * Records `step` as the last accepted one, only if it is later than the one recorded: one
   * statement, so of two requests carrying the same code exactly one gets true.
   */
  async useTotpStep(accountId: number, adminId: number, step: number): Promise<boolean> {
    const result = await this.a
      .updateTable("console_admins")
      .set({ totp_last_step: step })
      .where("account_id", "=", accountId)
      .where("id", "=", adminId)
      .where("totp_secret", "is not", null)
      .where((eb) => eb.or([eb("totp_last_step", "is", null), eb("totp_last_step", "<", step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Sets the WebAuthn user handle unless one is set (two registrations racing keep the first). */
  async setUserHandle(accountId: number, adminId: number, handle: string): Promise<void> {
    await this.a
      .updateTable("console_admins")
      .set({ webauthn_user_id: handle })
      .where("account_id", "=", accountId)
      .where("id", "=", adminId)
      .where("webauthn_user_id", "is", null)
      .execute();
  }

  /** Replaces the admin's recovery codes with new ones (their hashes). */
  async replaceRecoveryCodes(
    accountId: number,
    adminId: number,
    hashes: string[],
    now: string,
  ): Promise<void> {
    await this.transaction(async (repo) => {
      await repo.a
        .deleteFrom("console_recovery_codes")
        .where("account_id", "=", accountId)
        .where("admin_id", "=", adminId)
        .execute();
      await repo.a
        .insertInto("console_recovery_codes")
        .values(
          hashes.map((code_hash) => ({ account_id: accountId, admin_id: adminId, code_hash, created: now })),
        )
        .execute();
    });
  }

  /** Marks an unused code used; false when there is no such code or it was used (one statement). */
  async useRecoveryCode(accountId: number, adminId: number, hash: string, now: string): Promise<boolean> {
    const result = await this.a
      .updateTable("console_recovery_codes")
      .set({ used: now })
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .where("code_hash", "=", hash)
      .where("used", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async recoveryCodeUsed(accountId: number, adminId: number, hash: string): Promise<boolean> {
    const row = await this.a
      .selectFrom("console_recovery_codes")
      .select("used")
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .where("code_hash", "=", hash)
      .executeTakeFirst();
    return row?.used != null;
  }

  async recoveryCodeCounts(accountId: number, adminId: number): Promise<{ total: number; unused: number }> {
    const rows = await this.a
      .selectFrom("console_recovery_codes")
      .select("used")
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .execute();
    return { total: rows.length, unused: rows.filter((r) => r.used === null).length };
  }

  passkeysOf(accountId: number, adminId: number): Promise<PasskeyRow[]> {
    return this.a
      .selectFrom("console_passkeys")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .orderBy("id")
      .execute();
  }

  async insertPasskey(row: Omit<PasskeyRow, "id">): Promise<PasskeyRow> {
    return this.a.insertInto("console_passkeys").values(row).returningAll().executeTakeFirstOrThrow();
  }

  /** Entry lookup of a passkey sign-in: the credential names its admin and account. */
  findPasskey(credentialId: string): Promise<PasskeyRow | undefined> {
    return this.a
      .selectFrom("console_passkeys")
      .selectAll()
      .where("credential_id", "=", credentialId)
      .executeTakeFirst();
  }

  async renamePasskey(accountId: number, adminId: number, id: number, name: string): Promise<boolean> {
    const result = await this.a
      .updateTable("console_passkeys")
      .set({ name })
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async deletePasskey(accountId: number, adminId: number, id: number): Promise<boolean> {
    const result = await this.a
      .deleteFrom("console_passkeys")
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  async usePasskey(accountId: number, id: number, counter: number, at: string): Promise<void> {
    await this.a
      .updateTable("console_passkeys")
      .set({ counter, last_used: at })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  /** Removes every second factor of one admin (the CLI's reset for a lost device). */
  async clearFactors(accountId: number, adminId: number): Promise<void> {
    await this.transaction(async (repo) => {
      await repo.removeTotp(accountId, adminId);
      for (const table of ["console_recovery_codes", "console_passkeys"] as const) {
        await repo.a
          .deleteFrom(table)
          .where("account_id", "=", accountId)
          .where("admin_id", "=", adminId)
          .execute();
      }
    });
  }

  async secondFactorRequired(accountId: number): Promise<boolean> {
    const row = await this.a
      .selectFrom("accounts")
      .select("console_require_second_factor")
      .where("id", "=", accountId)
      .executeTakeFirst();
    return row?.console_require_second_factor === 1;
  }

  /**
   * Turns the account's requirement on or off. On ends the account's sessions made without a
   * second factor, but `keep` (the session that turned it on, whose admin has one).
   */
  async setSecondFactorRequired(accountId: number, on: boolean, keep: number): Promise<void> {
    await this.transaction(async (repo) => {
      await repo.a
        .updateTable("accounts")
        .set({ console_require_second_factor: on ? 1 : 0 })
        .where("id", "=", accountId)
        .execute();
      if (!on) return;
      await repo.a
        .deleteFrom("console_sessions")
        .where("account_id", "=", accountId)
        .where("second_factor", "is", null)
        .where("id", "<>", keep)
        .execute();
    });
  }

  /** The session proved a second factor after it was made (its admin enrolled one in it). */
  async markSession(accountId: number, sessionId: number, factor: string): Promise<void> {
    await this.a
      .updateTable("console_sessions")
      .set({ second_factor: factor })
      .where("account_id", "=", accountId)
      .where("id", "=", sessionId)
      .execute();
  }

  /** A new sign-in; expired ones (of any account: they may know none) go at the same time. */
  async insertSignIn(row: Omit<SignInRow, "id" | "failures">, now: string): Promise<void> {
    await this.a.deleteFrom("console_sign_ins").where("expires", "<=", now).execute();
    await this.a.insertInto("console_sign_ins").values(row).execute();
  }

  /** Entry lookup: the sign-in cookie's hash names the sign-in (and its account, when known). */
  findSignIn(tokenHash: string): Promise<SignInRow | undefined> {
    return this.a
      .selectFrom("console_sign_ins")
      .selectAll()
      .where("token_hash", "=", tokenHash)
      .executeTakeFirst();
  }

  async setSignInChallenge(id: number, challenge: string): Promise<void> {
    await this.a.updateTable("console_sign_ins").set({ challenge }).where("id", "=", id).execute();
  }

  /** Counts a wrong code; the failures so far. */
  async failSignIn(id: number): Promise<number> {
    const row = await this.a
      .updateTable("console_sign_ins")
      .set((eb) => ({ failures: eb("failures", "+", 1) }))
      .where("id", "=", id)
      .returning("failures")
      .executeTakeFirst();
    return row?.failures ?? Number.POSITIVE_INFINITY;
  }

  /** Ends a sign-in; true for the one call that ended it (a second factor is used once). */
  async deleteSignIn(id: number): Promise<boolean> {
    const result = await this.a.deleteFrom("console_sign_ins").where("id", "=", id).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}

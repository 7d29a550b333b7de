// SQL of console users and their sessions. Sessions are found by the hash of their token; every
// other query is scoped by account_id or by the admin's id.

import type { Kysely, Selectable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import {
  type AdminDb,
  type ConsoleAdminsTable,
  type ConsoleInvitesTable,
  type ConsolePendingSecretsTable,
  type ConsoleSessionsTable,
  withAdminTables,
} from "./tables.ts";

export type AdminRow = Selectable<ConsoleAdminsTable>;
/** A new console user: its second factors come later (factors-repo.ts). */
export type NewAdminRow = Omit<
  AdminRow,
  "id" | "totp_secret" | "totp_pending" | "totp_last_step" | "webauthn_user_id"
>;
export type SessionRow = Selectable<ConsoleSessionsTable>;
export type AdminListRow = AdminRow & { account_name: string };
/** A console user as a login finds it: with its account's name and password-login setting. */
export type AdminLoginRow = AdminListRow & { console_password_login: number };
export type PendingSecretRow = Selectable<ConsolePendingSecretsTable>;
export type InviteRow = Selectable<ConsoleInvitesTable>;
/** A session as its owner's list shows it. */
export type SessionListRow = Pick<
  SessionRow,
  "id" | "admin_id" | "created" | "last_seen" | "expires" | "user_agent" | "address" | "provider_id"
>;

/** A live session with whom it belongs to, as one lookup finds it. */
export interface SessionLookup {
  id: number;
  account_id: number;
  admin_id: number;
  csrf_token: string;
  created: string;
  last_seen: string;
  expires: string;
  provider_id: number | null;
  user_agent: string | null;
  address: string | null;
  email: string;
  /** Read from console_admins with every request: a role change counts from the next request. */
  role: string;
  account_name: string;
}

export class AdminsRepo {
  private readonly a: AdminDb;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName = "sqlite",
  ) {
    this.a = withAdminTables(db);
  }

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: AdminsRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new AdminsRepo(trx, this.dialect)));
  }

  /**
   * In a transaction: holds the account's row until commit, so two team changes of one account
   * (two owners demoting each other) run one after the other and each counts the owners the other
   * left. SQLite has one writer at a time already.
   */
  async lockAccount(accountId: number): Promise<void> {
    if (this.dialect !== "postgres") return;
    await this.a.selectFrom("accounts").select("id").where("id", "=", accountId).forUpdate().execute();
  }

  async countOwners(accountId: number): Promise<number> {
    const row = await this.a
      .selectFrom("console_admins")
      .select((eb) => eb.fn.countAll<number>().as("total"))
      .where("account_id", "=", accountId)
      .where("role", "=", "owner")
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  async setRole(accountId: number, id: number, role: string, at: string): Promise<void> {
    await this.a
      .updateTable("console_admins")
      .set({ role, updated: at })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  /** Deletes a console user with their sessions (and so the secrets waiting in them). */
  async deleteAdmin(accountId: number, id: number): Promise<void> {
    await this.deleteSessionsOf(accountId, id);
    await this.a
      .deleteFrom("console_admins")
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  /** An admin's sessions not yet expired, newest first. */
  listSessions(accountId: number, adminId: number, now: string): Promise<SessionListRow[]> {
    return this.a
      .selectFrom("console_sessions")
      .select(["id", "admin_id", "created", "last_seen", "expires", "user_agent", "address", "provider_id"])
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .where("expires", ">", now)
      .orderBy("last_seen", "desc")
      .orderBy("id", "desc")
      .execute();
  }

  /** Ends one session of one admin; false when there is no such session. */
  async deleteSessionOf(accountId: number, adminId: number, sessionId: number): Promise<boolean> {
    const result = await this.a
      .deleteFrom("console_sessions")
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .where("id", "=", sessionId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async seenFrom(
    accountId: number,
    id: number,
    userAgent: string | null,
    address: string | null,
  ): Promise<void> {
    await this.a
      .updateTable("console_sessions")
      .set({ user_agent: userAgent, address })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  insertInvite(row: Omit<InviteRow, "id">): Promise<InviteRow> {
    return this.a.insertInto("console_invites").values(row).returningAll().executeTakeFirstOrThrow();
  }

  findInvite(tokenDigest: string): Promise<InviteRow | undefined> {
    return this.a
      .selectFrom("console_invites")
      .selectAll()
      .where("token_digest", "=", tokenDigest)
      .executeTakeFirst();
  }

  /** Invitations still open (not used, withdrawn or expired), newest first. */
  openInvites(accountId: number, now: string): Promise<InviteRow[]> {
    return this.a
      .selectFrom("console_invites")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("accepted", "is", null)
      .where("revoked", "is", null)
      .where("expires", ">", now)
      .orderBy("id", "desc")
      .execute();
  }

  /** Withdraws the open invitations to an email (one), or one invitation by id; how many were. */
  async revokeInvites(
    accountId: number,
    by: { email: string } | { id: number },
    at: string,
  ): Promise<number> {
    let query = this.a
      .updateTable("console_invites")
      .set({ revoked: at })
      .where("account_id", "=", accountId)
      .where("accepted", "is", null)
      .where("revoked", "is", null);
    query = "email" in by ? query.where("email", "=", by.email) : query.where("id", "=", by.id);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Marks an invitation used, unless it was used or withdrawn meanwhile (then false: single use). */
  async acceptInvite(accountId: number, id: number, at: string): Promise<boolean> {
    const result = await this.a
      .updateTable("console_invites")
      .set({ accepted: at })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("accepted", "is", null)
      .where("revoked", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async count(): Promise<number> {
    const row = await this.a
      .selectFrom("console_admins")
      .select((eb) => eb.fn.countAll<number>().as("total"))
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }

  findByEmail(email: string): Promise<AdminLoginRow | undefined> {
    return this.a
      .selectFrom("console_admins")
      .innerJoin("accounts", "accounts.id", "console_admins.account_id")
      .selectAll("console_admins")
      .select(["accounts.name as account_name", "accounts.console_password_login"])
      .where("console_admins.email", "=", email)
      .executeTakeFirst();
  }

  findById(accountId: number, id: number): Promise<AdminLoginRow | undefined> {
    return this.a
      .selectFrom("console_admins")
      .innerJoin("accounts", "accounts.id", "console_admins.account_id")
      .selectAll("console_admins")
      .select(["accounts.name as account_name", "accounts.console_password_login"])
      .where("console_admins.account_id", "=", accountId)
      .where("console_admins.id", "=", id)
      .executeTakeFirst();
  }

  list(accountId?: number): Promise<AdminListRow[]> {
    let query = this.a
      .selectFrom("console_admins")
      .innerJoin("accounts", "accounts.id", "console_admins.account_id")
      .selectAll("console_admins")
      .select("accounts.name as account_name");
    if (accountId !== undefined) query = query.where("console_admins.account_id", "=", accountId);
    return query.orderBy("console_admins.id").execute();
  }

  insert(row: NewAdminRow): Promise<AdminRow> {
    return this.a.insertInto("console_admins").values(row).returningAll().executeTakeFirstOrThrow();
  }

  async setLastLogin(accountId: number, id: number, at: string): Promise<void> {
    await this.a
      .updateTable("console_admins")
      .set({ last_login: at })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  async setPasswordLogin(accountId: number, on: boolean): Promise<void> {
    await this.a
      .updateTable("accounts")
      .set({ console_password_login: on ? 1 : 0 })
      .where("id", "=", accountId)
      .execute();
  }

  async setPassword(accountId: number, id: number, passwordHash: string, at: string): Promise<boolean> {
    const result = await this.a
      .updateTable("console_admins")
      .set({ password_hash: passwordHash, updated: at })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Swaps a hash for a stronger one of the same password; nothing when the password was changed
   * meanwhile (a reset must not be undone by a login that checked the old password).
   */
  async replacePasswordHash(accountId: number, id: number, old: string, passwordHash: string): Promise<void> {
    await this.a
      .updateTable("console_admins")
      .set({ password_hash: passwordHash })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("password_hash", "=", old)
      .execute();
  }

  async insertSession(
    row: Omit<SessionRow, "id" | "second_factor"> & { second_factor?: string | null },
  ): Promise<number> {
    const inserted = await this.a
      .insertInto("console_sessions")
      .values(row)
      .returning("id")
      .executeTakeFirstOrThrow();
    return inserted.id;
  }

  findSession(tokenHash: string): Promise<SessionLookup | undefined> {
    return this.a
      .selectFrom("console_sessions as s")
      .innerJoin("console_admins as a", (join) =>
        join.onRef("a.id", "=", "s.admin_id").onRef("a.account_id", "=", "s.account_id"),
      )
      .innerJoin("accounts", "accounts.id", "s.account_id")
      .select([
        "s.id",
        "s.account_id",
        "s.admin_id",
        "s.csrf_token",
        "s.created",
        "s.last_seen",
        "s.expires",
        "s.provider_id",
        "s.user_agent",
        "s.address",
        "a.email",
        "a.role",
        "accounts.name as account_name",
      ])
      .where("s.token_hash", "=", tokenHash)
      .executeTakeFirst();
  }

  async extendSession(accountId: number, id: number, lastSeen: string, expires: string): Promise<void> {
    await this.a
      .updateTable("console_sessions")
      .set({ last_seen: lastSeen, expires })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.a.deleteFrom("console_sessions").where("token_hash", "=", tokenHash).execute();
  }

  /** Drops one admin's expired sessions (on each login, so the table never grows without bound). */
  async deleteExpiredSessions(accountId: number, adminId: number, now: string): Promise<void> {
    await this.a
      .deleteFrom("console_sessions")
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .where("expires", "<=", now)
      .execute();
  }

  /** Ends the account's sessions made with a password (password login was turned off). */
  async deletePasswordSessions(accountId: number): Promise<void> {
    await this.a
      .deleteFrom("console_sessions")
      .where("account_id", "=", accountId)
      .where("provider_id", "is", null)
      .execute();
  }

  /** Ends every session of one admin (after a password change). */
  async deleteSessionsOf(accountId: number, adminId: number): Promise<void> {
    await this.a
      .deleteFrom("console_sessions")
      .where("account_id", "=", accountId)
      .where("admin_id", "=", adminId)
      .execute();
  }

  /**
   * Keeps a pending secret, replacing the session's older one for the same subject; the account's
   * expired ones go at the same time, so rows of sessions that never came back do not pile up.
   */
  async putPendingSecret(row: Omit<PendingSecretRow, "id">, now: string): Promise<void> {
    await this.transaction(async (repo) => {
      await repo.a
        .deleteFrom("console_pending_secrets")
        .where("account_id", "=", row.account_id)
        .where((eb) =>
          eb.or([
            eb.and([eb("session_id", "=", row.session_id), eb("subject", "=", row.subject)]),
            eb("expires", "<=", now),
          ]),
        )
        .execute();
      await repo.a.insertInto("console_pending_secrets").values(row).execute();
    });
  }

  /** Deletes and returns a session's pending secrets of one subject: one statement, so only one read gets them. */
  takePendingSecrets(accountId: number, sessionId: number, subject: string): Promise<PendingSecretRow[]> {
    return this.a
      .deleteFrom("console_pending_secrets")
      .where("account_id", "=", accountId)
      .where("session_id", "=", sessionId)
      .where("subject", "=", subject)
      .returningAll()
      .execute();
  }
}

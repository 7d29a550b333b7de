// Row types of the console's tables (migrations 007, 009, 033 and 034), added to the shared Schema with withTables so
// the admins area keeps its tables to itself.
import type { Generated, Kysely } from "kysely";
import type { Schema } from "../../db/schema.ts";

export type ConsoleAdminsTable = {
  id: Generated<number>;
  account_id: number;
  email: string;
  password_hash: string;
  created: string;
  updated: string;
  last_login: string | null;
  /** A role of core/admins/roles.ts (migration 033). */
  role: string;
  /** Sealed TOTP secret, once confirmed (migration 034); null: no TOTP. */
  totp_secret: string | null;
  /** Sealed TOTP secret being enrolled, not yet confirmed. */
  totp_pending: string | null;
  /** RFC 6238 time step of the last accepted code. */
  totp_last_step: number | null;
  /** WebAuthn user handle, base64url. */
  webauthn_user_id: string | null;
};

export type ConsoleSessionsTable = {
  id: Generated<number>;
  account_id: number;
  admin_id: number;
  token_hash: string;
  csrf_token: string;
  created: string;
  last_seen: string;
  expires: string;
  /** The identity provider the session was made through (migration 029); null: a password. */
  provider_id: number | null;
  /** The User-Agent and address the session was last used from (migration 033). */
  user_agent: string | null;
  address: string | null;
  /** The second factor the session was made (or later confirmed) with (migration 034); null: none. */
  second_factor: string | null;
};

/** An invitation to join an account's team (migration 033). */
export type ConsoleInvitesTable = {
  id: Generated<number>;
  account_id: number;
  email: string;
  role: string;
  token_digest: string;
  invited_by: number;
  created: string;
  expires: string;
  accepted: string | null;
  revoked: string | null;
};

/** A secret made by a console form, waiting to be shown once to the session that made it. */
export type ConsolePendingSecretsTable = {
  id: Generated<number>;
  account_id: number;
  session_id: number;
  subject: string;
  event: string;
  /** Sealed (src/core/webhooks/crypto.ts), never in clear. */
  secret: string;
  expires: string;
};

export type ConsoleRecoveryCodesTable = {
  id: Generated<number>;
  account_id: number;
  admin_id: number;
  /** Keyed hash (HMAC-SHA256) of the code, never the code. */
  code_hash: string;
  created: string;
  used: string | null;
};

export type ConsolePasskeysTable = {
  id: Generated<number>;
  account_id: number;
  admin_id: number;
  credential_id: string;
  public_key: string;
  counter: number;
  transports: string;
  name: string;
  backed_up: number;
  created: string;
  last_used: string | null;
};

/** A sign-in between its first factor and its session (or a passkey sign-in not yet knowing who). */
export type ConsoleSignInsTable = {
  id: Generated<number>;
  account_id: number | null;
  admin_id: number | null;
  token_hash: string;
  stage: string;
  provider_id: number | null;
  challenge: string | null;
  next: string;
  failures: Generated<number>;
  created: string;
  expires: string;
};

export type AdminTables = {
  console_admins: ConsoleAdminsTable;
  console_sessions: ConsoleSessionsTable;
  console_pending_secrets: ConsolePendingSecretsTable;
  console_invites: ConsoleInvitesTable;
  console_recovery_codes: ConsoleRecoveryCodesTable;
  console_passkeys: ConsolePasskeysTable;
  console_sign_ins: ConsoleSignInsTable;
  /** The account's own table, with the column migration 034 added. */
  accounts: { console_require_second_factor: Generated<number> };
};

export type AdminDb = Kysely<Schema & AdminTables>;

export function withAdminTables(db: Kysely<Schema>): AdminDb {
  return db.withTables<AdminTables>();
}

// Row types of the console's tables (migrations 007, 009 and 033), added to the shared Schema with withTables so
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

export type AdminTables = {
  console_admins: ConsoleAdminsTable;
  console_sessions: ConsoleSessionsTable;
  console_pending_secrets: ConsolePendingSecretsTable;
  console_invites: ConsoleInvitesTable;
};

export type AdminDb = Kysely<Schema & AdminTables>;

export function withAdminTables(db: Kysely<Schema>): AdminDb {
  return db.withTables<AdminTables>();
}

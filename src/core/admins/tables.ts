// Row types of the console's tables (migrations 007 and 009), added to the shared Schema with withTables so
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
};

export type AdminDb = Kysely<Schema & AdminTables>;

export function withAdminTables(db: Kysely<Schema>): AdminDb {
  return db.withTables<AdminTables>();
}

// Row types of the console's tables (migration 007), added to the shared Schema with withTables so
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
};

export type AdminTables = {
  console_admins: ConsoleAdminsTable;
  console_sessions: ConsoleSessionsTable;
};

export type AdminDb = Kysely<Schema & AdminTables>;

export function withAdminTables(db: Kysely<Schema>): AdminDb {
  return db.withTables<AdminTables>();
}

// Row types of every table, as Kysely sees them. FreeRADIUS tables keep FreeRADIUS's column names.
import type { Generated } from "kysely";

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  created: string;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  key_hash: string;
  /** Last four characters, for the masked listing. */
  key_tail: string;
  /** JSON array of permission grants: "full", "read", "users:write", ... */
  permissions: string;
  /** JSON array of CIDRs; empty = any address. */
  allow_ips: string;
  /** Requests per minute; null = the server default. */
  rate_limit: number | null;
  created: string;
  last_used: string | null;
  revoked: string | null;
}

export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  username: string;
  email: string;
  fullname: string;
  status: string;
  created: string;
  updated: string;
}

/** radcheck and radreply share this shape (FreeRADIUS: id, username, attribute, op, value). */
export interface RadAttributeTable {
  id: Generated<number>;
  account_id: number;
  username: string;
  attribute: string;
  op: string;
  value: string;
}

export interface RadUserGroupTable {
  id: Generated<number>;
  account_id: number;
  username: string;
  groupname: string;
  priority: number;
}

export interface Schema {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
  radcheck: RadAttributeTable;
  radreply: RadAttributeTable;
  radusergroup: RadUserGroupTable;
}

// FreeRADIUS's tables key rows by a name (username or groupname), not by Wisp's ids: renaming or
// deleting a user or a group carries or removes its rows in every table that names it.
import type { Kysely } from "kysely";
import type { Schema } from "./schema.ts";

/** The FreeRADIUS tables that name a user, and those that name a group. */
export const RADIUS_ROWS = {
  username: ["radcheck", "radreply", "radusergroup"],
  groupname: ["radusergroup", "radgroupcheck", "radgroupreply"],
} as const;

export type RadiusOwner = keyof typeof RADIUS_ROWS;

// Every table listed has the owner column and account_id; the generic view keeps one loop for both.
type OwnedTables = Record<string, { account_id: number; username: string; groupname: string }>;

export async function renameRadiusRows(
  db: Kysely<Schema>,
  owner: RadiusOwner,
  accountId: number,
  from: string,
  to: string,
): Promise<void> {
  const tables = db as unknown as Kysely<OwnedTables>;
  for (const table of RADIUS_ROWS[owner]) {
    await tables
      .updateTable(table)
      .set({ [owner]: to })
      .where("account_id", "=", accountId)
      .where(owner, "=", from)
      .execute();
  }
}

export async function deleteRadiusRows(
  db: Kysely<Schema>,
  owner: RadiusOwner,
  accountId: number,
  name: string,
): Promise<void> {
  const tables = db as unknown as Kysely<OwnedTables>;
  for (const table of RADIUS_ROWS[owner]) {
    await tables.deleteFrom(table).where("account_id", "=", accountId).where(owner, "=", name).execute();
  }
}

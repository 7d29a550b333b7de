// Console single sign-on (issue 26 point 4): a console session remembers the identity provider it
// was made through (null: a password login). Turning password login off for an account needs a
// session made through one of its providers, and ends the account's password sessions.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable("console_sessions").addColumn("provider_id", "integer").execute();
}

// The database names itself once: a random deployment identity, the same for every Wisp instance
// on this database and different from any other database's. It goes into every Redis key, so two
// Wisp databases sharing one Redis never share a rate-limit counter (their key ids both start at 1).
// One row for the whole deployment, like the migration tables: the only table without account_id.
import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  await db.schema
    .createTable("deployment")
    /** Always 1: the table holds one row. */
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("identity", "varchar(64)", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .execute();
  const identity = randomBytes(12).toString("hex");
  const created = `${new Date().toISOString().slice(0, 19)}Z`;
  await sql`insert into deployment (id, identity, created) values (1, ${identity}, ${created})`.execute(db);
}

// Policies (issue 25 points 1 and 5): an ordered list of rules per account, evaluated after the
// credential check of a RADIUS login (src/core/policies). Conditions and outcome are JSON, checked
// by the service (src/core/policies/rules.ts); the account's default outcome (the fixed last rule)
// is a column of the account. Time-of-day conditions are read in the network's time zone, else the
// account's (IANA names; null: UTC). Each recorded authentication keeps the rule that decided it.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";
import { withId } from "./columns.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  await withId(db.schema.createTable("policies"), dialect)
    .addColumn("account_id", "integer", (c) => c.notNull())
    /** 1..n within the account, no gaps: the order rules are evaluated in. */
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("description", "varchar(200)", (c) => c.notNull().defaultTo(""))
    /** JSON object: networks, ssids, nas_identifiers, groups, methods, portal_methods, days, times, device. */
    .addColumn("conditions", "text", (c) => c.notNull())
    /** JSON object: action (accept, reject), reason, vlan, filter_id, ..., plan_id, timeouts. */
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("created", "varchar(20)", (c) => c.notNull())
    .addColumn("updated", "varchar(20)", (c) => c.notNull())
    .execute();
  await sql`create unique index wisp_policies_account_name on policies (account_id, name)`.execute(db);
  await sql`create index wisp_policies_account_position on policies (account_id, position)`.execute(db);

  /** IANA time zone names (Intl); null: the account's zone (networks), UTC (accounts). */
  await db.schema.alterTable("nas").addColumn("time_zone", "varchar(64)").execute();
  await db.schema.alterTable("accounts").addColumn("time_zone", "varchar(64)").execute();
  /** The default rule's outcome, JSON like policies.outcome; null: accept with nothing added. */
  await db.schema.alterTable("accounts").addColumn("policy_default", "text").execute();
  /** Bumped by every change of the account's policies: logins keep the compiled list until it moves. */
  await db.schema
    .alterTable("accounts")
    .addColumn("policies_version", "integer", (c) => c.notNull().defaultTo(0))
    .execute();

  /** The rule that decided the attempt: its id (null: the default rule) and its name then. */
  await db.schema.alterTable("radpostauth").addColumn("policy_id", "integer").execute();
  await db.schema.alterTable("radpostauth").addColumn("policy_name", "varchar(100)").execute();
}

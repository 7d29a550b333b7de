// The deployment identity (migration 012): a random id the database was given once, shared by
// every instance on it. Shared stores outside the database (Redis) put it in their keys.
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema.ts";

interface DeploymentTable {
  id: number;
  identity: string;
  created: string;
}

export class DeploymentRepo {
  private readonly db;

  constructor(db: Kysely<Schema>) {
    this.db = db.withTables<{ deployment: DeploymentTable }>();
  }

  async identity(): Promise<string> {
    const row = await this.db
      .selectFrom("deployment")
      .select("identity")
      .where("id", "=", 1)
      .executeTakeFirstOrThrow(() => new Error("the database has no deployment identity (migration 012)"));
    return row.identity;
  }
}

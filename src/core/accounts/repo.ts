import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema.ts";

export interface AccountRow {
  id: number;
  name: string;
  created: string;
}

export class AccountsRepo {
  constructor(private readonly db: Kysely<Schema>) {}

  findByName(name: string): Promise<AccountRow | undefined> {
    return this.db.selectFrom("accounts").selectAll().where("name", "=", name).executeTakeFirst();
  }

  list(): Promise<AccountRow[]> {
    return this.db.selectFrom("accounts").selectAll().orderBy("id").execute();
  }

  insert(name: string, created: string): Promise<AccountRow> {
    return this.db.insertInto("accounts").values({ name, created }).returningAll().executeTakeFirstOrThrow();
  }
}

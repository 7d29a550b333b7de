import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";

export interface AccountRow {
  id: number;
  name: string;
  created: string;
}

export class AccountsRepo {
  constructor(private readonly db: Kysely<Schema>) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /** Runs fn with a repository bound to one transaction (a change and its audit row). */
  transaction<T>(fn: (repo: AccountsRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new AccountsRepo(trx)));
  }

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

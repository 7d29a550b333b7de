import { CompiledQuery, type Kysely, type Selectable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import { prepared } from "../../db/prepared.ts";
import type { ApiKeysTable, Schema } from "../../db/schema.ts";

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ApiKeyListRow = ApiKeyRow & { account_name: string };

export class KeysRepo {
  /** Runs on every API request. */
  private readonly byHash;

  private lastDataVersion: number | undefined;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {
    this.byHash = prepared(
      db,
      (hash: string) => db.selectFrom("api_keys").selectAll().where("key_hash", "=", hash),
      1,
    );
  }

  /**
   * Whether another connection may have changed the keys since the last call. SQLite's
   * data_version changes exactly when another connection (the CLI, another Wisp process) commits;
   * on PostgreSQL there is no such cheap signal, so the answer is always yes.
   */
  async changedElsewhere(): Promise<boolean> {
    if (this.dialect !== "sqlite") return true;
    const result = await this.db.executeQuery<{ data_version: number }>(
      CompiledQuery.raw("pragma data_version"),
    );
    const version = result.rows[0]?.data_version;
    const changed = version !== this.lastDataVersion;
    this.lastDataVersion = version;
    return changed;
  }

  async findByHash(keyHash: string): Promise<ApiKeyRow | undefined> {
    return (await this.byHash(keyHash))[0];
  }

  findById(id: number): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
  }

  list(accountId?: number): Promise<ApiKeyListRow[]> {
    let query = this.db
      .selectFrom("api_keys")
      .innerJoin("accounts", "accounts.id", "api_keys.account_id")
      .selectAll("api_keys")
      .select("accounts.name as account_name")
      .orderBy("api_keys.id");
    if (accountId !== undefined) query = query.where("api_keys.account_id", "=", accountId);
    return query.execute();
  }

  insert(row: Omit<ApiKeyRow, "id" | "last_used" | "revoked">): Promise<ApiKeyRow> {
    return this.db.insertInto("api_keys").values(row).returningAll().executeTakeFirstOrThrow();
  }

  async revoke(id: number, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("api_keys")
      .set({ revoked: at })
      .where("id", "=", id)
      .where("revoked", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async touch(id: number, at: string): Promise<void> {
    await this.db.updateTable("api_keys").set({ last_used: at }).where("id", "=", id).execute();
  }
}

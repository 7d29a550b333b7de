import { type Kysely, type Selectable, sql } from "kysely";
import { type DialectName, readerFor } from "../../db/database.ts";
import { prepared } from "../../db/prepared.ts";
import type { ApiKeysTable, Schema } from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ApiKeyListRow = ApiKeyRow & { account_name: string };

export class KeysRepo {
  /** Runs on every API request. */
  private readonly byHash;
  private readonly byHashes;

  private lastDataVersion: number | undefined;
  private readonly reader;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {
    this.reader = readerFor(db);
    // One statement for any number of hashes: an array on PostgreSQL, a JSON array on SQLite.
    this.byHashes = prepared(
      db,
      (hashes: unknown) =>
        db
          .selectFrom("api_keys")
          .selectAll()
          .where(
            dialect === "postgres"
              ? sql<boolean>`key_hash = any(${hashes})`
              : sql<boolean>`key_hash in (select value from json_each(${hashes}))`,
          ),
      1,
    );
    this.byHash = prepared(
      db,
      (hash: string) => db.selectFrom("api_keys").selectAll().where("key_hash", "=", hash),
      1,
    );
  }

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  /**
   * Whether the keys may have changed since the last call. SQLite's data_version, read on the
   * read connection, changes exactly when another connection commits: the CLI, another Wisp
   * process, or this process's own writer. PostgreSQL has no such cheap signal: always yes.
   */
  changedElsewhere(): boolean {
    if (!this.reader) return true;
    const version = this.reader.dataVersion();
    const changed = version !== this.lastDataVersion;
    this.lastDataVersion = version;
    return changed;
  }

  async findByHash(keyHash: string): Promise<ApiKeyRow | undefined> {
    return (await this.byHash(keyHash))[0];
  }

  /** Several keys in one query (the keys of one event-loop turn that were not known). */
  findByHashes(keyHashes: string[]): Promise<ApiKeyRow[]> {
    return this.byHashes(this.dialect === "postgres" ? keyHashes : JSON.stringify(keyHashes));
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

  /** Runs fn with a repository bound to one transaction (a key's change and its audit row). */
  transaction<T>(fn: (repo: KeysRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new KeysRepo(trx, this.dialect)));
  }

  /** One page of an account's keys, by id. */
  async listPage(accountId: number, page: PageRequest): Promise<{ rows: ApiKeyListRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom("api_keys")
        .innerJoin("accounts", "accounts.id", "api_keys.account_id")
        .selectAll("api_keys")
        .select("accounts.name as account_name")
        .where("api_keys.account_id", "=", accountId)
        .orderBy("api_keys.id")
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      this.db
        .selectFrom("api_keys")
        .where("account_id", "=", accountId)
        .select((eb) => eb.fn.countAll<number>().as("total"))
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
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

  async touch(accountId: number, id: number, at: string): Promise<void> {
    await this.db
      .updateTable("api_keys")
      .set({ last_used: at })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .execute();
  }
}

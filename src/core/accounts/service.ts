// Accounts are the tenants: every other row belongs to one.
import { isUniqueViolation } from "../../db/database.ts";
import { ConflictError, NotFoundError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import type { AccountCounts, AccountRow, AccountsRepo } from "./repo.ts";

export const DEFAULT_ACCOUNT = "default";
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class AccountsService {
  constructor(private readonly repo: AccountsRepo) {}

  async create(name: string): Promise<AccountRow> {
    if (!ACCOUNT_NAME.test(name)) {
      throw ValidationError.field(
        "name",
        "must be 1-64 characters from A-Z a-z 0-9 . _ - starting with a letter or digit",
      );
    }
    if (await this.repo.findByName(name)) throw new ConflictError(`account "${name}" already exists`);
    try {
      return await this.repo.transaction(async (repo) => {
        const row = await repo.insert(name, isoNow());
        await repo.audit({
          accountId: row.id,
          resource: "account",
          id: row.id,
          action: "create",
          after: row,
        });
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`account "${name}" already exists`);
      throw error;
    }
  }

  /** The account a key belongs to, with how many of each thing it has (GET /api/account). */
  async overview(accountId: number): Promise<{ account: AccountRow; counts: AccountCounts }> {
    const [account, counts] = await Promise.all([this.repo.findById(accountId), this.repo.counts(accountId)]);
    if (!account) throw new NotFoundError(`account ${accountId} not found`);
    return { account, counts };
  }

  list(): Promise<AccountRow[]> {
    return this.repo.list();
  }

  async get(name: string): Promise<AccountRow> {
    const account = await this.repo.findByName(name);
    if (!account) throw new NotFoundError(`no account named "${name}"`);
    return account;
  }

  /** The named account; the `default` account is created on first use, any other must exist. */
  async resolve(name: string | undefined): Promise<AccountRow> {
    if (name !== undefined && name !== DEFAULT_ACCOUNT) return this.get(name);
    const existing = await this.repo.findByName(DEFAULT_ACCOUNT);
    if (existing) return existing;
    try {
      return await this.repo.insert(DEFAULT_ACCOUNT, isoNow());
    } catch (error) {
      // Another process created it a moment ago.
      if (isUniqueViolation(error)) return this.get(DEFAULT_ACCOUNT);
      throw error;
    }
  }
}

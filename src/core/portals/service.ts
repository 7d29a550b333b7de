// Captive portals: the login pages guests of one network see before they get on the Wi-Fi. A portal
// hangs off a network of the same account; its login URL is derived from the public address of Wisp.
import { type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import {
  isMissingReference,
  type PortalChanges,
  type PortalFilter,
  type PortalListRow,
  type PortalRow,
  type PortalsRepo,
} from "./repo.ts";
import { checkSuccessUrl, MAX_PORTAL_NAME, PORTAL_SORT_FIELDS } from "./rules.ts";

export interface CaptivePortal {
  id: number;
  name: string;
  network_id: number;
  /** Where the network's gateway sends guests: `${PUBLIC_URL}/portal/${id}`. */
  login_url: string;
  /** Where guests go after logging in; empty for none. */
  success_url: string;
  created: string;
  updated: string;
}

export interface PortalListing extends CaptivePortal {
  account_id: number;
  account: string;
}

export interface PortalInput {
  name?: string | undefined;
  network_id?: number | undefined;
  success_url?: string | undefined;
}

const MAX_ID = 2_147_483_647;

function check(input: PortalInput): PortalInput {
  const problems: FieldProblem[] = [];
  const clean = { ...input };
  if (input.name !== undefined) {
    clean.name = input.name.trim();
    if (clean.name.length < 1 || clean.name.length > MAX_PORTAL_NAME || hasControlCharacters(clean.name)) {
      problems.push({
        field: "name",
        message: `must be 1-${MAX_PORTAL_NAME} characters without control characters`,
      });
    }
  }
  const id = input.network_id;
  if (id !== undefined && (!Number.isInteger(id) || id < 1 || id > MAX_ID)) {
    problems.push({ field: "network_id", message: "must be a network id (a positive whole number)" });
  }
  const badUrl = input.success_url === undefined ? null : checkSuccessUrl(input.success_url);
  if (badUrl) problems.push({ field: "success_url", message: badUrl });
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
  return clean;
}

/** The same answer whether the network is missing or another account's: ids do not leak. */
function noSuchNetwork(networkId: number): ValidationError {
  return ValidationError.field("network_id", `${networkId} is not a network of this account`);
}

function notFound(id: number): NotFoundError {
  return new NotFoundError(`captive portal ${id} not found`);
}

export class PortalsService {
  /** publicUrl: Wisp's address as guests reach it (PUBLIC_URL), the base of every login_url. */
  constructor(
    private readonly repo: PortalsRepo,
    private readonly publicUrl: string,
  ) {}

  private present(row: PortalRow): CaptivePortal {
    return {
      id: row.id,
      name: row.name,
      network_id: row.network_id,
      login_url: `${this.publicUrl}/portal/${row.id}`,
      success_url: row.success_url,
      created: row.created,
      updated: row.updated,
    };
  }

  private listing(row: PortalListRow): PortalListing {
    return { ...this.present(row), account_id: row.account_id, account: row.account_name };
  }

  /** `sort`: a field of PORTAL_SORT_FIELDS, "-" first for descending; by id by default. */
  async list(
    accountId: number,
    filter: PortalFilter,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<CaptivePortal>> {
    const order = parseSort(sort, PORTAL_SORT_FIELDS);
    const { rows, total } = await this.repo.list(accountId, filter, page, order);
    return { data: rows.map((row) => this.present(row)), page: page.page, total, limit: page.limit };
  }

  async get(accountId: number, id: number): Promise<CaptivePortal> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw notFound(id);
    return this.present(row);
  }

  /** Operators' listing (CLI): all accounts or one, optionally one network's portals. */
  async listAll(accountId?: number, networkId?: number): Promise<PortalListing[]> {
    return (await this.repo.listWithAccounts({ accountId, networkId })).map((row) => this.listing(row));
  }

  /**
   * Portal `id` in whichever account owns it, for operators' doors (CLI) that address portals by
   * id alone. When the operator also named an account, the portal must belong to it.
   */
  async locate(id: number, accountId?: number): Promise<PortalListing> {
    const row = (await this.repo.listWithAccounts({ id }))[0];
    if (!row) throw notFound(id);
    if (accountId !== undefined && row.account_id !== accountId) {
      throw new NotFoundError(`captive portal ${id} belongs to another account`);
    }
    return this.listing(row);
  }

  /** Validates a new portal without writing, so a door can refuse before it writes anything else. */
  validateNew(input: PortalInput): PortalInput {
    if (input.name === undefined) throw ValidationError.field("name", "is required");
    if (input.network_id === undefined) throw ValidationError.field("network_id", "is required");
    return check(input);
  }

  async create(accountId: number, input: PortalInput): Promise<CaptivePortal> {
    const clean = this.validateNew(input);
    const networkId = clean.network_id ?? 0;
    const now = isoNow();
    try {
      return await this.repo.transaction(async (repo) => {
        if (!(await repo.hasNetwork(accountId, networkId))) throw noSuchNetwork(networkId);
        const row = await repo.insert({
          account_id: accountId,
          network_id: networkId,
          name: clean.name ?? "",
          success_url: clean.success_url ?? "",
          created: now,
          updated: now,
        });
        return this.present(row);
      });
    } catch (error) {
      if (isMissingReference(error)) throw noSuchNetwork(networkId);
      throw error;
    }
  }

  /** Partial update: only the fields given change. A portal may move to another network of its account. */
  async update(accountId: number, id: number, input: PortalInput): Promise<CaptivePortal> {
    const clean = check(input);
    const networkId = clean.network_id;
    try {
      return await this.repo.transaction(async (repo) => {
        if (!(await repo.findById(accountId, id))) throw notFound(id);
        const changes: PortalChanges = { updated: isoNow() };
        if (clean.name !== undefined) changes.name = clean.name;
        if (clean.success_url !== undefined) changes.success_url = clean.success_url;
        if (networkId !== undefined) {
          if (!(await repo.hasNetwork(accountId, networkId))) throw noSuchNetwork(networkId);
          changes.network_id = networkId;
        }
        const row = await repo.update(accountId, id, changes);
        if (!row) throw notFound(id);
        return this.present(row);
      });
    } catch (error) {
      if (isMissingReference(error) && networkId !== undefined) throw noSuchNetwork(networkId);
      throw error;
    }
  }

  async delete(accountId: number, id: number): Promise<CaptivePortal> {
    return this.repo.transaction(async (repo) => {
      const row = await repo.findById(accountId, id);
      if (!row || !(await repo.delete(accountId, id))) throw notFound(id);
      return this.present(row);
    });
  }
}

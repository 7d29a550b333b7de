// Vouchers: guest credentials whose code is both the username and the password. Created here (singly
// or in batches of up to 10,000, all-or-nothing); the RADIUS door finds them with findByCode.
import { randomInt } from "node:crypto";
import { isUniqueViolation } from "../../db/database.ts";
import { planIdProblem, unknownPlan } from "../plans/repo.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { isoNow } from "../shared/time.ts";
import type { StatusCondition, VoucherRow, VouchersRepo, VoucherTemplate } from "./repo.ts";
import {
  CODE_ALPHABET,
  CODE_PATTERN,
  CODE_RULE,
  DEFAULT_USAGE_LIMIT,
  LAPSING_STATUSES,
  MAX_BATCH,
  MAX_CODE,
  MAX_DATA_LIMIT,
  MAX_USAGE_LIMIT,
  MAX_VALIDITY,
  MIN_SESSION_TIMEOUT,
  MIN_VALIDITY,
  PREFIX_PATTERN,
  PREFIX_RULE,
  RANDOM_LENGTH,
  VOUCHER_SORT_FIELDS,
  VOUCHER_STATUSES,
  type VoucherStatus,
} from "./rules.ts";

export interface Voucher {
  id: number;
  code: string;
  status: VoucherStatus;
  validity: number;
  usage_limit: number;
  session_timeout: number | null;
  batch_id: number | null;
  created: string;
  first_used: string | null;
  expires: string | null;
  devices_used: number;
  /** Octets in plus out over every session of the voucher; null: unlimited. */
  data_limit: number | null;
}

/** The terms every voucher carries; `session_timeout` null (or absent) = no per-session cap. */
export interface VoucherTerms {
  validity?: number | undefined;
  usage_limit?: number | undefined;
  session_timeout?: number | null | undefined;
  data_limit?: number | null | undefined;
}

export interface VoucherInput extends VoucherTerms {
  /** An explicit code instead of a generated one. */
  code?: string | undefined;
}

export interface BatchInput extends VoucherTerms {
  quantity?: number | undefined;
  prefix?: string | undefined;
  /** The plan of the batch's vouchers (core/plans), or null. */
  plan_id?: number | null | undefined;
}

export interface Batch {
  batch_id: number;
  quantity: number;
  plan_id: number | null;
  data: Voucher[];
}

export interface VoucherListFilter {
  status?: string | undefined;
  batchId?: number | undefined;
  search?: string | undefined;
}

/** Whole transactions retried when a concurrent writer took a generated code after our probe. */
const ATTEMPTS = 3;
/** Probe-and-regenerate rounds; with 31^8 codes per prefix a second round is already rare. */
const MAX_ROUNDS = 10;
const codePattern = new RegExp(CODE_PATTERN);
const prefixPattern = new RegExp(PREFIX_PATTERN);
/** What a login may present as a code; anything else cannot match and costs no query. */
const lookupPattern = new RegExp(`^[A-Za-z0-9]{1,${MAX_CODE}}$`);

/** prefix + RANDOM_LENGTH characters from CODE_ALPHABET, uniformly, from node:crypto. */
export function randomCode(prefix: string): string {
  let code = prefix;
  for (let i = 0; i < RANDOM_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** The status as of `now`: an active or exhausted voucher whose `expires` has passed is expired. */
export function effectiveStatus(row: Pick<VoucherRow, "status" | "expires">, now = isoNow()): VoucherStatus {
  const stored = row.status as VoucherStatus;
  if (LAPSING_STATUSES.includes(stored) && row.expires !== null && row.expires <= now) return "expired";
  return stored;
}

/** The stored rows that have `status` as of `now` (the inverse of effectiveStatus). */
function statusCondition(status: VoucherStatus, now: string): StatusCondition {
  if (status === "expired") {
    return { statuses: ["expired"], timed: { statuses: LAPSING_STATUSES, lapsed: true, now } };
  }
  if (LAPSING_STATUSES.includes(status)) {
    return { statuses: [], timed: { statuses: [status], lapsed: false, now } };
  }
  return { statuses: [status] };
}

function present(row: VoucherRow, now: string): Voucher {
  return {
    id: row.id,
    code: row.code,
    status: effectiveStatus(row, now),
    validity: row.validity,
    usage_limit: row.usage_limit,
    session_timeout: row.session_timeout,
    batch_id: row.batch_id,
    created: row.created,
    first_used: row.first_used,
    expires: row.expires,
    devices_used: row.devices_used,
    data_limit: row.data_limit === null || row.data_limit === undefined ? null : Number(row.data_limit),
  };
}

/** A voucher just inserted: built from what was written, without reading it back. */
function fresh(id: number, code: string, v: VoucherTemplate): Voucher {
  return {
    id,
    code,
    status: "unused",
    validity: v.validity,
    usage_limit: v.usage_limit,
    session_timeout: v.session_timeout,
    batch_id: v.batch_id,
    created: v.created,
    first_used: null,
    expires: null,
    devices_used: 0,
    data_limit: v.data_limit,
  };
}

function isWhole(value: unknown, min: number, max: number): value is number {
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
}

function checkTerms(input: VoucherTerms, problems: FieldProblem[]): void {
  const { validity, usage_limit, session_timeout, data_limit } = input;
  if (data_limit !== undefined && data_limit !== null && !isWhole(data_limit, 1, MAX_DATA_LIMIT)) {
    problems.push({
      field: "data_limit",
      message: `must be a whole number of octets from 1 to ${MAX_DATA_LIMIT}, or null for no limit`,
    });
  }
  if (validity === undefined) problems.push({ field: "validity", message: "is required" });
  else if (!isWhole(validity, MIN_VALIDITY, MAX_VALIDITY)) {
    problems.push({
      field: "validity",
      message: `must be a whole number of seconds from ${MIN_VALIDITY} to ${MAX_VALIDITY}`,
    });
  }
  if (usage_limit !== undefined && !isWhole(usage_limit, 0, MAX_USAGE_LIMIT)) {
    problems.push({ field: "usage_limit", message: `must be a whole number from 0 to ${MAX_USAGE_LIMIT}` });
  }
  if (session_timeout !== undefined && session_timeout !== null) {
    const cap = isWhole(validity, MIN_VALIDITY, MAX_VALIDITY) ? validity : MAX_VALIDITY;
    if (!isWhole(session_timeout, MIN_SESSION_TIMEOUT, cap)) {
      problems.push({
        field: "session_timeout",
        message: `must be a whole number of seconds from ${MIN_SESSION_TIMEOUT} to the validity (${cap})`,
      });
    }
  }
}

function fail(problems: FieldProblem[]): void {
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
}

function duplicate(code: string): ConflictError {
  return new ConflictError(`a voucher with the code "${code}" already exists`);
}

export class VouchersService {
  /** The code generator; replaceable so tests can force collisions. */
  generateCode: (prefix: string) => string = randomCode;

  constructor(private readonly repo: VouchersRepo) {}

  /** `sort`: a field of VOUCHER_SORT_FIELDS, "-" first for descending; by id by default. */
  async list(
    accountId: number,
    filter: VoucherListFilter,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<Voucher>> {
    const { status, batchId, search } = filter;
    if (status !== undefined && !VOUCHER_STATUSES.includes(status as VoucherStatus)) {
      throw ValidationError.field("status", `must be one of ${VOUCHER_STATUSES.join(", ")}`);
    }
    const order = parseSort(sort, VOUCHER_SORT_FIELDS);
    const now = isoNow();
    const condition = status === undefined ? undefined : statusCondition(status as VoucherStatus, now);
    const { rows, total } = await this.repo.list(
      accountId,
      { status: condition, batchId, search },
      page,
      order,
    );
    return { data: rows.map((row) => present(row, now)), page: page.page, total, limit: page.limit };
  }

  async get(accountId: number, id: number): Promise<Voucher> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw new NotFoundError(`voucher ${id} not found`);
    return present(row, isoNow());
  }

  /** The voucher a guest's code names, ignoring case (for the RADIUS door); undefined if none. */
  async findByCode(accountId: number, code: string): Promise<Voucher | undefined> {
    if (!lookupPattern.test(code)) return undefined;
    const row = await this.repo.findByCode(accountId, code.toUpperCase());
    return row ? present(row, isoNow()) : undefined;
  }

  async create(accountId: number, input: VoucherInput): Promise<Voucher> {
    const problems: FieldProblem[] = [];
    checkTerms(input, problems);
    if (input.code !== undefined && !codePattern.test(input.code)) {
      problems.push({ field: "code", message: CODE_RULE });
    }
    fail(problems);
    const explicit = input.code?.toUpperCase();
    const now = isoNow();
    return this.writing(explicit, async (repo) => {
      let code = explicit;
      if (code === undefined) [code] = await this.uniqueCodes(repo, accountId, "", 1);
      else if (await repo.findByCode(accountId, code)) throw duplicate(code);
      const template = this.template(accountId, input, null, now);
      const [id] = await repo.insertMany(template, [code!]);
      const voucher = fresh(id!, code!, template);
      await repo.audit({ accountId, resource: "voucher", id: voucher.id, action: "create", after: voucher });
      return voucher;
    });
  }

  /** All or nothing: one transaction holds the batch row and every voucher. */
  async createBatch(accountId: number, input: BatchInput): Promise<Batch> {
    const problems: FieldProblem[] = [];
    if (input.quantity === undefined) problems.push({ field: "quantity", message: "is required" });
    else if (!isWhole(input.quantity, 1, MAX_BATCH)) {
      problems.push({ field: "quantity", message: `must be a whole number from 1 to ${MAX_BATCH}` });
    }
    if (input.prefix !== undefined && !prefixPattern.test(input.prefix)) {
      problems.push({ field: "prefix", message: PREFIX_RULE });
    }
    checkTerms(input, problems);
    const badPlan = planIdProblem(input.plan_id);
    if (badPlan) problems.push({ field: "plan_id", message: badPlan });
    fail(problems);
    const quantity = input.quantity!;
    const planId = input.plan_id ?? null;
    const prefix = (input.prefix ?? "").toUpperCase();
    const now = isoNow();
    return this.writing(undefined, async (repo) => {
      if (planId !== null && !(await repo.planExists(accountId, planId))) throw unknownPlan(planId);
      const codes = await this.uniqueCodes(repo, accountId, prefix, quantity);
      const { validity, usage_limit, session_timeout, data_limit } = this.template(
        accountId,
        input,
        null,
        now,
      );
      const batchId = await repo.insertBatch({
        account_id: accountId,
        prefix,
        quantity,
        validity,
        usage_limit,
        session_timeout,
        data_limit,
        plan_id: planId,
        created: now,
      });
      const template = this.template(accountId, input, batchId, now);
      const ids = await repo.insertMany(template, codes);
      const data = codes.map((code, i) => fresh(ids[i]!, code, template));
      // Ids follow the VALUES order on both databases; sort only if that ever stops being so.
      if (!data.every((v, i) => i === 0 || data[i - 1]!.id < v.id)) data.sort((a, b) => a.id - b.id);
      // One row for the batch, not one per voucher: its terms and the range of ids it made.
      const after = { prefix, quantity, validity, usage_limit, session_timeout, data_limit, plan_id: planId };
      const ids_range = [data[0]?.id, data.at(-1)?.id];
      await repo.audit({
        accountId,
        resource: "voucher_batch",
        id: batchId,
        action: "create",
        after: { ...after, ids: ids_range },
      });
      return { batch_id: batchId, quantity: data.length, plan_id: planId, data };
    });
  }

  /** Sets (or clears, with null) the plan of a batch's vouchers; it applies from their next login. */
  async setBatchPlan(
    accountId: number,
    batchId: number,
    planId: number | null,
  ): Promise<{ batch_id: number; plan_id: number | null }> {
    const badPlan = planIdProblem(planId);
    if (badPlan) throw ValidationError.field("plan_id", badPlan);
    return this.repo.transaction(async (repo) => {
      if (planId !== null && !(await repo.planExists(accountId, planId))) throw unknownPlan(planId);
      if (!(await repo.setBatchPlan(accountId, batchId, planId))) {
        throw new NotFoundError(`voucher batch ${batchId} not found`);
      }
      await repo.audit({
        accountId,
        resource: "voucher_batch",
        id: batchId,
        action: "update",
        after: { plan_id: planId },
      });
      return { batch_id: batchId, plan_id: planId };
    });
  }

  /**
   * Deletes the voucher; its open sessions are disconnected (a job queued in the same transaction).
   */
  async delete(accountId: number, id: number): Promise<void> {
    await this.repo.transaction(async (repo) => {
      const row = await repo.findById(accountId, id);
      if (!row || !(await repo.delete(accountId, id))) throw new NotFoundError(`voucher ${id} not found`);
      if (row.first_used !== null) await repo.disconnectSessions(accountId, row.code, "voucher deleted");
      const before = present(row, isoNow());
      await repo.audit({ accountId, resource: "voucher", id, action: "delete", before });
    });
  }

  /**
   * Disables a voucher (refused at login from now on, its open sessions disconnected through a job
   * queued in the same transaction) or enables it again (its status as the clock and its devices say).
   */
  async setEnabled(accountId: number, id: number, enabled: boolean): Promise<Voucher> {
    return this.repo.transaction(async (repo) => {
      const row = await repo.findById(accountId, id);
      if (!row) throw new NotFoundError(`voucher ${id} not found`);
      const full = row.usage_limit > 0 && row.devices_used >= row.usage_limit;
      const status = !enabled
        ? "disabled"
        : row.first_used === null
          ? "unused"
          : full
            ? "exhausted"
            : "active";
      if (status !== row.status) await repo.setStatus(accountId, id, status);
      if (!enabled && row.status !== "disabled" && row.first_used !== null) {
        await repo.disconnectSessions(accountId, row.code, "voucher disabled");
      }
      const now = isoNow();
      const after = present({ ...row, status }, now);
      await repo.audit({
        accountId,
        resource: "voucher",
        id,
        action: "update",
        before: present(row, now),
        after,
      });
      return after;
    });
  }

  /** The columns every voucher of one insert shares. */
  private template(
    accountId: number,
    terms: VoucherTerms,
    batchId: number | null,
    now: string,
  ): VoucherTemplate {
    return {
      account_id: accountId,
      status: "unused",
      validity: terms.validity!,
      usage_limit: terms.usage_limit ?? DEFAULT_USAGE_LIMIT,
      session_timeout: terms.session_timeout ?? null,
      data_limit: terms.data_limit ?? null,
      batch_id: batchId,
      created: now,
    };
  }

  /**
   * Runs a write in a transaction. A unique violation means another writer took the explicit code
   * (409) or, for generated codes, took one between our probe and our insert: then start over.
   */
  private async writing<T>(explicit: string | undefined, fn: (repo: VouchersRepo) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.repo.transaction(fn);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        if (explicit !== undefined) throw duplicate(explicit);
        if (attempt >= ATTEMPTS) throw new ConflictError("voucher codes kept colliding; try again");
      }
    }
  }

  /**
   * `quantity` distinct codes the account does not have yet: generate, probe the database in bulk,
   * replace the ones taken, probe only the replacements, until none is taken.
   */
  private async uniqueCodes(
    repo: VouchersRepo,
    accountId: number,
    prefix: string,
    quantity: number,
  ): Promise<string[]> {
    const codes = new Set<string>();
    const taken = new Set<string>();
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      const added = this.fill(codes, taken, prefix, quantity);
      if (codes.size < quantity) break;
      const clash = await repo.existingCodes(accountId, added);
      if (clash.size === 0) return [...codes];
      for (const code of clash) {
        codes.delete(code);
        taken.add(code);
      }
    }
    throw new ConflictError(`could not find ${quantity} unused codes with the prefix "${prefix}"`);
  }

  /** Tops `codes` up to `quantity` with new codes (never one already taken); returns the new ones. */
  private fill(codes: Set<string>, taken: Set<string>, prefix: string, quantity: number): string[] {
    const added: string[] = [];
    // Bounded, so a generator that keeps repeating itself ends in an error, not a hang.
    let tries = 10 * (quantity - codes.size) + 100;
    while (codes.size < quantity && tries-- > 0) {
      const code = this.generateCode(prefix);
      if (codes.has(code) || taken.has(code)) continue;
      codes.add(code);
      added.push(code);
    }
    return added;
  }
}

// Plans (issue 25 point 3): an account's named bundles of bandwidth, data and time quotas, validity
// from first use and concurrent devices. Users, groups and voucher batches name one by plan_id; the
// login decision enforces it through the items FreeRADIUS's modules already know
// (plans/attributes.ts). Which plan applies: the user's own, else its first group's (by
// radusergroup priority) that has one; a voucher login: its batch's.

import { isUniqueViolation } from "../../db/database.ts";
import type { Pair } from "../aaa/pairs.ts";
import type { GatewayVendor } from "../networks/rules.ts";
import { queueReauthorization } from "../sessions/reauthorize.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { isoNow } from "../shared/time.ts";
import { planControl, planReply } from "./attributes.ts";
import type { PlanChanges, PlanRow, PlansRepo, PlanUse } from "./repo.ts";
import {
  MAX_BANDWIDTH_KBPS,
  MAX_DATA_QUOTA,
  MAX_DEVICES,
  MAX_PLAN_DESCRIPTION,
  MAX_PLAN_NAME,
  MAX_PLAN_ROLE,
  MAX_TIME_QUOTA,
  MAX_VALIDITY,
  PLAN_PERIODS,
  PLAN_SORT_FIELDS,
  type PlanLimits,
  type PlanPeriod,
  planLimitsOf,
  ROLE_RULE,
} from "./rules.ts";

export interface Plan extends PlanLimits {
  id: number;
  description: string;
  created: string;
  updated: string;
}

export type PlanInput = Partial<{
  name: string;
  description: string;
  download_kbps: number | null;
  upload_kbps: number | null;
  data_quota: number | null;
  data_period: string | null;
  time_quota: number | null;
  time_period: string | null;
  validity: number | null;
  devices: number | null;
  role: string;
}>;

export function presentPlan(row: PlanRow): Plan {
  const limits = planLimitsOf(row);
  return {
    id: Number(row.id),
    ...limits,
    description: row.description,
    created: row.created,
    updated: row.updated,
  };
}

const FIGURES = [
  ["download_kbps", 1, MAX_BANDWIDTH_KBPS, "kbit/s"],
  ["upload_kbps", 1, MAX_BANDWIDTH_KBPS, "kbit/s"],
  ["data_quota", 1, MAX_DATA_QUOTA, "octets"],
  ["time_quota", 1, MAX_TIME_QUOTA, "seconds"],
  ["validity", 1, MAX_VALIDITY, "seconds"],
  ["devices", 1, MAX_DEVICES, "sessions"],
] as const;

/** Every given field checked; all problems reported at once. */
function checkFields(input: PlanInput): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (name === "" || name.length > MAX_PLAN_NAME || hasControlCharacters(name)) {
      problems.push({
        field: "name",
        message: `must be 1-${MAX_PLAN_NAME} characters without control characters`,
      });
    }
  }
  if (
    input.description !== undefined &&
    (input.description.length > MAX_PLAN_DESCRIPTION || hasControlCharacters(input.description))
  ) {
    problems.push({
      field: "description",
      message: `must be at most ${MAX_PLAN_DESCRIPTION} characters without control characters`,
    });
  }
  for (const [field, min, max, unit] of FIGURES) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push({ field, message: `must be a whole number of ${unit} from ${min} to ${max}, or null` });
    }
  }
  for (const field of ["data_period", "time_period"] as const) {
    const value = input[field];
    if (value !== undefined && value !== null && !(PLAN_PERIODS as readonly string[]).includes(value)) {
      problems.push({ field, message: `must be one of ${PLAN_PERIODS.join(", ")}, or null` });
    }
  }
  if (
    input.role !== undefined &&
    (input.role.length > MAX_PLAN_ROLE || !/^[A-Za-z0-9_.:-]*$/.test(input.role))
  ) {
    problems.push({ field: "role", message: ROLE_RULE });
  }
  return problems;
}

/** A quota needs its period and a period its quota, in the plan as it will be stored. */
function pairingProblems(plan: PlanLimits): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [quota, period] of [
    ["data_quota", "data_period"],
    ["time_quota", "time_period"],
  ] as const) {
    if (plan[quota] !== null && plan[period] === null) {
      problems.push({ field: period, message: `is required with ${quota} (${PLAN_PERIODS.join(", ")})` });
    }
    if (plan[quota] === null && plan[period] !== null) {
      problems.push({ field: quota, message: `is required with ${period}` });
    }
  }
  return problems;
}

function fail(problems: FieldProblem[]): never {
  const first = problems[0]!;
  throw new ValidationError(`${first.field} ${first.message}`, problems);
}

function notFound(id: number): NotFoundError {
  return new NotFoundError(`plan ${id} not found`);
}

function nameTaken(name: string): ConflictError {
  return new ConflictError(`a plan named "${name}" already exists`);
}

/** The stored columns from an input (only the given fields). */
function columnsOf(input: PlanInput): PlanChanges {
  const changes: PlanChanges = {};
  if (input.name !== undefined) changes.name = input.name.trim();
  if (input.description !== undefined) changes.description = input.description;
  for (const [field] of FIGURES) if (input[field] !== undefined) changes[field] = input[field];
  if (input.data_period !== undefined) changes.data_period = input.data_period;
  if (input.time_period !== undefined) changes.time_period = input.time_period;
  if (input.role !== undefined) changes.role = input.role;
  return changes;
}

export class PlansService {
  constructor(private readonly repo: PlansRepo) {}

  async list(accountId: number, page: PageRequest, sort?: string): Promise<Page<Plan>> {
    const order = parseSort(sort, PLAN_SORT_FIELDS);
    const { rows, total } = await this.repo.list(accountId, page, order);
    return { data: rows.map(presentPlan), page: page.page, total, limit: page.limit };
  }

  names(accountId: number): Promise<{ id: number; name: string }[]> {
    return this.repo.names(accountId);
  }

  async get(accountId: number, id: number): Promise<Plan> {
    const row = await this.repo.findById(accountId, id);
    if (!row) throw notFound(id);
    return presentPlan(row);
  }

  /** A plan by id, or by name (the CLI's way of naming one). */
  async find(accountId: number, idOrName: string): Promise<Plan> {
    const row = /^\d+$/.test(idOrName)
      ? await this.repo.findById(accountId, Number(idOrName))
      : await this.repo.findByName(accountId, idOrName.trim());
    if (!row) throw new NotFoundError(`plan ${idOrName} not found`);
    return presentPlan(row);
  }

  /**
   * That `planId` (when not null) is a plan of this account: another account's answers as none
   * (404), so ids of other accounts cannot be probed. Users, groups and batches call it.
   */
  async checkReference(accountId: number, planId: number | null | undefined): Promise<void> {
    if (planId === undefined || planId === null) return;
    if (!Number.isSafeInteger(planId) || planId < 1)
      throw ValidationError.field("plan_id", "must be a plan's id or null");
    if (!(await this.repo.findById(accountId, planId))) throw notFound(planId);
  }

  async create(accountId: number, input: PlanInput): Promise<Plan> {
    const problems = checkFields(input);
    if (input.name === undefined) problems.unshift({ field: "name", message: "is required" });
    if (problems.length > 0) fail(problems);
    const now = isoNow();
    const columns = columnsOf(input);
    const pairing = pairingProblems(planLimitsOf({ ...EMPTY, ...columns, name: columns.name ?? "" }));
    if (pairing.length > 0) fail(pairing);
    try {
      return await this.repo.transaction(async (repo) => {
        const row = await repo.insert({
          ...EMPTY,
          ...columns,
          name: columns.name ?? "",
          account_id: accountId,
          created: now,
          updated: now,
        });
        const plan = presentPlan(row);
        await repo.audit({ accountId, resource: "plan", id: row.id, action: "create", after: plan });
        return plan;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(columns.name ?? "");
      throw error;
    }
  }

  /** Partial update: the fields given change; the plan as stored after it must still pair quotas and periods. */
  async update(accountId: number, id: number, input: PlanInput): Promise<Plan> {
    const problems = checkFields(input);
    if (problems.length > 0) fail(problems);
    const columns = columnsOf(input);
    try {
      const row = await this.repo.transaction(async (repo) => {
        const current = await repo.findById(accountId, id, true);
        if (!current) throw notFound(id);
        const pairing = pairingProblems(planLimitsOf({ ...current, ...columns }));
        if (pairing.length > 0) fail(pairing);
        const updated = await repo.update(accountId, id, { ...columns, updated: isoNow() });
        if (!updated) throw notFound(id);
        // The new figures reach the open sessions of everyone on the plan by CoA.
        const usernames = await repo.affectedUsernames(accountId, id);
        await queueReauthorization(repo.db, repo.dialect, accountId, { usernames }, "plan changed");
        await repo.audit({
          accountId,
          resource: "plan",
          id,
          action: "update",
          before: presentPlan(current),
          after: presentPlan(updated),
        });
        return updated;
      });
      return presentPlan(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(columns.name ?? "");
      throw error;
    }
  }

  /**
   * Deletes a plan no one uses. A plan still named by users, groups or voucher batches is refused
   * (409, with the counts): deleting it would silently lift their limits.
   */
  async delete(accountId: number, id: number): Promise<Plan> {
    const row = await this.repo.transaction(async (repo) => {
      const current = await repo.findById(accountId, id, true);
      if (!current) throw notFound(id);
      const use = await repo.uses(accountId, id);
      if (use.users + use.groups + use.batches > 0) throw inUse(current.name, use);
      await repo.delete(accountId, id);
      await repo.audit({ accountId, resource: "plan", id, action: "delete", before: presentPlan(current) });
      return current;
    });
    return presentPlan(row);
  }

  uses(accountId: number, id: number): Promise<PlanUse> {
    return this.repo.uses(accountId, id);
  }

  /**
   * The usernames whose authorization a change of this plan changes (its users, the members of its
   * groups without a plan of their own, its batches' voucher codes): the hook for pushing new
   * attributes to live sessions (RFC 5176 CoA, issue 25 point 4). A superset when a member's first
   * group with a plan is another one.
   */
  affectedUsernames(accountId: number, id: number): Promise<string[]> {
    return this.repo.affectedUsernames(accountId, id);
  }

  /**
   * The plan's reply items on a network of `vendor`, or null when the account has no such plan:
   * the PlanReplies port of policies (a policy outcome naming a plan).
   */
  async reply(accountId: number, planId: number, vendor: GatewayVendor): Promise<Pair[] | null> {
    const row = await this.repo.findById(accountId, planId);
    return row ? planReply(planLimitsOf(row), vendor) : null;
  }

  /** The plan's control items (quotas, validity, devices), or null when there is no such plan. */
  async control(accountId: number, planId: number): Promise<Pair[] | null> {
    const row = await this.repo.findById(accountId, planId);
    return row ? planControl(planLimitsOf(row)) : null;
  }

  async exists(accountId: number, planId: number): Promise<boolean> {
    return (await this.repo.findById(accountId, planId)) !== undefined;
  }
}

const EMPTY = {
  description: "",
  download_kbps: null,
  upload_kbps: null,
  data_quota: null,
  data_period: null,
  time_quota: null,
  time_period: null,
  validity: null,
  devices: null,
  role: "",
};

function inUse(name: string, use: PlanUse): ConflictError {
  return new ConflictError(
    `plan "${name}" is in use by ${use.users} user(s), ${use.groups} group(s) and ${use.batches} voucher batch(es): ` +
      "assign them another plan (or none) first",
  );
}

export type { PlanPeriod };

// Policies: an ordered list of rules per account (first match wins, a fixed default last), kept by
// every door through this service, applied to logins by the engine (engine.ts) and explained
// without sending or recording anything (explain.ts). Every change is one transaction: the list's
// positions stay 1..n, and a login reads the list in one statement (never half a reorder).
import { isUniqueViolation } from "../../db/database.ts";
import { ConflictError, type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import { analyse, type PolicyWarning } from "./analysis.ts";
import type { PlanReplies, PolicyEngine } from "./engine.ts";
import type { PolicyRule } from "./evaluate.ts";
import type { ExplainFacts, Explanation, PolicyExplainer } from "./explain.ts";
import type { PoliciesRepo, PolicyRow } from "./repo.ts";
import {
  canonicalTimeZone,
  checkConditions,
  checkDescription,
  checkName,
  checkOutcome,
  DEFAULT_OUTCOME,
  DEFAULT_POLICY_NAME,
  MAX_POLICIES,
  type PolicyConditions,
  type PolicyOutcome,
  timeZoneProblem,
} from "./rules.ts";

export interface Policy {
  id: number;
  name: string;
  description: string;
  position: number;
  conditions: PolicyConditions;
  outcome: PolicyOutcome;
  created: string;
  updated: string;
  /** Unreachable or overlapping (analysis.ts): said, never refused. */
  warnings: PolicyWarning[];
}

export interface DefaultPolicy {
  name: "default";
  position: number;
  outcome: PolicyOutcome;
  /** The account's time zone (time conditions on networks without their own); null: UTC. */
  time_zone: string | null;
  warnings: PolicyWarning[];
}

export interface PolicyList {
  data: Policy[];
  total: number;
  default: DefaultPolicy;
  warnings: PolicyWarning[];
}

export interface PolicyInput {
  name?: string | undefined;
  description?: string | undefined;
  /** 1-based; absent: last (before the default). */
  position?: number | undefined;
  conditions?: unknown;
  outcome?: unknown;
}

const notFound = (id: number) => new NotFoundError(`policy ${id} not found`);
const parse = <T>(text: string | null | undefined, fallback: T): T =>
  text ? (JSON.parse(text) as T) : fallback;

export class PoliciesService {
  private plans: PlanReplies | undefined;

  constructor(
    private readonly repo: PoliciesRepo,
    /** Applies the policies to logins (the AAA service's hook). */
    readonly engine: PolicyEngine,
    private readonly explainer: PolicyExplainer,
  ) {}

  /** Plans (src/core/plans): checked when a policy names one, their attributes added at login. */
  usePlans(plans: PlanReplies | undefined): void {
    this.plans = plans;
    this.engine.plans = plans;
  }

  /** What a request with these facts would get, and why; nothing sent, nothing recorded. */
  explain(accountId: number, facts: ExplainFacts): Promise<Explanation> {
    return this.explainer.explain(accountId, facts);
  }

  private rule(row: PolicyRow): PolicyRule {
    return {
      id: row.id,
      name: row.name,
      position: row.position,
      conditions: parse(row.conditions, {}),
      outcome: parse(row.outcome, DEFAULT_OUTCOME),
    };
  }

  /** The whole list with its warnings, as every door shows it. */
  async list(accountId: number, repo = this.repo): Promise<PolicyList> {
    const [rows, account] = await Promise.all([repo.list(accountId), repo.account(accountId)]);
    const rules = rows.map((r) => this.rule(r));
    const fallback: PolicyRule = {
      id: null,
      name: DEFAULT_POLICY_NAME,
      position: rows.length + 1,
      conditions: {},
      outcome: parse(account?.policy_default, DEFAULT_OUTCOME),
    };
    const warnings = analyse([...rules, fallback]);
    const about = (id: number | null) => warnings.filter((w) => w.policy_id === id);
    return {
      total: rows.length,
      data: rows.map((row, i) => ({
        id: row.id,
        name: row.name,
        description: row.description,
        position: row.position,
        conditions: rules[i]!.conditions,
        outcome: rules[i]!.outcome,
        created: row.created,
        updated: row.updated,
        warnings: about(row.id),
      })),
      default: {
        name: DEFAULT_POLICY_NAME,
        position: fallback.position,
        outcome: fallback.outcome,
        time_zone: account?.time_zone ?? null,
        warnings: about(null),
      },
      warnings,
    };
  }

  async get(accountId: number, id: number, repo = this.repo): Promise<Policy> {
    const found = (await this.list(accountId, repo)).data.find((p) => p.id === id);
    if (!found) throw notFound(id);
    return found;
  }

  /** One policy's id from its id or name (the CLI and console take either). */
  async resolve(accountId: number, idOrName: string): Promise<number> {
    const rows = await this.repo.list(accountId);
    const row = /^\d+$/.test(idOrName)
      ? rows.find((r) => r.id === Number(idOrName))
      : rows.find((r) => r.name === idOrName);
    if (!row) throw new NotFoundError(`policy ${idOrName} not found`);
    return row.id;
  }

  /** Conditions and outcome checked, then their networks, groups and plan looked up in the account. */
  private async check(accountId: number, input: PolicyInput, whole: boolean) {
    const problems: FieldProblem[] = [];
    const name = input.name !== undefined || whole ? checkName(input.name, problems) : undefined;
    const description =
      input.description !== undefined ? checkDescription(input.description, problems) : undefined;
    const conditions =
      input.conditions !== undefined || whole ? checkConditions(input.conditions, problems) : undefined;
    const outcome = input.outcome !== undefined || whole ? checkOutcome(input.outcome, problems) : undefined;
    if (problems.length > 0)
      throw new ValidationError(problems.map((p) => `${p.field} ${p.message}`).join("; "), problems);
    if (conditions) await this.checkOwned(accountId, conditions);
    if (outcome) await this.checkPlan(accountId, outcome);
    return { name, description, conditions, outcome };
  }

  /** A network or group of another account (or none) is a 404, as every other door answers. */
  private async checkOwned(accountId: number, conditions: PolicyConditions): Promise<void> {
    const networks = conditions.networks ?? [];
    const known = await this.repo.networkIdsOf(accountId, networks);
    const network = networks.find((id) => !known.includes(id));
    if (network !== undefined) throw new NotFoundError(`network ${network} not found`);
    const groups = conditions.groups ?? [];
    const knownGroups = await this.repo.groupIdsOf(accountId, groups);
    const group = groups.find((id) => !knownGroups.includes(id));
    if (group !== undefined) throw new NotFoundError(`group ${group} not found`);
  }

  private async checkPlan(accountId: number, outcome: PolicyOutcome): Promise<void> {
    if (outcome.plan_id === undefined || !this.plans) return;
    if (!(await this.plans.exists(accountId, outcome.plan_id)))
      throw new NotFoundError(`plan ${outcome.plan_id} not found`);
  }

  private checkPosition(position: number | undefined, count: number): number {
    if (position === undefined) return count;
    if (!Number.isSafeInteger(position) || position < 1 || position > count) {
      throw ValidationError.field("position", `must be from 1 to ${count} (the default rule stays last)`);
    }
    return position;
  }

  /** Runs `write` in one transaction with the account's list locked; a taken name is a 409. */
  private async changing<T>(accountId: number, write: (repo: PoliciesRepo) => Promise<T>): Promise<T> {
    try {
      return await this.repo.transaction(async (repo) => {
        await repo.lockAccount(accountId);
        const result = await write(repo);
        await repo.bumpVersion(accountId);
        return result;
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ConflictError("the account already has a policy with this name");
      throw error;
    }
  }

  async create(accountId: number, input: PolicyInput): Promise<Policy> {
    const clean = await this.check(accountId, input, true);
    return this.changing(accountId, async (repo) => {
      const rows = await repo.list(accountId);
      if (rows.length >= MAX_POLICIES)
        throw new ConflictError(`an account has at most ${MAX_POLICIES} policies`);
      const position = this.checkPosition(input.position, rows.length + 1);
      const now = isoNow();
      const row = await repo.insert({
        account_id: accountId,
        position: rows.length + 1,
        name: clean.name!,
        description: clean.description ?? "",
        conditions: JSON.stringify(clean.conditions),
        outcome: JSON.stringify(clean.outcome),
        created: now,
        updated: now,
      });
      const ids = rows.map((r) => r.id);
      ids.splice(position - 1, 0, row.id);
      await repo.renumber(accountId, ids);
      const created = await this.get(accountId, row.id, repo);
      await repo.audit({ accountId, resource: "policy", id: row.id, action: "create", after: created });
      return created;
    });
  }

  /** Changes the given fields (conditions and outcome are replaced whole); position moves it. */
  async update(accountId: number, id: number, input: PolicyInput): Promise<Policy> {
    const clean = await this.check(accountId, input, false);
    return this.changing(accountId, async (repo) => {
      const rows = await repo.list(accountId);
      if (!rows.some((r) => r.id === id)) throw notFound(id);
      const before = await this.get(accountId, id, repo);
      await repo.update(accountId, id, {
        ...(clean.name === undefined ? {} : { name: clean.name }),
        ...(clean.description === undefined ? {} : { description: clean.description }),
        ...(clean.conditions === undefined ? {} : { conditions: JSON.stringify(clean.conditions) }),
        ...(clean.outcome === undefined ? {} : { outcome: JSON.stringify(clean.outcome) }),
        updated: isoNow(),
      });
      if (input.position !== undefined) await this.place(repo, accountId, rows, id, input.position);
      const after = await this.get(accountId, id, repo);
      await repo.audit({ accountId, resource: "policy", id, action: "update", before, after });
      return after;
    });
  }

  private async place(
    repo: PoliciesRepo,
    accountId: number,
    rows: PolicyRow[],
    id: number,
    position: number,
  ) {
    const to = this.checkPosition(position, rows.length);
    const ids = rows.map((r) => r.id).filter((x) => x !== id);
    ids.splice(to - 1, 0, id);
    await repo.renumber(accountId, ids);
  }

  /** Moves one policy to `position` (1-based); the others keep their order. */
  async move(accountId: number, id: number, position: number): Promise<PolicyList> {
    return this.changing(accountId, async (repo) => {
      const rows = await repo.list(accountId);
      if (!rows.some((r) => r.id === id)) throw notFound(id);
      await this.place(repo, accountId, rows, id, position);
      await repo.audit({
        accountId,
        resource: "policy",
        id,
        action: "move",
        before: { position: rows.find((r) => r.id === id)?.position },
        after: { position },
      });
      return this.list(accountId, repo);
    });
  }

  /** The whole order at once: `ids` must name every policy of the account exactly once. */
  async reorder(accountId: number, ids: readonly number[]): Promise<PolicyList> {
    return this.changing(accountId, async (repo) => {
      const rows = await repo.list(accountId);
      const foreign = ids.find((id) => !rows.some((r) => r.id === id));
      if (foreign !== undefined) throw notFound(foreign);
      if (ids.length !== rows.length || new Set(ids).size !== ids.length) {
        throw ValidationError.field(
          "ids",
          `must list every policy of the account exactly once (${rows.length}); the default rule stays last`,
        );
      }
      await repo.renumber(accountId, ids);
      await repo.audit({
        accountId,
        resource: "policy_order",
        id: accountId,
        action: "update",
        before: { ids: rows.map((r) => r.id) },
        after: { ids },
      });
      return this.list(accountId, repo);
    });
  }

  async delete(accountId: number, id: number): Promise<void> {
    await this.changing(accountId, async (repo) => {
      const rows = await repo.list(accountId);
      if (!rows.some((r) => r.id === id)) throw notFound(id);
      const before = await this.get(accountId, id, repo);
      await repo.delete(accountId, id);
      await repo.renumber(
        accountId,
        rows.map((r) => r.id).filter((x) => x !== id),
      );
      await repo.audit({ accountId, resource: "policy", id, action: "delete", before });
    });
  }

  /** The default rule: its outcome (never its position) and the account's time zone. */
  async getDefault(accountId: number): Promise<DefaultPolicy> {
    return (await this.list(accountId)).default;
  }

  async setDefault(
    accountId: number,
    input: { outcome?: unknown; time_zone?: string | null | undefined },
  ): Promise<DefaultPolicy> {
    const problems: FieldProblem[] = [];
    const outcome = input.outcome === undefined ? undefined : checkOutcome(input.outcome, problems);
    let zone: string | null | undefined = input.time_zone;
    if (typeof zone === "string") {
      const problem = timeZoneProblem(zone);
      if (problem) problems.push({ field: "time_zone", message: problem });
      else zone = canonicalTimeZone(zone);
    }
    if (problems.length > 0)
      throw new ValidationError(problems.map((p) => `${p.field} ${p.message}`).join("; "), problems);
    if (outcome) await this.checkPlan(accountId, outcome);
    await this.changing(accountId, async (repo) => {
      const before = (await this.list(accountId, repo)).default;
      if (outcome) await repo.setDefault(accountId, JSON.stringify(outcome));
      if (zone !== undefined) await repo.setTimeZone(accountId, zone);
      const after = (await this.list(accountId, repo)).default;
      await repo.audit({
        accountId,
        resource: "policy_default",
        id: accountId,
        action: "update",
        before,
        after,
      });
    });
    return this.getDefault(accountId);
  }
}

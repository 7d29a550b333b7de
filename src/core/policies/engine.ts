// Policies at login time: after the credential check accepted, the account's list is read in one
// statement (a reorder is seen whole or not at all), the facts its rules ask for are gathered, and
// the first matching rule's outcome is applied to the reply (reply.ts says how it combines).
import type { Pair } from "../aaa/pairs.ts";
import type { AuthMethod } from "../aaa/recording.ts";
import type { PortalMethod } from "../portals/rules.ts";
import { isoNow } from "../shared/time.ts";
import {
  type CompiledRule,
  compile,
  defaultRule,
  type Evaluation,
  evaluate,
  localTime,
  neededFacts,
  type PolicyFacts,
} from "./evaluate.ts";
import { combine, outcomePairs } from "./reply.ts";
import type { PoliciesRepo, RuleRow } from "./repo.ts";
import { canonicalTimeZone, DEFAULT_OUTCOME, type PolicyConditions, type PolicyOutcome } from "./rules.ts";

/** The network a plan's bandwidth is written for (its vendor picks the attributes). */
export interface PlanNetwork {
  id: number;
  account_id: number;
  vendor?: string | undefined;
}

/**
 * Plans (src/core/plans, built beside this area): the reply attributes of a plan on a network, and
 * whether the account has the plan. Optional: without it a plan outcome adds no attributes.
 */
export interface PlanReplies {
  reply(accountId: number, planId: number, network: PlanNetwork): Promise<Pair[] | null>;
  exists(accountId: number, planId: number): Promise<boolean>;
}

/** One login, as the AAA service knows it after the credential check. */
export interface PolicyRequest {
  network: PlanNetwork;
  ssid: string | null;
  nasIdentifier: string | null;
  clientMac: string | null;
  method: AuthMethod | null;
  username: string;
  userId: number | null;
  now: number;
  /** Explain: the portal method given instead of looked up. */
  portalMethod?: PortalMethod | null | undefined;
}

export interface PolicyVerdict {
  accepted: boolean;
  reply: Pair[];
  reason: string | null;
  policy: { id: number | null; name: string };
}

interface Snapshot {
  rules: CompiledRule[];
  timeZone: string;
}

/** The compiled list of each account at a version; rebuilt when a change moved the version. */
const COMPILED_LIMIT = 10_000;

function compileRows(rows: readonly RuleRow[]): CompiledRule[] {
  return rows.map((row) =>
    compile({
      id: row.id,
      name: row.name,
      position: row.position,
      conditions: JSON.parse(row.conditions) as PolicyConditions,
      outcome: JSON.parse(row.outcome) as PolicyOutcome,
    }),
  );
}

export class PolicyEngine {
  plans: PlanReplies | undefined;
  /** Immutable compiled lists by account: a login uses one whole list, never one being changed. */
  private readonly compiled = new Map<number, { version: number; rules: readonly CompiledRule[] }>();
  private readonly defaults = new Map<string, PolicyOutcome>();

  constructor(private readonly repo: PoliciesRepo) {}

  /**
   * The account's rules (default last) and the time zone of the login's network: one small query
   * per login, and the list itself (one statement) only when its version moved since it was read.
   */
  async snapshot(accountId: number, networkId: number): Promise<Snapshot | null> {
    const head = await this.repo.head(accountId, networkId);
    if (!head) return null;
    let cached = this.compiled.get(accountId);
    if (!cached || cached.version !== head.version) {
      cached = { version: head.version, rules: compileRows(await this.repo.rules(accountId)) };
      if (this.compiled.size >= COMPILED_LIMIT) this.compiled.clear();
      this.compiled.set(accountId, cached);
    }
    const text = head.policy_default;
    let outcome = text ? this.defaults.get(text) : DEFAULT_OUTCOME;
    if (!outcome) {
      outcome = JSON.parse(text!) as PolicyOutcome;
      if (this.defaults.size >= COMPILED_LIMIT) this.defaults.clear();
      this.defaults.set(text!, outcome);
    }
    const zone = head.network_tz ?? head.account_tz;
    return {
      rules: [...cached.rules, defaultRule(outcome, cached.rules.length + 1)],
      timeZone: (zone && canonicalTimeZone(zone)) || "UTC",
    };
  }

  async facts(accountId: number, snapshot: Snapshot, input: PolicyRequest): Promise<PolicyFacts> {
    const need = neededFacts(snapshot.rules);
    const local = localTime(input.now, snapshot.timeZone);
    const [groupIds, deviceRegistered, portalMethod] = await Promise.all([
      need.groups ? this.repo.groupIds(accountId, input) : [],
      need.device && input.clientMac
        ? this.repo.deviceRegistered(accountId, input.clientMac, isoNow(new Date(input.now * 1000)))
        : false,
      input.portalMethod !== undefined || !need.portal
        ? (input.portalMethod ?? null)
        : this.repo.pendingPortalMethod(accountId, input.username, input.clientMac, input.now),
    ]);
    return {
      networkId: input.network.id,
      ssid: input.ssid,
      nasIdentifier: input.nasIdentifier,
      groupIds,
      method: input.method,
      portalMethod: portalMethod as PortalMethod | null,
      day: local.day,
      minute: local.minute,
      deviceRegistered,
    };
  }

  /** The reply after the matched rule's outcome: `reply` combined with its attributes (and plan's). */
  async outcomeReply(accountId: number, rule: CompiledRule, network: PlanNetwork, reply: readonly Pair[]) {
    const { outcome } = rule;
    const plan =
      outcome.plan_id !== undefined && this.plans
        ? ((await this.plans.reply(accountId, outcome.plan_id, network)) ?? [])
        : [];
    return combine(reply, outcomePairs(outcome, plan));
  }

  /** Applies the account's policies to an accepted login with `reply`. */
  async apply(input: PolicyRequest, reply: Pair[]): Promise<PolicyVerdict> {
    const accountId = input.network.account_id;
    const snapshot = await this.snapshot(accountId, input.network.id);
    if (!snapshot) return { accepted: true, reply, reason: null, policy: { id: null, name: "default" } };
    const { rule } = evaluate(snapshot.rules, await this.facts(accountId, snapshot, input));
    return this.verdict(accountId, rule, input.network, reply);
  }

  async verdict(
    accountId: number,
    rule: CompiledRule,
    network: PlanNetwork,
    reply: readonly Pair[],
  ): Promise<PolicyVerdict> {
    const policy = { id: rule.id, name: rule.name };
    if (rule.outcome.action === "reject")
      return { accepted: false, reply: [], reason: rule.outcome.reason ?? "rejected by policy", policy };
    return {
      accepted: true,
      reply: await this.outcomeReply(accountId, rule, network, reply),
      reason: null,
      policy,
    };
  }

  /** Explain: the evaluation with every rule passed over. */
  async explainEvaluation(
    snapshot: Snapshot,
    input: PolicyRequest,
  ): Promise<{ evaluation: Evaluation; facts: PolicyFacts }> {
    const facts = await this.facts(input.network.account_id, snapshot, input);
    return { evaluation: evaluate(snapshot.rules, facts, true), facts };
  }
}

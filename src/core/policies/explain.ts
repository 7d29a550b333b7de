// Explain: which rule a request with these facts would meet, why each earlier rule did not, and
// the reply attributes the Access-Accept would carry. Nothing is sent and nothing is recorded; the
// credential check is not made (the facts say who the user is, not whether the password is right).
import { authorize } from "../aaa/authorize.ts";
import { wireReply } from "../aaa/decide.ts";
import type { Pair } from "../aaa/pairs.ts";
import type { AuthMethod } from "../aaa/recording.ts";
import type { LoginRepo } from "../aaa/repo.ts";
import { normalizeMac } from "../aaa/stations.ts";
import type { PortalMethod } from "../portals/rules.ts";
import { unixNow } from "../shared/clock.ts";
import { type FieldProblem, NotFoundError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import type { PolicyEngine } from "./engine.ts";
import { localTime } from "./evaluate.ts";
import type { PoliciesRepo } from "./repo.ts";
import { AUTH_METHODS, PORTAL_METHODS } from "./rules.ts";

export interface ExplainFacts {
  username?: string | undefined;
  network_id: number;
  ssid?: string | undefined;
  nas_identifier?: string | undefined;
  method?: string | undefined;
  portal_method?: string | undefined;
  /** ISO 8601 date-time or Unix seconds; absent: now. */
  time?: string | number | undefined;
  /** The device's MAC (Calling-Station-Id). */
  mac?: string | undefined;
}

export interface Explanation {
  facts: {
    username: string | null;
    user_id: number | null;
    network_id: number;
    ssid: string | null;
    nas_identifier: string | null;
    method: string | null;
    portal_method: string | null;
    mac: string | null;
    device: "registered" | "unregistered";
    group_ids: number[];
    time: string;
    time_zone: string;
    local_time: string;
  };
  matched: { id: number | null; name: string; position: number; default: boolean };
  /** The rules before it, each with the first condition it failed. */
  skipped: {
    id: number;
    name: string;
    position: number;
    condition: string;
    expected: unknown;
    actual: unknown;
    message: string;
  }[];
  decision: "accept" | "reject";
  /** A reject's Reply-Message. */
  reason: string | null;
  /** What the Access-Accept would carry: the user's and groups' reply items with the outcome applied. */
  reply: { attribute: string; value: string }[];
}

function parseTime(value: string | number | undefined, now: number, problems: FieldProblem[]): number {
  if (value === undefined || value === "") return now;
  if (typeof value === "number" || /^\d{1,12}$/.test(value)) return Number(value);
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    problems.push({
      field: "time",
      message: "must be an ISO 8601 date-time (with its offset) or Unix seconds",
    });
    return now;
  }
  return Math.floor(ms / 1000);
}

const show = (v: unknown) => (v === null ? "nothing" : Array.isArray(v) ? `[${v.join(", ")}]` : String(v));

export class PolicyExplainer {
  clock: () => number = unixNow;

  constructor(
    private readonly engine: PolicyEngine,
    private readonly repo: PoliciesRepo,
    private readonly logins: LoginRepo,
  ) {}

  async explain(accountId: number, input: ExplainFacts): Promise<Explanation> {
    const problems: FieldProblem[] = [];
    const method = input.method || null;
    if (method !== null && !(AUTH_METHODS as readonly string[]).includes(method))
      problems.push({ field: "method", message: `must be one of ${AUTH_METHODS.join(", ")}` });
    const portalMethod = input.portal_method || null;
    if (portalMethod !== null && !(PORTAL_METHODS as readonly string[]).includes(portalMethod))
      problems.push({ field: "portal_method", message: `must be one of ${PORTAL_METHODS.join(", ")}` });
    const mac = input.mac ? normalizeMac(input.mac) : null;
    if (input.mac && !mac) problems.push({ field: "mac", message: "must be a MAC address" });
    const at = parseTime(input.time, this.clock(), problems);
    if (problems.length > 0)
      throw new ValidationError(problems.map((p) => `${p.field} ${p.message}`).join("; "), problems);
    const network = await this.repo.network(accountId, input.network_id);
    if (!network) throw new NotFoundError(`network ${input.network_id} not found`);
    const username = input.username?.trim() || null;
    const user = username === null ? undefined : await this.logins.findUser(accountId, username);
    const snapshot = (await this.engine.snapshot(accountId, network.id))!;
    const request = {
      network,
      ssid: input.ssid || null,
      nasIdentifier: input.nas_identifier || null,
      clientMac: mac,
      method: method as AuthMethod | null,
      username: username ?? "",
      userId: user?.id ?? null,
      now: at,
      portalMethod: portalMethod as PortalMethod | null,
    };
    const { evaluation, facts } = await this.engine.explainEvaluation(snapshot, request);
    const rule = evaluation.rule;
    let reply: Pair[] = [];
    if (username !== null)
      reply = wireReply(authorize([], await this.logins.userItems(accountId, username)).reply);
    const verdict = await this.engine.verdict(accountId, rule, network, reply);
    const finalReply =
      verdict.accepted &&
      network.interim_interval > 0 &&
      !verdict.reply.some((p) => p.attribute.toLowerCase() === "acct-interim-interval")
        ? [
            ...verdict.reply,
            { attribute: "Acct-Interim-Interval", op: "=", value: String(network.interim_interval) },
          ]
        : verdict.reply;
    return {
      facts: {
        username,
        user_id: user?.id ?? null,
        network_id: network.id,
        ssid: request.ssid,
        nas_identifier: request.nasIdentifier,
        method,
        portal_method: portalMethod,
        mac,
        device: facts.deviceRegistered ? "registered" : "unregistered",
        group_ids: [...facts.groupIds],
        time: isoNow(new Date(at * 1000)),
        time_zone: snapshot.timeZone,
        local_time: localTime(at, snapshot.timeZone).text,
      },
      matched: { id: rule.id, name: rule.name, position: rule.position, default: rule.id === null },
      skipped: (evaluation.misses ?? []).map(({ rule: r, miss }) => ({
        id: r.id!,
        name: r.name,
        position: r.position,
        condition: miss.condition,
        expected: miss.expected,
        actual: miss.actual,
        message: `${miss.condition}: needs ${show(miss.expected)}, the request has ${show(miss.actual)}`,
      })),
      decision: verdict.accepted ? "accept" : "reject",
      reason: verdict.reason,
      reply: finalReply.map((p) => ({ attribute: p.attribute, value: p.value })),
    };
  }
}

// What a valid policy looks like: its conditions and outcome, checked the same way for every door
// (the HTTP schemas reuse these limits). Checks that need the database (networks, groups and plans
// of the account) are the service's.
import type { AuthMethod } from "../aaa/recording.ts";
import { PORTAL_METHODS, type PortalMethod } from "../portals/rules.ts";
import type { FieldProblem } from "../shared/errors.ts";
import { hasControlCharacters } from "../shared/text.ts";

export const AUTH_METHODS = [
  "PAP",
  "CHAP",
  "MSCHAPv2",
  "PEAP",
  "TTLS",
  "TLS",
  "MAB",
] as const satisfies readonly AuthMethod[];
export const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Day = (typeof DAYS)[number];
export const DEVICE_STATES = ["registered", "unregistered"] as const;
export type DeviceState = (typeof DEVICE_STATES)[number];
export const ACTIONS = ["accept", "reject"] as const;
export type Action = (typeof ACTIONS)[number];
export { PORTAL_METHODS };

export const MAX_POLICY_NAME = 100;
export const MAX_POLICY_DESCRIPTION = 200;
/** Rules per account: every login evaluates the list, and the shadow check compares every pair. */
export const MAX_POLICIES = 500;
/** Values in one condition, and the length of each text value. */
export const MAX_CONDITION_VALUES = 100;
export const MAX_VALUE_LENGTH = 253;
export const MAX_REASON = 200;
export const MAX_AVPAIRS = 20;
/** A Session-Timeout or Idle-Timeout (RFC 2865 sections 5.27, 5.28) of at most a year. */
export const MAX_TIMEOUT = 366 * 86_400;
/** "HH:MM-HH:MM", 24:00 allowed as an end; a start after the end runs over midnight. */
export const TIME_RANGE = /^([01]\d|2[0-3]):([0-5]\d)-(([01]\d|2[0-3]):([0-5]\d)|24:00)$/;

/** All given conditions must hold; within one, any listed value matches. Absent: any request. */
export interface PolicyConditions {
  networks?: number[];
  /** From Called-Station-Id (RFC 3580 section 3.20): exact, or a glob with * and ?. Case-sensitive. */
  ssids?: string[];
  /** Exact, or a glob with * and ?. */
  nas_identifiers?: string[];
  /** Group ids: the user is in one of them. */
  groups?: number[];
  methods?: AuthMethod[];
  /** How a captive portal guest signed in just before this login (a pending portal sign-in). */
  portal_methods?: PortalMethod[];
  days?: Day[];
  times?: string[];
  device?: DeviceState;
}

export interface PolicyOutcome {
  action: Action;
  /** Reject: the Access-Reject's Reply-Message and the auth log's reason. */
  reason?: string;
  /** RFC 3580 section 3.31: 1-4094. */
  vlan?: number;
  filter_id?: string;
  aruba_user_role?: string;
  airespace_acl_name?: string;
  cisco_avpairs?: string[];
  /** A plan of the account (src/core/plans, through PlanReplies). */
  plan_id?: number;
  session_timeout?: number;
  idle_timeout?: number;
}

export const CONDITION_KEYS = [
  "networks",
  "ssids",
  "nas_identifiers",
  "groups",
  "methods",
  "portal_methods",
  "days",
  "times",
  "device",
] as const satisfies readonly (keyof PolicyConditions)[];
export type ConditionKey = (typeof CONDITION_KEYS)[number];

export const DEFAULT_OUTCOME: PolicyOutcome = { action: "accept" };
export const DEFAULT_POLICY_NAME = "default";

/** The time zone's canonical IANA name, or null when Intl does not know it. */
export function canonicalTimeZone(name: string): string | null {
  if (name.length === 0 || name.length > 64) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

export function timeZoneProblem(name: string): string | null {
  return canonicalTimeZone(name) === null
    ? `must be an IANA time zone name (e.g. Europe/Paris, America/New_York, UTC); "${name.slice(0, 64)}" is not one`
    : null;
}

const cleanText = (v: unknown, max: number) =>
  typeof v === "string" && v.length > 0 && v.length <= max && !hasControlCharacters(v);

function listOf<T>(
  problems: FieldProblem[],
  field: string,
  value: unknown,
  check: (item: unknown) => item is T,
  rule: string,
): T[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_CONDITION_VALUES) {
    problems.push({
      field,
      message: `must list 1 to ${MAX_CONDITION_VALUES} values (omit the condition to match any request)`,
    });
    return undefined;
  }
  const bad = value.find((item) => !check(item));
  if (bad !== undefined) {
    problems.push({ field, message: `${rule}; ${JSON.stringify(bad)?.slice(0, 80)} is not` });
    return undefined;
  }
  return [...new Set(value as T[])];
}

const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;
const isText = (v: unknown): v is string => cleanText(v, MAX_VALUE_LENGTH);
const oneOf =
  <T extends string>(values: readonly T[]) =>
  (v: unknown): v is T =>
    typeof v === "string" && (values as readonly string[]).includes(v);

/** The conditions with duplicates removed, or the problems (field names prefixed "conditions."). */
export function checkConditions(input: unknown, problems: FieldProblem[]): PolicyConditions {
  const out: PolicyConditions = {};
  if (input === undefined || input === null) return out;
  if (typeof input !== "object" || Array.isArray(input)) {
    problems.push({ field: "conditions", message: "must be an object" });
    return out;
  }
  const c = input as Record<string, unknown>;
  const unknownKey = Object.keys(c).find((k) => !(CONDITION_KEYS as readonly string[]).includes(k));
  if (unknownKey) problems.push({ field: `conditions.${unknownKey}`, message: "is not a condition" });
  const f = (k: string) => `conditions.${k}`;
  const set = <K extends keyof PolicyConditions>(key: K, value: PolicyConditions[K] | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  set("networks", listOf(problems, f("networks"), c.networks, isId, "must be network ids"));
  set("ssids", listOf(problems, f("ssids"), c.ssids, isText, "must be SSIDs or globs (* and ?)"));
  set(
    "nas_identifiers",
    listOf(problems, f("nas_identifiers"), c.nas_identifiers, isText, "must be NAS-Identifiers or globs"),
  );
  set("groups", listOf(problems, f("groups"), c.groups, isId, "must be group ids"));
  set(
    "methods",
    listOf(problems, f("methods"), c.methods, oneOf(AUTH_METHODS), `must be of ${AUTH_METHODS.join(", ")}`),
  );
  set(
    "portal_methods",
    listOf(
      problems,
      f("portal_methods"),
      c.portal_methods,
      oneOf(PORTAL_METHODS),
      `must be of ${PORTAL_METHODS.join(", ")}`,
    ),
  );
  set("days", listOf(problems, f("days"), c.days, oneOf(DAYS), `must be of ${DAYS.join(", ")}`));
  const times = listOf(
    problems,
    f("times"),
    c.times,
    (v): v is string => typeof v === "string" && TIME_RANGE.test(v) && v.slice(0, 5) !== v.slice(6),
    'must be "HH:MM-HH:MM" ranges (a start after the end runs over midnight; start and end differ)',
  );
  set("times", times);
  if (c.device !== undefined && c.device !== null) {
    if (oneOf(DEVICE_STATES)(c.device)) out.device = c.device;
    else problems.push({ field: f("device"), message: `must be ${DEVICE_STATES.join(" or ")}` });
  }
  return out;
}

const OUTCOME_KEYS = [
  "action",
  "reason",
  "vlan",
  "filter_id",
  "aruba_user_role",
  "airespace_acl_name",
  "cisco_avpairs",
  "plan_id",
  "session_timeout",
  "idle_timeout",
] as const;

/** The outcome, or the problems (field names prefixed "outcome."). */
export function checkOutcome(input: unknown, problems: FieldProblem[]): PolicyOutcome {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    problems.push({ field: "outcome", message: "must be an object with an action (accept or reject)" });
    return DEFAULT_OUTCOME;
  }
  const o = input as Record<string, unknown>;
  const f = (k: string) => `outcome.${k}`;
  const unknownKey = Object.keys(o).find((k) => !(OUTCOME_KEYS as readonly string[]).includes(k));
  if (unknownKey) problems.push({ field: f(unknownKey), message: "is not an outcome field" });
  if (!oneOf(ACTIONS)(o.action)) {
    problems.push({ field: f("action"), message: "must be accept or reject" });
    return DEFAULT_OUTCOME;
  }
  const given = (k: string) => o[k] !== undefined && o[k] !== null;
  if (o.action === "reject") {
    const extra = OUTCOME_KEYS.find((k) => k !== "action" && k !== "reason" && given(k));
    if (extra) problems.push({ field: f(extra), message: "is for accept outcomes only" });
    if (given("reason") && !cleanText(o.reason, MAX_REASON)) {
      problems.push({
        field: f("reason"),
        message: `must be 1 to ${MAX_REASON} characters without control characters`,
      });
    }
    return { action: "reject", reason: given("reason") ? String(o.reason) : "rejected by policy" };
  }
  if (given("reason")) problems.push({ field: f("reason"), message: "is for reject outcomes only" });
  const out: PolicyOutcome = { action: "accept" };
  const integer = (k: "vlan" | "plan_id" | "session_timeout" | "idle_timeout", min: number, max: number) => {
    if (!given(k)) return;
    const v = o[k];
    if (Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max) out[k] = v as number;
    else problems.push({ field: f(k), message: `must be an integer from ${min} to ${max}` });
  };
  // RFC 3580 section 3.31 / IEEE 802.1Q: VLAN ids 0 and 4095 are reserved.
  integer("vlan", 1, 4094);
  integer("plan_id", 1, 2 ** 31 - 1);
  integer("session_timeout", 1, MAX_TIMEOUT);
  integer("idle_timeout", 1, MAX_TIMEOUT);
  for (const k of ["filter_id", "aruba_user_role", "airespace_acl_name"] as const) {
    if (!given(k)) continue;
    if (cleanText(o[k], MAX_VALUE_LENGTH)) out[k] = o[k] as string;
    else
      problems.push({
        field: f(k),
        message: `must be 1 to ${MAX_VALUE_LENGTH} characters without control characters`,
      });
  }
  if (given("cisco_avpairs")) {
    const v = o.cisco_avpairs;
    if (
      Array.isArray(v) &&
      v.length >= 1 &&
      v.length <= MAX_AVPAIRS &&
      v.every((p) => isText(p) && /^[^=\s]+[=*]/.test(p as string))
    ) {
      out.cisco_avpairs = v as string[];
    } else {
      problems.push({
        field: f("cisco_avpairs"),
        message: `must list 1 to ${MAX_AVPAIRS} "name=value" pairs (e.g. "ip:inacl#1=deny ip any any")`,
      });
    }
  }
  return out;
}

/** A policy's name: trimmed, 1-100 characters, not the default rule's. */
export function checkName(input: unknown, problems: FieldProblem[]): string {
  const name = typeof input === "string" ? input.trim() : "";
  if (!cleanText(name, MAX_POLICY_NAME) || name.toLowerCase() === DEFAULT_POLICY_NAME) {
    problems.push({
      field: "name",
      message: `must be 1 to ${MAX_POLICY_NAME} characters without control characters, not "default"`,
    });
  }
  return name;
}

export function checkDescription(input: unknown, problems: FieldProblem[]): string {
  const text = typeof input === "string" ? input : "";
  if (text.length > MAX_POLICY_DESCRIPTION || hasControlCharacters(text)) {
    problems.push({
      field: "description",
      message: `must be at most ${MAX_POLICY_DESCRIPTION} characters without control characters`,
    });
  }
  return text;
}

// Policy evaluation, pure: a compiled list of rules, the facts of one request, first match wins.
// The facts that need the database (groups, device, portal sign-in) are gathered by the caller,
// and only when a rule of the list asks for them (see neededFacts).
import type { AuthMethod } from "../aaa/recording.ts";
import type { PortalMethod } from "../portals/rules.ts";
import {
  CONDITION_KEYS,
  type ConditionKey,
  DAYS,
  type Day,
  DEFAULT_POLICY_NAME,
  type PolicyConditions,
  type PolicyOutcome,
} from "./rules.ts";

/** A rule as evaluation needs it; the default rule has id null and comes last. */
export interface PolicyRule {
  id: number | null;
  name: string;
  position: number;
  conditions: PolicyConditions;
  outcome: PolicyOutcome;
}

/** A rule with its matchers built once (globs as regular expressions, times as minute ranges). */
export interface CompiledRule extends PolicyRule {
  ssids?: RegExp[];
  nasIdentifiers?: RegExp[];
  /** [start, end) in minutes of the day; a range over midnight is two. */
  minutes?: [number, number][];
}

/** One request, as the conditions see it. Time is local to the network's (else account's) zone. */
export interface PolicyFacts {
  networkId: number | null;
  ssid: string | null;
  nasIdentifier: string | null;
  groupIds: readonly number[];
  method: AuthMethod | null;
  portalMethod: PortalMethod | null;
  day: Day;
  /** Minutes since local midnight. */
  minute: number;
  deviceRegistered: boolean;
}

/** Why a rule did not match: the first condition that failed, what it wanted and what it saw. */
export interface Miss {
  condition: ConditionKey;
  expected: unknown;
  actual: unknown;
}

export interface Evaluation {
  rule: CompiledRule;
  /** Explain only: every earlier rule with the condition that failed. */
  misses?: { rule: CompiledRule; miss: Miss }[];
}

/** "*" any run, "?" one character; everything else literal. Case-sensitive (SSIDs are octets). */
export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\*?]/g, (c) => (c === "*" ? ".*" : c === "?" ? "." : `\\${c}`));
  return new RegExp(`^${body}$`, "s");
}

export const isGlob = (value: string) => /[*?]/.test(value);

/** "22:00-06:00" -> [[1320, 1440], [0, 360]]. */
export function minuteRanges(times: readonly string[]): [number, number][] {
  const out: [number, number][] = [];
  for (const range of times) {
    const [from, to] = range.split("-").map((t) => {
      const [h, m] = t.split(":").map(Number);
      return h! * 60 + m!;
    }) as [number, number];
    if (from < to) out.push([from, to]);
    else {
      out.push([from, 1440]);
      if (to > 0) out.push([0, to]);
    }
  }
  return out;
}

export function compile(rule: PolicyRule): CompiledRule {
  const c = rule.conditions;
  return {
    ...rule,
    ...(c.ssids ? { ssids: c.ssids.map(globToRegExp) } : {}),
    ...(c.nas_identifiers ? { nasIdentifiers: c.nas_identifiers.map(globToRegExp) } : {}),
    ...(c.times ? { minutes: minuteRanges(c.times) } : {}),
  };
}

export function defaultRule(outcome: PolicyOutcome, position: number): CompiledRule {
  return { id: null, name: DEFAULT_POLICY_NAME, position, conditions: {}, outcome };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

type LocalTime = Readonly<{ day: Day; minute: number; text: string }>;

/**
 * Each zone's answer for the last UTC minute asked: formatToParts costs about 5 µs, and every login
 * of a minute asks the same. Zone offsets of dates from 1972 on are whole minutes, so one UTC minute
 * is one local minute (earlier dates, only ever asked by explain, are formatted each time).
 */
const WHOLE_MINUTE_OFFSETS_FROM = 63_072_000; // 1972-01-01T00:00:00Z
const lastMinute = new Map<string, { utcMinute: number; local: LocalTime }>();

/** The weekday and minute of the day at Unix `seconds` in IANA zone `timeZone`. */
export function localTime(seconds: number, timeZone: string): LocalTime {
  if (seconds < WHOLE_MINUTE_OFFSETS_FROM) return formatLocalTime(seconds, timeZone);
  const utcMinute = Math.floor(seconds / 60);
  const last = lastMinute.get(timeZone);
  if (last?.utcMinute === utcMinute) return last.local;
  const local = Object.freeze(formatLocalTime(seconds, timeZone));
  if (lastMinute.size >= 1000) lastMinute.clear();
  lastMinute.set(timeZone, { utcMinute, local });
  return local;
}

function formatLocalTime(seconds: number, timeZone: string): LocalTime {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timeZone, format);
  }
  const parts = format.formatToParts(new Date(seconds * 1000));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const day = part("weekday").toLowerCase().slice(0, 3) as Day;
  const hour = Number(part("hour"));
  const minute = Number(part("minute"));
  return {
    day: DAYS.includes(day) ? day : "mon",
    minute: hour * 60 + minute,
    text: `${part("weekday")} ${part("hour")}:${part("minute")} ${timeZone}`,
  };
}

/** The first condition of `rule` the facts fail, or null when all hold. Cheap checks first. */
export function missOf(rule: CompiledRule, f: PolicyFacts): Miss | null {
  const c = rule.conditions;
  if (c.networks && (f.networkId === null || !c.networks.includes(f.networkId)))
    return { condition: "networks", expected: c.networks, actual: f.networkId };
  if (c.methods && (f.method === null || !c.methods.includes(f.method)))
    return { condition: "methods", expected: c.methods, actual: f.method };
  if (rule.ssids && (f.ssid === null || !rule.ssids.some((r) => r.test(f.ssid!))))
    return { condition: "ssids", expected: c.ssids, actual: f.ssid };
  if (
    rule.nasIdentifiers &&
    (f.nasIdentifier === null || !rule.nasIdentifiers.some((r) => r.test(f.nasIdentifier!)))
  )
    return { condition: "nas_identifiers", expected: c.nas_identifiers, actual: f.nasIdentifier };
  if (c.days && !c.days.includes(f.day)) return { condition: "days", expected: c.days, actual: f.day };
  if (rule.minutes && !rule.minutes.some(([from, to]) => f.minute >= from && f.minute < to)) {
    const hhmm = `${String(Math.floor(f.minute / 60)).padStart(2, "0")}:${String(f.minute % 60).padStart(2, "0")}`;
    return { condition: "times", expected: c.times, actual: hhmm };
  }
  if (c.groups && !c.groups.some((g) => f.groupIds.includes(g)))
    return { condition: "groups", expected: c.groups, actual: [...f.groupIds] };
  if (c.device && (c.device === "registered") !== f.deviceRegistered)
    return {
      condition: "device",
      expected: c.device,
      actual: f.deviceRegistered ? "registered" : "unregistered",
    };
  if (c.portal_methods && (f.portalMethod === null || !c.portal_methods.includes(f.portalMethod)))
    return { condition: "portal_methods", expected: c.portal_methods, actual: f.portalMethod };
  return null;
}

/**
 * First match wins over `rules` (the default last: it has no conditions, so something always
 * matches). With `explain`, every rule passed over is listed with the condition it failed.
 */
export function evaluate(rules: readonly CompiledRule[], facts: PolicyFacts, explain = false): Evaluation {
  const misses: { rule: CompiledRule; miss: Miss }[] = [];
  for (const rule of rules) {
    const miss = missOf(rule, facts);
    if (miss === null) return explain ? { rule, misses } : { rule };
    if (explain) misses.push({ rule, miss });
  }
  throw new Error("a policy list without its default rule");
}

/** Which facts that cost a query the list needs (none for most lists: no query then). */
export function neededFacts(rules: readonly PolicyRule[]): {
  groups: boolean;
  device: boolean;
  portal: boolean;
} {
  return {
    groups: rules.some((r) => r.conditions.groups !== undefined),
    device: rules.some((r) => r.conditions.device !== undefined),
    portal: rules.some((r) => r.conditions.portal_methods !== undefined),
  };
}

export const conditionKeysOf = (c: PolicyConditions) => CONDITION_KEYS.filter((k) => c[k] !== undefined);

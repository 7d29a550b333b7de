// Time and data quotas. Time: FreeRADIUS's rlm_sqlcounter dailycounter and monthlycounter
// (Max-Daily-Session, Max-Monthly-Session; Max-All-Session is decide.ts's noresetcounter), with its
// semantics: seconds of the sessions that overlap the period (a session that began before the reset
// counts only its part after it), the period in the server's local time, Session-Timeout capped at
// what remains or, when that reaches past the reset, at the time to the reset plus a whole limit.
// Data: Wisp's own check items (dictionary.wisp), octets in plus out of the sessions that started in
// the period, sent as what remains in the attributes gateways enforce.
import { firstValue, type Pair } from "./pairs.ts";

export type Period = "day" | "month" | "all";

export const TIME_QUOTAS = [
  { attribute: "Max-Daily-Session", period: "day" },
  { attribute: "Max-Monthly-Session", period: "month" },
] as const;

export const DATA_QUOTAS = [
  { attribute: "Wisp-Max-Daily-Octets", period: "day" },
  { attribute: "Wisp-Max-Monthly-Octets", period: "month" },
  { attribute: "Wisp-Max-All-Octets", period: "all" },
] as const;

/** Every quota check item (the time ones of FreeRADIUS included), lower-cased. */
export const QUOTA_ATTRIBUTES = new Set(
  ["Max-All-Session", ...TIME_QUOTAS.map((q) => q.attribute), ...DATA_QUOTAS.map((q) => q.attribute)].map(
    (a) => a.toLowerCase(),
  ),
);

/** Ten years of seconds, and 2^53 - 1 octets (8 PiB): anything above is a typing error. */
export const MAX_QUOTA_SECONDS = 315_360_000;
export const MAX_QUOTA_OCTETS = Number.MAX_SAFE_INTEGER;

/** The problem with a quota value (for the attribute rules), or null; other attributes: null. */
export function quotaValueProblem(attribute: string, value: string): string | null {
  const name = attribute.toLowerCase();
  if (!QUOTA_ATTRIBUTES.has(name)) return null;
  const octets = name.startsWith("wisp-");
  const max = octets ? MAX_QUOTA_OCTETS : MAX_QUOTA_SECONDS;
  if (!/^\d{1,16}$/.test(value) || Number(value) > max) {
    return `must be a whole number of ${octets ? "octets" : "seconds"} from 0 to ${max}`;
  }
  return null;
}

/** The start of the period holding `now` (Unix seconds), in local time as rlm_sqlcounter resets. */
export function periodStart(period: Period, now: number): number {
  if (period === "all") return 0;
  const d = new Date(now * 1000);
  const start =
    period === "day"
      ? new Date(d.getFullYear(), d.getMonth(), d.getDate())
      : new Date(d.getFullYear(), d.getMonth(), 1);
  return Math.floor(start.getTime() / 1000);
}

/** The next reset after `now`: rlm_sqlcounter's reset_time. */
export function periodEnd(period: Period, now: number): number {
  const d = new Date(now * 1000);
  const end =
    period === "day"
      ? new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1)
      : new Date(d.getFullYear(), d.getMonth() + 1, 1);
  return Math.floor(end.getTime() / 1000);
}

export interface QuotaCounters {
  /** rlm_sqlcounter's overlap sum: seconds of the sessions after `since`. */
  sessionTimeSince(since: number): Promise<number>;
  /** Octets in plus out of the sessions started at or after `since` (0: all). */
  octetsSince(since: number): Promise<number>;
}

export interface QuotaLimit {
  attribute: string;
  period: Period;
  limit: number;
}

function integer(pairs: readonly Pair[], attribute: string): number | undefined {
  const value = firstValue(pairs, attribute);
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** The data quotas among the control items. */
export function dataLimits(control: readonly Pair[]): QuotaLimit[] {
  const limits: QuotaLimit[] = [];
  for (const q of DATA_QUOTAS) {
    const limit = integer(control, q.attribute);
    if (limit !== undefined) limits.push({ ...q, limit });
  }
  return limits;
}

/** Whether the control items hold any quota the accounting path must watch. */
export function hasQuota(control: readonly Pair[]): boolean {
  return control.some((p) => QUOTA_ATTRIBUTES.has(p.attribute.toLowerCase()));
}

/** Sets `attribute` in the reply to at most `value` (added when absent). */
export function capReply(reply: Pair[], attribute: string, value: number): Pair[] {
  const index = reply.findIndex((p) => p.attribute.toLowerCase() === attribute.toLowerCase());
  if (index < 0) return [...reply, { attribute, op: "=", value: String(value) }];
  const current = Number(reply[index]!.value);
  if (Number.isFinite(current) && current <= value) return reply;
  const next = [...reply];
  next[index] = { ...reply[index]!, value: String(value) };
  return next;
}

const GIGAWORD = 2 ** 32;

/**
 * What remains of a data quota, in the attributes gateways enforce: CoovaChilli's
 * ChilliSpot-Max-Total-Octets (32 bits: at most 4 GiB - 1 here; Wisp's Interim-Update check cuts
 * the rest) and MikroTik's Mikrotik-Total-Limit with Mikrotik-Total-Limit-Gigawords.
 */
export function dataReply(reply: Pair[], remaining: number): Pair[] {
  let next = capReply(reply, "ChilliSpot-Max-Total-Octets", Math.min(remaining, GIGAWORD - 1));
  const existing = ["Mikrotik-Total-Limit", "Mikrotik-Total-Limit-Gigawords"].map(
    (a) => integer(next, a) ?? 0,
  );
  const already = existing[0]! + existing[1]! * GIGAWORD;
  if (already > 0 && already <= remaining) return next;
  next = next.filter((p) => !/^mikrotik-total-limit(-gigawords)?$/i.test(p.attribute));
  next.push({ attribute: "Mikrotik-Total-Limit", op: "=", value: String(remaining % GIGAWORD) });
  if (remaining >= GIGAWORD) {
    next.push({
      attribute: "Mikrotik-Total-Limit-Gigawords",
      op: "=",
      value: String(Math.floor(remaining / GIGAWORD)),
    });
  }
  return next;
}

export type QuotaVerdict = { accepted: true; reply: Pair[] } | { accepted: false; reason: string };

/**
 * The daily and monthly time counters and the data quotas at login: a quota used up rejects
 * ("quota exhausted"); otherwise the reply carries what remains.
 */
export async function applyQuotas(
  control: readonly Pair[],
  reply: Pair[],
  counters: QuotaCounters,
  now: number,
): Promise<QuotaVerdict> {
  for (const q of TIME_QUOTAS) {
    const limit = integer(control, q.attribute);
    if (limit === undefined) continue;
    const used = await counters.sessionTimeSince(periodStart(q.period, now));
    if (limit <= used)
      return { accepted: false, reason: `quota exhausted: ${q.period === "day" ? "daily" : "monthly"} time` };
    let remaining = limit - used;
    // rlm_sqlcounter: near a reset, the next period's allowance is added so the session goes on.
    const toReset = periodEnd(q.period, now) - now;
    if (remaining >= toReset) remaining = toReset + limit;
    reply = capReply(reply, "Session-Timeout", remaining);
  }
  let smallest: number | undefined;
  for (const q of dataLimits(control)) {
    const used = await counters.octetsSince(periodStart(q.period, now));
    const name = { day: "daily", month: "monthly", all: "total" }[q.period];
    if (q.limit <= used) return { accepted: false, reason: `quota exhausted: ${name} data` };
    smallest = Math.min(smallest ?? Number.POSITIVE_INFINITY, q.limit - used);
  }
  if (smallest !== undefined) reply = dataReply(reply, smallest);
  return { accepted: true, reply };
}

/** What a user's sessions used, per period: seconds (sqlcounter's way) and octets. */
export interface Usage {
  time: Record<Period, number>;
  octets: Record<Period, number>;
}

/** Whether a quota is used up (the Interim-Update check); the reason, or null. */
export function exhaustedQuota(control: readonly Pair[], usage: Usage): string | null {
  const maxAll = integer(control, "Max-All-Session");
  if (maxAll !== undefined && maxAll <= usage.time.all) return "quota exhausted: total time";
  for (const q of TIME_QUOTAS) {
    const limit = integer(control, q.attribute);
    if (limit !== undefined && limit <= usage.time[q.period]) {
      return `quota exhausted: ${q.period === "day" ? "daily" : "monthly"} time`;
    }
  }
  for (const q of dataLimits(control)) {
    if (q.limit <= usage.octets[q.period]) {
      return `quota exhausted: ${{ day: "daily", month: "monthly", all: "total" }[q.period]} data`;
    }
  }
  return null;
}

// What a valid webhook endpoint looks like, which events it can subscribe to, and when a failed
// delivery is tried again.
import type { EventKind } from "../events/repo.ts";

/** Every kind an endpoint can subscribe to: the events table's kinds. */
export const EVENT_KINDS = [
  "user.authenticated",
  "user.rejected",
  "user.created",
  "user.updated",
  "user.deleted",
  "guest.registered",
  "device.created",
  "device.updated",
  "device.deleted",
  "guest.verified",
  "guest.sponsor_requested",
  "guest.approved",
  "guest.denied",
  "voucher.activated",
  "session.started",
  "session.stopped",
  "session.disconnected",
  "session.coa",
  "report.ready",
  "audit.created",
  "audit.updated",
  "audit.deleted",
] as const satisfies readonly EventKind[];
// Fails to compile when events/repo.ts gains a kind this list lacks.
type Missing = Exclude<EventKind, (typeof EVENT_KINDS)[number]>;
export const EVERY_KIND_LISTED: [Missing] extends [never] ? true : Missing = true;

/** Sent only by `webhooks test`, to the one endpoint tested; never fanned out. */
export const TEST_EVENT = "webhook.test";

/** Stored for "all kinds", including kinds added later. */
export const ALL_KINDS = "*";

export const MAX_URL = 2048;

/** Standard Webhooks: whsec_ + base64 of the key; 32 random bytes = an HMAC-SHA256 block's worth. */
export const SECRET_PREFIX = "whsec_";
export const SECRET_BYTES = 32;

/** About 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: then the delivery is failed (8 attempts). */
export const DEFAULT_RETRY_SCHEDULE_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** A receiver's Retry-After is honoured when longer than the schedule's delay, up to this. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** Whole request, connect to last body byte. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** How much of a response body each attempt keeps. */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** Syntax only: a URL's addresses are checked at every delivery, when it is resolved. */
export function checkUrl(text: string): string | null {
  const problem = "must be an absolute http:// or https:// URL";
  if (text.length > MAX_URL) return `must be at most ${MAX_URL} characters`;
  if (/\s/.test(text)) return `${problem} without spaces`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return problem;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return problem;
  if (!url.hostname) return problem;
  if (url.username || url.password) return "must not contain credentials (user:password@)";
  if (url.hash || text.includes("#")) return "must not contain a fragment (#...)";
  return null;
}

/** "all", "*" or a comma list of kinds; returns the stored form or a problem. */
export function parseKinds(input: string | readonly string[]): { kinds: string[] } | { problem: string } {
  const list = (typeof input === "string" ? input.split(",") : [...input])
    .map((k) => k.trim())
    .filter(Boolean);
  if (list.length === 0)
    return { problem: `must be "all" or a comma-separated list of: ${EVENT_KINDS.join(", ")}` };
  if (list.some((k) => k === "all" || k === ALL_KINDS)) {
    return list.length === 1 ? { kinds: [ALL_KINDS] } : { problem: '"all" stands alone' };
  }
  const unknown = list.filter((k) => !(EVENT_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    return { problem: `unknown event kind ${unknown.join(", ")}; known: ${EVENT_KINDS.join(", ")}` };
  }
  return { kinds: [...new Set(list)].sort() };
}

/** Audit kinds go only to endpoints that name them: "all" predates them and would double every change. */
export function subscribes(kinds: readonly string[], kind: string): boolean {
  if (kind === TEST_EVENT) return false;
  if (kind.startsWith("audit.")) return kinds.includes(kind);
  return kinds.includes(ALL_KINDS) || kinds.includes(kind);
}

/** The delay before try number `tries + 1`, or null when the schedule is spent. */
export function retryDelay(
  schedule: readonly number[],
  tries: number,
  retryAfterMs: number | undefined,
): number | null {
  const step = schedule[tries - 1];
  if (step === undefined) return null;
  return Math.max(step, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}

/** ISO 8601 UTC with second precision and a Z, the one timestamp format Wisp stores and returns. */
export function isoNow(now: Date = new Date()): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

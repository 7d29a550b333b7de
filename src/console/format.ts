// How the console writes times, durations and counts for people.

/** "2025-03-01 14:05 UTC" from an ISO 8601 UTC timestamp; "—" for none. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const match = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

const UNITS: [number, string][] = [
  [86_400, "day"],
  [3_600, "hour"],
  [60, "minute"],
  [1, "second"],
];

/** "1 day", "2 hours 30 minutes", "45 seconds": the two largest whole units. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return "—";
  const parts: string[] = [];
  let rest = seconds;
  for (const [size, name] of UNITS) {
    if (parts.length === 2) break;
    const count = Math.floor(rest / size);
    if (count > 0) {
      parts.push(plural(count, name));
      rest -= count * size;
    } else if (parts.length > 0) break;
  }
  return parts.length > 0 ? parts.join(" ") : "0 seconds";
}

export function plural(count: number, noun: string): string {
  return `${count.toLocaleString("en-US")} ${noun}${count === 1 ? "" : "s"}`;
}

export const helpers = { when, duration, plural };
export type Helpers = typeof helpers;

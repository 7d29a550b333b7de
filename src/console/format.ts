// How the console writes times, durations, counts, sizes and role names for people.
import { roleLabel } from "../core/admins/roles.ts";

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

const BYTE_UNITS = ["KB", "MB", "GB", "TB", "PB"];

/**
 * "512 bytes", "1.7 MB", "8.1 MB", "12 GB": one decimal under 10 of a unit, whole above. Units of
 * 1024, as the rest of the console counts them (a logo's "512 KB").
 */
export function bytes(count: number | null | undefined): string {
  if (count === null || count === undefined) return "—";
  if (count < 1024) return plural(count, "byte");
  let value = count;
  let unit = "";
  for (const next of BYTE_UNITS) {
    value /= 1024;
    unit = next;
    if (value < 1023.5) break; // not "1,024 MB": that is 1.0 GB
  }
  const shown = value < 9.95 ? value.toFixed(1) : Math.round(value).toLocaleString("en-US");
  return `${shown} ${unit}`;
}

export const helpers = { when, duration, plural, bytes, roleLabel };
export type Helpers = typeof helpers;

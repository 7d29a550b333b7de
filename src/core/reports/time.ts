// Report time expressions, after Splunk's: `now`; relative terms `[+-]<n><unit>` and snaps
// `@<unit>` applied left to right (`-7d@w0`, `-1d@d+8h`); absolute `YYYY-MM-DD`,
// `YYYY-MM-DDTHH:MM:SSZ` (an offset such as +02:00 instead of Z is accepted too) and Unix seconds.
// Everything is UTC and resolves to whole Unix seconds.
//
// Rows are stamped with whole seconds, so `now` is the end of the current second (the start of
// the next): `latest=now` includes what was recorded this very second. Relative times move that
// second and end with it (`-4h` to `now` is exactly 4 hours); a snap goes back to the start of the
// unit holding it (`@d` in the day's last second is still today). Explicit times are exact.
//
// Months and years keep the day of the month and clamp it to the target month's last day:
// -1mon from March 31 is February 28 (29 in leap years), +1y from February 29 is February 28.

export const TIME_FORMS =
  "now; a relative time such as -4h, -24h, -1d@d, -7d@w0, -1mon@mon, +1h (units s m h d w mon y, " +
  "snaps @s @m @h @d @w0-@w6 @mon @y); YYYY-MM-DD; YYYY-MM-DDTHH:MM:SSZ; or Unix seconds";

/** 9999-12-31T23:59:59Z: the last second an ISO 8601 timestamp of four-digit years can name. */
export const MAX_SECONDS = 253_402_300_799;

export class TimeExpressionError extends Error {}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
const TERM = /([+-])(\d{0,9})(mon|[smhdwy])|@(mon|w[0-6]?|[smhdy])/y;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

function fail(text: string): never {
  throw new TimeExpressionError(`"${text}" is not a time expression; use ${TIME_FORMS}`);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** Adds whole months, clamping the day to the target month's length; the time of day stays. */
export function addMonths(date: Date, months: number): Date {
  const total = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const day = Math.min(date.getUTCDate(), daysInMonth(year, month));
  const result = new Date(date.getTime());
  // Set day 1 first so that an intermediate month without this day cannot overflow.
  result.setUTCDate(1);
  result.setUTCFullYear(year, month, day);
  return result;
}

function snap(date: Date, unit: string): Date {
  const d = new Date(date.getTime());
  switch (unit) {
    case "s":
      d.setUTCMilliseconds(0);
      return d;
    case "m":
      d.setUTCSeconds(0, 0);
      return d;
    case "h":
      d.setUTCMinutes(0, 0, 0);
      return d;
    case "d":
      d.setUTCHours(0, 0, 0, 0);
      return d;
    case "mon":
      return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
    case "y":
      return new Date(Date.UTC(d.getUTCFullYear(), 0, 1));
    default: {
      // @w and @w0 are Sunday, @w1 Monday ... @w6 Saturday: back to the latest such day's start.
      const weekday = unit === "w" ? 0 : Number(unit.slice(1));
      d.setUTCHours(0, 0, 0, 0);
      d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() - weekday + 7) % 7));
      return d;
    }
  }
}

function relative(text: string, now: Date): Date {
  let at = new Date(now.getTime());
  TERM.lastIndex = 0;
  while (TERM.lastIndex < text.length) {
    const match = TERM.exec(text);
    if (!match) fail(text);
    const [, sign, digits, unit, snapUnit] = match;
    if (snapUnit !== undefined) {
      at = snap(at, snapUnit);
      continue;
    }
    const n = (digits === "" ? 1 : Number(digits)) * (sign === "-" ? -1 : 1);
    if (unit === "mon") at = addMonths(at, n);
    else if (unit === "y") at = addMonths(at, n * 12);
    else at = new Date(at.getTime() + n * UNIT_SECONDS[unit!]! * 1000);
    if (Number.isNaN(at.getTime())) fail(text);
  }
  return at;
}

function calendar(text: string, year: string, month: string, day: string): Date {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  date.setUTCFullYear(Number(year));
  if (date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) fail(text);
  return date;
}

function absolute(text: string): Date | null {
  const date = DATE.exec(text);
  if (date) return calendar(text, date[1]!, date[2]!, date[3]!);
  const stamp = TIMESTAMP.exec(text);
  if (!stamp) return null;
  const [, year, month, day, hh, mm, ss, , zone] = stamp;
  if (Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) fail(text);
  const base = calendar(text, year!, month!, day!).getTime();
  let offset = 0;
  if (zone!.toUpperCase() !== "Z") {
    const [zh, zm] = zone!.slice(1).split(":").map(Number) as [number, number];
    if (zh > 23 || zm > 59) fail(text);
    offset = (zone![0] === "-" ? -1 : 1) * (zh * 60 + zm) * 60_000;
  }
  // Fractions of a second are dropped: report windows are whole seconds.
  return new Date(base + (Number(hh) * 3600 + Number(mm) * 60 + Number(ss)) * 1000 - offset);
}

/** Resolves a time expression against `now` to Unix seconds; throws TimeExpressionError. */
export function parseTime(input: string, now: Date = new Date()): number {
  const text = input.trim();
  // The current second's last millisecond: offsets keep it, snaps clear it, and rounding up then
  // gives the second's end, or the snapped boundary itself. Explicit times are whole seconds.
  const lastMs = new Date(Math.floor(now.getTime() / 1000) * 1000 + 999);
  let at: Date | null;
  if (text === "now") at = lastMs;
  else if (/^\d{1,12}$/.test(text)) at = new Date(Number(text) * 1000);
  else if (/^[+\-@]/.test(text)) at = relative(text, lastMs);
  else at = absolute(text);
  if (at === null) fail(text);
  const seconds = Math.ceil(at.getTime() / 1000);
  if (!(seconds >= 0 && seconds <= MAX_SECONDS)) {
    throw new TimeExpressionError(`"${text}" lies outside 1970-01-01 to 9999-12-31`);
  }
  return seconds;
}

const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, "0"));
let cachedDay = Number.NaN;
let cachedDate = "";

/**
 * Unix seconds as Wisp writes timestamps: 2026-11-25T21:16:18Z. Large reports format millions of
 * these, so the date part is kept from the previous call when the day is the same.
 */
export function isoSeconds(seconds: number): string {
  const day = Math.floor(seconds / 86_400);
  if (day !== cachedDay) {
    cachedDay = day;
    cachedDate = new Date(day * 86_400_000).toISOString().slice(0, 11);
  }
  const rest = seconds - day * 86_400;
  const hour = Math.floor(rest / 3600);
  const minute = Math.floor((rest % 3600) / 60);
  return `${cachedDate}${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[rest % 60]}Z`;
}

// Login-Time, FreeRADIUS 3.2's rlm_logintime check item (UUCP-style time strings such as
// `Wk0900-1700,Sa1000-1400`), read as src/modules/rlm_logintime/timestr.c reads it:
// - parts split on `,` or `|`, case-insensitive; a part is day codes then an optional HHMM-HHMM;
// - day codes Su Mo Tu We Th Fr Sa, Wk (Monday to Friday), Any and Al (every day), one after the
//   other (`MoWe`) or as a range (`Mo-Fr`, `Fr-Mo` wraps over the week end); no code: every day;
// - a time range covers its end minute too (0900-1700 allows 17:00-17:00:59), and wraps inside the
//   same day (`Al2200-0600`: 00:00-06:00 and 22:00-23:59 of each day); no range: the whole day;
// - the time left is counted in whole minutes from the current one (its seconds are not taken off)
//   and runs on into the next day's allowed minutes; a week allowed in full is unlimited.
// FreeRADIUS never refuses a string: what it cannot read it skips, or (a range ending in Wk, Any or
// Al) loops for ever. Wisp refuses, when the item is written, every string FreeRADIUS would not read
// as written (checkLoginTime), so a stored value means the same to both servers.

const DAY_MINUTES = 24 * 60;
const WEEK_MINUTES = 7 * DAY_MINUTES;

/** rlm_logintime's minimum_timeout (default 60, the lab's too): less time left is a reject. */
export const LOGIN_TIME_MIN_SECONDS = 60;

/** timestr.c's day codes in its matching order (`any` before `al`). 7: Wk; 8, 9: every day. */
const DAY_CODES = ["su", "mo", "tu", "we", "th", "fr", "sa", "wk", "any", "al"] as const;

// A range may only join two weekdays: timestr.c ignores the end after Wk, Any or Al.
const PART = /^((?:su|mo|tu|we|th|fr|sa)(?:-(?:su|mo|tu|we|th|fr|sa))?|wk|any|al)*(\d{4}-\d{4})?$/;
const DAY = /(su|mo|tu|we|th|fr|sa)(?:-(su|mo|tu|we|th|fr|sa))?|(wk|any|al)/g;

/** The days (0 = Sunday) one code or range stands for, as day_fill expands it. */
function daysOf(start: number, end: number): number[] {
  if (start === 7) return [1, 2, 3, 4, 5];
  if (start > 7) return [0, 1, 2, 3, 4, 5, 6];
  const days = [start];
  for (let n = start; n !== end; ) {
    n = (n + 1) % 7;
    days.push(n);
  }
  return days;
}

function minuteOf(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(2));
}

/** Why FreeRADIUS would not read one part as written; null when it would. */
function partProblem(part: string): string | null {
  if (part === "") return "has an empty part (two separators in a row, or one at an end)";
  const m = PART.exec(part);
  if (!m) {
    if (/\s/.test(part)) return "must not contain spaces (FreeRADIUS skips the days after one)";
    if (/-(wk|any|al)/.test(part)) return "a day range must end in Su, Mo, Tu, We, Th, Fr or Sa";
    if (/(wk|any|al)-/.test(part)) return "Wk, Any and Al cannot start a day range";
    return "each part must be days (Su Mo Tu We Th Fr Sa Wk Any Al, or a range such as Mo-Fr) then an optional HHMM-HHMM";
  }
  if (m[2] !== undefined) {
    const [from, to] = m[2].split("-") as [string, string];
    const valid = (hhmm: string, end: boolean) =>
      (Number(hhmm.slice(0, 2)) < 24 && Number(hhmm.slice(2)) < 60) || (end && hhmm === "2400");
    if (!valid(from, false) || !valid(to, true)) return `${m[2]} is not a time range from 0000 to 2400`;
  }
  return null;
}

/** Null when `value` is a Login-Time FreeRADIUS reads as written, else why not. */
export function checkLoginTime(value: string): string | null {
  for (const part of value.toLowerCase().split(/[,|]/)) {
    const problem = partProblem(part);
    if (problem) return `${problem}: "${part}"`;
  }
  return null;
}

/** The allowed minutes of the week (Sunday 00:00 first), as timestr.c's week_fill builds them. */
function weekMinutes(value: string): Uint8Array {
  const week = new Uint8Array(WEEK_MINUTES);
  for (const part of value.toLowerCase().split(/[,|]/)) {
    const m = PART.exec(part);
    if (!m || part === "") continue; // refused when written; skipped as FreeRADIUS would
    const codes = part.slice(0, part.length - (m[2]?.length ?? 0));
    let start = 0;
    let end = DAY_MINUTES - 1;
    if (m[2] !== undefined) {
      const [from, to] = m[2].split("-") as [string, string];
      start = minuteOf(from);
      end = Math.min(minuteOf(to), DAY_MINUTES - 1); // 2400 is clamped to 23:59 (hour_fill)
    }
    const days: number[] = [];
    if (codes === "") days.push(...daysOf(9, 9));
    for (const d of codes.matchAll(DAY)) {
      const code = (name: string | undefined) => DAY_CODES.indexOf(name as (typeof DAY_CODES)[number]);
      const first = code(d[1] ?? d[3]);
      const last = d[2] === undefined ? first : code(d[2]);
      days.push(...daysOf(first, last));
    }
    for (const day of days) {
      // hour_fill: from start to end inclusive, wrapping inside the same day.
      for (let i = start; ; i = (i + 1) % DAY_MINUTES) {
        week[day * DAY_MINUTES + i] = 1;
        if (i === end) break;
      }
    }
  }
  return week;
}

/** Weekday, hour and minute of `now` in `timeZone` (an IANA name), or in the process's local time. */
function weekMinute(now: number, timeZone: string | undefined): number {
  const date = new Date(now * 1000);
  if (timeZone === undefined) return date.getDay() * DAY_MINUTES + date.getHours() * 60 + date.getMinutes();
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    weekday: "short",
    hour: "numeric",
    minute: "numeric",
    hourCycle: "h23",
  }).formatToParts(date);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const day = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(part("weekday"));
  return day * DAY_MINUTES + Number(part("hour")) * 60 + Number(part("minute"));
}

/**
 * timestr_match: seconds left in the allowed window holding `now`, 0 when the whole week is
 * allowed (no limit), -1 when `now` is outside every window.
 */
export function loginTimeLeft(value: string, now: number, timeZone?: string): number {
  const week = weekMinutes(value);
  const from = weekMinute(now, timeZone);
  let minutes = 0;
  let i = from;
  while (week[i] === 1) {
    minutes++;
    i = (i + 1) % WEEK_MINUTES;
    if (i === from) return 0;
  }
  return minutes === 0 ? -1 : minutes * 60;
}

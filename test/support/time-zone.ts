// Quota periods reset at local midnight and on the 1st (rlm_sqlcounter's daily and monthly
// counters, and Wisp's after them). A test that seeds sessions minutes back and expects them in
// today's sum would fail when run just after midnight. Tests of those periods therefore run in a
// time zone where it is about noon now, so every day's and month's edge is hours away. (FreeRADIUS
// under faketime(1) logged the fake date but still counted its daily quota by the real one.)

/**
 * An IANA zone (`Etc/GMT-11`: UTC+11, the sign is POSIX's) whose local time is within half an hour
 * of noon at this moment; understood alike by Node (ICU) and by glibc (tzdata) in FreeRADIUS.
 */
export function noonTimeZone(now = new Date()): string {
  const utcMinutes = now.getUTCHours() * 60 + now.getUTCMinutes();
  let east = Math.round((12 * 60 - utcMinutes) / 60);
  if (east > 12) east -= 24;
  if (east < -12) east += 24;
  if (east === 0) return "Etc/GMT";
  return `Etc/GMT${east > 0 ? "-" : "+"}${Math.abs(east)}`;
}

/** Moves this process to noonTimeZone() (Node reads TZ again when it changes); returns it. */
export function useNoonTimeZone(): string {
  const zone = noonTimeZone();
  process.env.TZ = zone;
  return zone;
}

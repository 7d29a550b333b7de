/** ISO 8601 UTC with second precision and a Z, the one timestamp format Wisp stores and returns. */
export function isoNow(now: Date = new Date()): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

/**
 * `work`, or the error `late()` gives once `ms` have passed, whichever comes first. The timer is
 * cleared however `work` ends, so a bound never holds the process open after the work is done.
 */
export async function within<T>(work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

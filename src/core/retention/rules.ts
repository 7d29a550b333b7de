// How long each kind of record is kept (RETENTION_*_DAYS), and what "older than" means for each.
// The defaults follow what a venue operator is asked for: sessions (radacct) are the accounting
// and legal record of who was online when, which hotspot operators are commonly required to keep
// for a year; authentication attempts (radpostauth) serve troubleshooting and abuse enquiries and
// grow fastest (a row per attempt), so a quarter; delivered webhook events and their attempts are
// a debugging log, a month; finished jobs are diagnostics, two weeks (longer than a report task
// can live, 7 days queued + its result, so a task never loses its job row); report files 1 day,
// the 24 hours the reports API has always promised.

export interface RetentionDays {
  /** radpostauth rows, by authdate. */
  auth: number;
  /** Closed radacct rows, by acctstoptime; open sessions are never pruned. */
  sessions: number;
  /** Webhook events whose deliveries are all finished, with their deliveries and attempts. */
  events: number;
  /** Jobs done or failed, by when they finished. */
  jobs: number;
  /** Report tasks and their files, from when the task finished. */
  reports: number;
  /** Audit log rows (core/audit), by when the change was made: a security review asks for a year. */
  audit: number;
}

export const DEFAULT_RETENTION_DAYS: RetentionDays = {
  auth: 90,
  sessions: 365,
  events: 30,
  jobs: 14,
  reports: 1,
  audit: 365,
};

/** Ten years: a longer period is a typo, not a policy. */
export const MAX_RETENTION_DAYS = 3650;

const DAY_MS = 86_400_000;

/** The instant before which records of a period of `days` go; undefined: kept for ever (0). */
export function cutoff(days: number, now: Date): Date | undefined {
  return days === 0 ? undefined : new Date(now.getTime() - days * DAY_MS);
}

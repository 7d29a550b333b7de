// Reading the audit log (GET /api/audit, the console): filters, a bounded date range, pages, CSV.
// Nothing here changes a row: the log is written by recordAudit and deleted only by retention.
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema.ts";
import { csvTable } from "../reports/csv.ts";
import { type FieldProblem, ValidationError } from "../shared/errors.ts";
import { offsetOf, type Page, type PageRequest } from "../shared/pages.ts";
import { isoNow } from "../shared/time.ts";

/** The widest range one query may cover: the default retention, plus a day for time zones. */
export const MAX_RANGE_DAYS = 366;
/** Without `from`: the last 30 days. */
const DEFAULT_RANGE_DAYS = 30;
const DAY_MS = 86_400_000;

export interface AuditRecord {
  id: number;
  time: string;
  actor_type: string;
  actor_id: string;
  actor_name: string;
  actor_role: string;
  address: string;
  resource: string;
  resource_id: string;
  action: string;
  before: unknown;
  after: unknown;
}

export interface AuditFilter {
  /** Matches the actor's id or name exactly (a key id, an admin's email, an OS user). */
  actor?: string | undefined;
  actor_type?: string | undefined;
  resource?: string | undefined;
  resource_id?: string | undefined;
  action?: string | undefined;
  /** ISO 8601 date or date-time; default: 30 days before `to`. */
  from?: string | undefined;
  /** Default: now. */
  to?: string | undefined;
  /** "time" (oldest first) or "-time" (newest first, the default). */
  sort?: string | undefined;
}

export const AUDIT_CSV_HEADER = [
  "id",
  "time",
  "actor_type",
  "actor_id",
  "actor_name",
  "actor_role",
  "address",
  "resource",
  "resource_id",
  "action",
  "before",
  "after",
] as const;

function parseTime(field: string, text: string, problems: FieldProblem[]): Date | undefined {
  const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text);
  const date = ok ? new Date(text.length === 10 ? `${text}T00:00:00Z` : text) : undefined;
  if (!date || Number.isNaN(date.getTime())) {
    problems.push({ field, message: "must be an ISO 8601 date (2025-01-31) or date-time with a zone" });
    return undefined;
  }
  return date;
}

/** The range asked for, checked: both dates valid, from before to, at most MAX_RANGE_DAYS apart. */
export function auditRange(filter: AuditFilter, now = new Date()): { from: string; to: string } {
  const problems: FieldProblem[] = [];
  const to = filter.to === undefined ? now : parseTime("to", filter.to, problems);
  const from =
    filter.from === undefined
      ? to && new Date(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS)
      : parseTime("from", filter.from, problems);
  if (from && to && from > to) problems.push({ field: "from", message: "must not be after to" });
  else if (from && to && to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    problems.push({ field: "from", message: `the range may cover at most ${MAX_RANGE_DAYS} days` });
  }
  const first = problems[0];
  if (first) throw new ValidationError(`${first.field} ${first.message}`, problems);
  return { from: isoNow(from!), to: isoNow(to!) };
}

type Row = Omit<AuditRecord, "time" | "before" | "after"> & {
  created: string;
  before: string | null;
  after: string | null;
};

function present(row: Row): AuditRecord {
  const { created, before, after, ...rest } = row;
  return {
    ...rest,
    id: Number(row.id),
    time: created,
    before: before === null ? null : JSON.parse(before),
    after: after === null ? null : JSON.parse(after),
  };
}

export class AuditService {
  constructor(private readonly db: Kysely<Schema>) {}

  async list(accountId: number, filter: AuditFilter, page: PageRequest): Promise<Page<AuditRecord>> {
    const { from, to } = auditRange(filter);
    let query = this.db
      .selectFrom("audit_log")
      .where("account_id", "=", accountId)
      .where("created", ">=", from)
      .where("created", "<=", to);
    if (filter.actor !== undefined) {
      const actor = filter.actor;
      query = query.where((eb) => eb.or([eb("actor_id", "=", actor), eb("actor_name", "=", actor)]));
    }
    if (filter.actor_type !== undefined) query = query.where("actor_type", "=", filter.actor_type);
    if (filter.resource !== undefined) query = query.where("resource", "=", filter.resource);
    if (filter.resource_id !== undefined) query = query.where("resource_id", "=", filter.resource_id);
    if (filter.action !== undefined) query = query.where("action", "=", filter.action);
    const direction = filter.sort === "time" ? "asc" : "desc";
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy("created", direction)
        .orderBy("id", direction)
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
    ]);
    return {
      data: rows.map((r) => present(r as Row)),
      page: page.page,
      total: Number(count.n),
      limit: page.limit,
    };
  }

  /** A page as CSV (header row first), before/after as their JSON text. */
  csv(page: Page<AuditRecord>): string {
    return csvTable(
      AUDIT_CSV_HEADER,
      page.data.map((r) => [
        r.id,
        r.time,
        r.actor_type,
        r.actor_id,
        r.actor_name,
        r.actor_role,
        r.address,
        r.resource,
        r.resource_id,
        r.action,
        r.before === null ? null : JSON.stringify(r.before),
        r.after === null ? null : JSON.stringify(r.after),
      ]),
    );
  }
}

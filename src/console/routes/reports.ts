// Reports: pick a report and a window (time expressions, or a preset), preview the first pages of
// windows up to 4 hours and download that whole window as CSV; larger windows become a CSV file
// built in the background (a task page that refreshes itself until the file can be downloaded).
// Everything goes through the reports service, as the API does; other accounts' tasks answer 404.
import fs from "node:fs";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  type AnyReportRow,
  isReportId,
  REPORT_COLUMNS,
  REPORT_IDS,
  REPORT_TITLES,
  type ReportId,
  SYNC_WINDOW_SECONDS,
} from "../../core/reports/definitions.ts";
import type { Window } from "../../core/reports/repo.ts";
import { isoSeconds, TIME_FORMS } from "../../core/reports/time.ts";
import { TooManyRequestsError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

/** Rows fetched per query while a synchronous CSV download collects its window. */
const CSV_CHUNK = 5000;

export const PRESETS = [
  { label: "Last hour", earliest: "-1h" },
  { label: "Last 4 hours", earliest: "-4h" },
  { label: "Last 24 hours", earliest: "-24h" },
  { label: "Last 7 days", earliest: "-7d" },
] as const;

export interface ReportFormValues {
  report: string;
  earliest: string;
  latest: string;
}

/** 2026-11-25T21:16:18Z -> 20261125T211618Z, as the service names its files. */
const compact = (seconds: number) => isoSeconds(seconds).replace(/[-:]/g, "");

export function reportQuery(values: ReportFormValues, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({ ...values, ...extra });
  return params.toString();
}

export async function reportRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "reports" };
  const reports = core.reports;

  function valuesOf(get: (name: string) => string): ReportFormValues {
    return {
      report: get("report") || String(REPORT_IDS[0]),
      earliest: get("earliest") || "-4h",
      latest: get("latest") || "now",
    };
  }

  /** The report id and the resolved window (any length), or the errors to show next to the fields. */
  async function resolve(
    values: ReportFormValues,
  ): Promise<{ report: ReportId; window: Window } | { errors: FieldErrors }> {
    const errors: FieldErrors = {};
    const id = /^\d{1,4}$/.test(values.report) ? Number(values.report) : Number.NaN;
    if (!isReportId(id)) errors.report = `must be one of ${REPORT_IDS.join(", ")}`;
    const window = await attempt(async () =>
      reports.window({ earliest: values.earliest, latest: values.latest }, false),
    );
    if ("errors" in window) Object.assign(errors, window.errors);
    if (Object.keys(errors).length > 0 || !("ok" in window)) return { errors };
    return { report: id as ReportId, window: window.ok };
  }

  function formPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: ReportFormValues,
    data: Record<string, unknown>,
    status = 200,
  ) {
    const presets = PRESETS.map((p) => ({
      label: p.label,
      href: `/console/reports?${reportQuery({ report: values.report, earliest: p.earliest, latest: "now" })}`,
      current: values.earliest === p.earliest && values.latest === "now",
    }));
    return show(
      request,
      reply,
      "reports",
      { title: "Reports", ...section, status },
      {
        values,
        errors: {},
        reports: REPORT_IDS.map((id) => ({ id, title: REPORT_TITLES[id] })),
        presets,
        timeForms: TIME_FORMS,
        syncHours: SYNC_WINDOW_SECONDS / 3600,
        preview: null,
        large: null,
        ...data,
      },
    );
  }

  /** The form's report and window when they can be answered at once; otherwise the form, sent. */
  async function answerable(request: FastifyRequest, reply: FastifyReply) {
    const { accountId } = sessionOf(request);
    const values = valuesOf((name) => queryText(request, name));
    const resolved = await resolve(values);
    if ("errors" in resolved) {
      return { sent: formPage(request, reply, values, { errors: resolved.errors }, 400) };
    }
    const { report, window } = resolved;
    const span = { earliest: isoSeconds(window.earliest), latest: isoSeconds(window.latest) };
    if (window.latest - window.earliest > SYNC_WINDOW_SECONDS) {
      return { sent: formPage(request, reply, values, { large: span }) };
    }
    return { accountId, values, report, window, span };
  }

  app.get("/reports", need("reports:read"), async (request, reply) => {
    const asked = await answerable(request, reply);
    if ("sent" in asked) return asked.sent;
    const { accountId, values, report, span } = asked;
    const page = pageNumber(queryText(request, "page"));
    const result = await attempt(() =>
      reports.page(accountId, report, { ...values, page, limit: PAGE_SIZE }),
    );
    if ("errors" in result) return formPage(request, reply, values, { errors: result.errors }, 400);
    const columns: readonly string[] = REPORT_COLUMNS[report];
    const rows = result.ok.data.map((row) =>
      columns.map((c) => (row as unknown as Record<string, unknown>)[c] ?? null),
    );
    // The download covers the window shown here, pinned to its resolved times.
    const csv = `/console/reports/csv?${reportQuery({ report: values.report, ...span })}`;
    const pager = pagerOf(result.ok, "/console/reports", { ...values });
    return formPage(request, reply, values, {
      preview: { title: REPORT_TITLES[report], columns, rows, pager, csv, ...span },
    });
  });

  // The whole window (at most 4 hours) as one CSV file, collected page by page.
  app.get("/reports/csv", need("reports:read"), async (request, reply) => {
    const asked = await answerable(request, reply);
    if ("sent" in asked) return asked.sent;
    const { accountId, report, window, span } = asked;
    const rows: AnyReportRow[] = [];
    for (let page = 1; ; page++) {
      const chunk = await reports.page(accountId, report, { ...span, page, limit: CSV_CHUNK });
      rows.push(...chunk.data);
      if (chunk.data.length < CSV_CHUNK || rows.length >= chunk.total) break;
    }
    const filename = `report-${report}-${compact(window.earliest)}-${compact(window.latest)}.csv`;
    return reply
      .type("text/csv; charset=utf-8")
      .header("Content-Disposition", `attachment; filename="${filename}"`)
      .header("Cache-Control", "no-store")
      .header("X-Report-Rows", rows.length)
      .send(reports.csv(report, rows));
  });

  app.post("/reports/tasks", need("reports:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const form = formOf(request);
    const values = valuesOf((name) => form.text(name));
    const resolved = await resolve(values);
    if ("errors" in resolved) return formPage(request, reply, values, { errors: resolved.errors }, 400);
    const queued = await attempt(() =>
      reports.requestFile(accountId, resolved.report, { earliest: values.earliest, latest: values.latest }),
    ).catch((error: unknown) => {
      // Too many files of this account under way: the form again, saying so.
      if (error instanceof TooManyRequestsError) return { busy: error };
      throw error;
    });
    if ("busy" in queued) {
      reply.header("Retry-After", queued.busy.retryAfterSeconds);
      return formPage(request, reply, values, { errors: { _form: queued.busy.message } }, 429);
    }
    if ("errors" in queued) return formPage(request, reply, values, { errors: queued.errors }, 400);
    return reply.redirect(`/console/reports/tasks/${encodeURIComponent(queued.ok.task_name)}`, 303);
  });

  function taskName(request: FastifyRequest): string {
    return String((request.params as { name?: unknown }).name ?? "");
  }

  app.get("/reports/tasks/:name", need("reports:read"), async (request, reply) => {
    const state = await reports.task(sessionOf(request).accountId, taskName(request));
    const pending = state.status === "queued" || state.status === "running";
    return show(
      request,
      reply,
      "report-task",
      { title: "Report file", ...section },
      { state, refresh: pending ? 2 : 0 },
    );
  });

  app.get("/reports/tasks/:name/download", need("reports:read"), async (request, reply) => {
    const name = taskName(request);
    const state = await reports.task(sessionOf(request).accountId, name);
    if (state.status !== "done")
      return reply.redirect(`/console/reports/tasks/${encodeURIComponent(name)}`, 303);
    // Chunked, without Content-Length (see the API's download for why).
    return reply
      .type("text/csv; charset=utf-8")
      .header("Content-Disposition", `attachment; filename="${state.filename}"`)
      .header("Cache-Control", "no-store")
      .header("X-Report-Rows", state.rows)
      .send(fs.createReadStream(state.file));
  });
}

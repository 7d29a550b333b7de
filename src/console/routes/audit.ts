// The audit log in the console (issue 29 point 3): who changed what, when, from where, filtered by
// actor, resource, action and dates, a page at a time, and exported as CSV with the same filters.
// Reading only: the log has no console form (it is deleted only by retention).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AuditFilter } from "../../core/audit/service.ts";
import { ValidationError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { show } from "../views.ts";
import { PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

/** Rows one CSV export holds at most (newest first); narrow the filters for more. */
export const CONSOLE_EXPORT_ROWS = 10_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filters as typed in the form (dates as YYYY-MM-DD from the date inputs). */
function formFilters(request: FastifyRequest) {
  return {
    actor: queryText(request, "actor").trim().slice(0, 320),
    resource: queryText(request, "resource").trim().slice(0, 64),
    action: queryText(request, "action").trim().slice(0, 64),
    from: queryText(request, "from").trim().slice(0, 40),
    to: queryText(request, "to").trim().slice(0, 40),
  };
}

/** The service's filter: a `to` day includes the whole day (UTC). Empty fields filter nothing. */
function auditFilter(form: ReturnType<typeof formFilters>): AuditFilter {
  return {
    actor: form.actor || undefined,
    resource: form.resource || undefined,
    action: form.action || undefined,
    from: form.from || undefined,
    to: form.to ? (DAY.test(form.to) ? `${form.to}T23:59:59Z` : form.to) : undefined,
  };
}

export async function auditRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "audit" };

  async function page(request: FastifyRequest, reply: FastifyReply) {
    const { accountId } = sessionOf(request);
    const form = formFilters(request);
    const query = new URLSearchParams(Object.entries(form).filter(([, v]) => v !== "")).toString();
    const data = { form, csv: `/console/audit.csv${query ? `?${query}` : ""}` };
    try {
      const result = await core.audit.list(accountId, auditFilter(form), {
        page: pageNumber(queryText(request, "page")),
        limit: PAGE_SIZE,
      });
      const pager = pagerOf(result, "/console/audit", form);
      const entries = result.data.map((r) => ({
        ...r,
        before: r.before === null ? "" : JSON.stringify(r.before),
        after: r.after === null ? "" : JSON.stringify(r.after),
      }));
      return show(
        request,
        reply,
        "audit",
        { title: "Audit log", ...section },
        { ...data, entries, pager, error: "" },
      );
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      const pager = pagerOf({ data: [], page: 1, total: 0, limit: PAGE_SIZE }, "/console/audit", form);
      const status = 400;
      return show(
        request,
        reply,
        "audit",
        { title: "Audit log", ...section, status },
        {
          ...data,
          entries: [],
          pager,
          error: error.message,
        },
      );
    }
  }

  app.get("/audit", need("audit:read"), (request, reply) => page(request, reply));

  // The filtered entries as CSV, newest first, up to CONSOLE_EXPORT_ROWS (same columns as the API's).
  app.get("/audit.csv", need("audit:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const result = await core.audit.list(accountId, auditFilter(formFilters(request)), {
      page: 1,
      limit: CONSOLE_EXPORT_ROWS,
    });
    reply.header("X-Total-Count", String(result.total));
    reply.header("Content-Disposition", 'attachment; filename="audit.csv"');
    return reply.type("text/csv; charset=utf-8").send(core.audit.csv(result));
  });
}

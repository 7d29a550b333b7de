// /api/reports: the three reports as pages (JSON or CSV) or as files built in the background, and
// the tasks that deliver those files. Known report ids are routes of their own so the OpenAPI
// document shows each report's columns; any other id answers 404 (non-numeric ones 400).
import fs from "node:fs";
import type { FastifyInstance, FastifyReply } from "fastify";
import { type Static, type TSchema, Type } from "typebox";
import {
  REPORT_COLUMNS,
  REPORT_IDS,
  REPORT_SORT_FIELDS,
  REPORT_TITLES,
  type ReportId,
  reportSortValues,
  SYNC_WINDOW_SECONDS,
} from "../../core/reports/definitions.ts";
import type { ReportsService } from "../../core/reports/service.ts";
import { TIME_FORMS } from "../../core/reports/time.ts";
import { ValidationError } from "../../core/shared/errors.ts";
import { sendError } from "../errors.ts";
import { errorResponses, ListOf, PageQuery, StringEnum } from "../schemas.ts";

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Time = (description: string) => Type.String({ format: "date-time", description });
const Mac = (description: string) =>
  Nullable(Type.String({ description: `${description}, aa:bb:cc:dd:ee:ff` }));

const rowSchemas: Record<ReportId, TSchema> = {
  110: Type.Object(
    {
      time: Time("when the request arrived"),
      username: Type.String(),
      user_id: Nullable(Type.Integer({ description: "null when the name is no user's (or a voucher)" })),
      result: Type.String({ description: "Access-Accept or Access-Reject" }),
      reason: Nullable(Type.String({ description: "why a request was rejected" })),
      client_mac: Mac("the client device"),
      ap_mac: Mac("the access point"),
      ssid: Nullable(Type.String()),
      nas_ip: Nullable(Type.String()),
      nas_identifier: Nullable(Type.String()),
      network_id: Nullable(Type.Integer()),
      method: Nullable(
        Type.String({
          description:
            "how the user was proven: PAP, CHAP, MSCHAPv2, PEAP, TTLS, TLS or MAB (MAC authentication)",
        }),
      ),
      outer_identity: Nullable(
        Type.String({
          description: "EAP: the outer (often anonymous) identity, when it differs from username",
        }),
      ),
      device_name: Nullable(
        Type.String({
          description: "the name of the account's device with this client MAC, when it has one",
        }),
      ),
      policy_id: Nullable(
        Type.Integer({
          description: "the policy that decided the attempt; null with a policy_name: the default rule",
        }),
      ),
      policy_name: Nullable(
        Type.String({
          description:
            "the deciding policy's name when it decided; null: no policy was evaluated (refused before)",
        }),
      ),
    },
    { $id: "Report110Row", description: REPORT_TITLES[110] },
  ),
  115: Type.Object(
    {
      user_id: Type.Integer(),
      username: Type.String(),
      email: Type.String(),
      fullname: Type.String(),
      status: Type.String(),
      created: Time("when the user was created (inside the window)"),
      last_seen: Nullable(Time("the end or last update of the user's latest session")),
      sessions: Type.Integer({ description: "all of the user's sessions, whenever they were" }),
      session_time: Type.Integer({ description: "seconds, summed over those sessions" }),
      input_bytes: Type.Integer({ description: "bytes the user's devices sent" }),
      output_bytes: Type.Integer({ description: "bytes the user's devices received" }),
    },
    { $id: "Report115Row", description: REPORT_TITLES[115] },
  ),
  120: Type.Object(
    {
      session_id: Type.Integer(),
      username: Type.String(),
      user_id: Nullable(Type.Integer()),
      start: Time("when the session started (inside the window)"),
      stop: Nullable(Time("when it ended; null while open")),
      duration: Nullable(Type.Integer({ description: "seconds, as last reported" })),
      input_bytes: Nullable(Type.Integer()),
      output_bytes: Nullable(Type.Integer()),
      client_mac: Mac("the client device"),
      ap_mac: Mac("the access point"),
      ssid: Nullable(Type.String()),
      nas_ip: Nullable(Type.String()),
      framed_ip: Nullable(Type.String()),
      terminate_cause: Nullable(Type.String()),
    },
    { $id: "Report120Row", description: REPORT_TITLES[120] },
  ),
};

const TimeParameter = (what: string, fallback: string) =>
  Type.Optional(Type.String({ maxLength: 64, description: `${what} (default ${fallback}): ${TIME_FORMS}` }));

/** The `sort` of a report's pages, as the other lists have it; the enum documents and validates it. */
const SortParameter = (id: ReportId) =>
  Type.Optional(
    StringEnum(reportSortValues(id), {
      description:
        `order of the page: a field ascending, or "-field" descending (default: -${REPORT_SORT_FIELDS[id][0]}, ` +
        "newest first). Text ignores case; missing values come last; ties go by time, then id, in " +
        "the same direction. Files (format=csvfile) are always newest first.",
    }),
  );

const reportQuery = (id: ReportId) =>
  Type.Object(
    {
      earliest: TimeParameter("start of the window, included", "-4h"),
      latest: TimeParameter("end of the window, excluded; now is the end of the current second", "now"),
      ...(id === 110
        ? {
            portal_id: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 2_147_483_647,
                description:
                  "only the attempts that followed a sign-in on this captive portal (pages only, not csvfile)",
              }),
            ),
          }
        : {}),
      ...PageQuery,
      sort: SortParameter(id),
      format: Type.Optional(
        StringEnum(["json", "csv", "csvfile"], {
          description:
            "json (default): a page; csv: the same page as CSV; csvfile: a CSV file of the whole window, " +
            "of any length, built in the background (answers 202 with a task_name; 429 with Retry-After " +
            "while the account has as many files queued or being built as it may, 10 by default)",
        }),
      ),
    },
    { additionalProperties: false },
  );
type ReportQuery = Static<ReturnType<typeof reportQuery>>;

const TaskQueued = Type.Object(
  { task_name: Type.String(), status: Type.Literal("queued") },
  { $id: "ReportTaskQueued" },
);

const TaskPending = Type.Object(
  {
    task_name: Type.String(),
    status: StringEnum(["queued", "running"]),
    progress: Type.Integer({ minimum: 0, maximum: 100, description: "percent of the rows written" }),
  },
  { $id: "ReportTaskPending" },
);

const TaskQuery = Type.Object(
  {
    task_name: Type.String({ minLength: 1, maxLength: 64, description: "as answered by format=csvfile" }),
    format: Type.Optional(StringEnum(["csvfile"])),
  },
  { additionalProperties: false },
);

const ReportParams = Type.Object({ report_id: Type.Integer() }, { additionalProperties: false });

const csvContent = (description: string) => ({
  "text/csv": { schema: Type.String({ description }) },
});

export async function reportsRoutes(app: FastifyInstance, { reports }: { reports: ReportsService }) {
  for (const schema of Object.values(rowSchemas)) app.addSchema(schema);
  app.addSchema(TaskQueued);
  app.addSchema(TaskPending);
  const tags = ["reports"];
  const config = { permission: ["reports", "read"] as ["reports", "read"] };

  async function answer(id: number, query: ReportQuery, reply: FastifyReply) {
    const accountId = reply.request.principal.accountId;
    const { earliest, latest, page = 1, limit = 50, sort, format = "json" } = query;
    const portal_id = (query as { portal_id?: number }).portal_id;
    if (format === "csvfile") {
      if (portal_id !== undefined) {
        throw ValidationError.field("portal_id", "filters pages only; files cover every attempt");
      }
      const queued = await reports.requestFile(accountId, id, { earliest, latest, sort });
      const location = `/api/reports/tasks?task_name=${queued.task_name}&format=csvfile`;
      return reply.code(202).header("Location", location).send(queued);
    }
    const result = await reports.page(accountId, id, { earliest, latest, page, limit, sort, portal_id });
    if (format === "json") return result;
    return reply
      .type("text/csv; charset=utf-8")
      .header("X-Total-Count", result.total)
      .send(reports.csv(reports.report(id), result.data));
  }

  for (const id of REPORT_IDS) {
    app.get<{ Querystring: ReportQuery }>(
      `/api/reports/${id}`,
      {
        config,
        schema: {
          tags,
          summary: `Report ${id}: ${REPORT_TITLES[id].toLowerCase()}`,
          description:
            `Columns: ${REPORT_COLUMNS[id].join(", ")}. Rows with earliest <= t < latest, newest first ` +
            `unless sorted (by ${REPORT_SORT_FIELDS[id].join(", ")}). ` +
            `The synchronous form covers at most ${SYNC_WINDOW_SECONDS / 3600} hours; larger windows ` +
            "answer 400 and need format=csvfile. In CSV, text cells starting with = + - @, a tab or a " +
            "CR are prefixed with ' (OWASP's CSV-injection defence).",
          querystring: reportQuery(id),
          response: {
            200: {
              description: "a page of rows (format=csv: the same page as CSV, with a header row)",
              content: {
                "application/json": { schema: ListOf(Type.Ref(`Report${id}Row`)) },
                ...csvContent("the page as CSV; X-Total-Count gives the total"),
              },
            },
            202: Type.Ref("ReportTaskQueued"),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => answer(id, request.query, reply),
    );
  }

  app.get<{ Querystring: Static<typeof TaskQuery> }>(
    "/api/reports/tasks",
    {
      config,
      schema: {
        tags,
        summary: "The result of an asynchronous report",
        description:
          "202 with the progress while the file is built; then 200 with the CSV file (kept at least " +
          "24 hours); 500 if building it failed; 404 for unknown names and other accounts' tasks.",
        querystring: TaskQuery,
        response: {
          200: {
            description: "the CSV file, as an attachment",
            content: csvContent("the whole report, with a header row"),
          },
          202: Type.Ref("ReportTaskPending"),
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const state = await reports.task(request.principal.accountId, request.query.task_name);
      if (state.status === "failed") return sendError(reply, 500, state.message);
      if (state.status !== "done") {
        const { task_name, status, progress } = state;
        return reply.code(202).send({ task_name, status, progress });
      }
      // Chunked, without Content-Length: with it, fastify 5 keeps such a keep-alive connection
      // open through app.close() until keepAliveTimeout (72 s) runs out.
      return reply
        .type("text/csv; charset=utf-8")
        .header("Content-Disposition", `attachment; filename="${state.filename}"`)
        .header("X-Report-Rows", state.rows)
        .send(fs.createReadStream(state.file));
    },
  );

  // Any other id: 404 naming the reports that exist (a non-numeric id fails validation: 400).
  app.get<{ Params: Static<typeof ReportParams> }>(
    "/api/reports/:report_id",
    { config, schema: { hide: true, params: ReportParams } },
    async (request) => {
      reports.report(request.params.report_id);
      throw new Error("unreachable: known reports have routes of their own");
    },
  );
}

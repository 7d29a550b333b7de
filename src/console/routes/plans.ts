// Plans (issue 25): the account's bundles of bandwidth, data and time quotas, validity and devices.
// A list with each plan's figures and a form for a new one, an edit page, and delete, which the
// service refuses (with the counts) while users, groups or voucher batches name the plan.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PLAN_PERIODS } from "../../core/plans/rules.ts";
import type { Plan, PlanInput } from "../../core/plans/service.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam, PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

/** Units the form offers, largest first: a stored figure is shown in the largest that divides it. */
const DATA_UNITS: [string, number][] = [
  ["GB", 1_000_000_000],
  ["MB", 1_000_000],
  ["bytes", 1],
];
const TIME_UNITS: [string, number][] = [
  ["days", 86_400],
  ["hours", 3_600],
  ["minutes", 60],
  ["seconds", 1],
];
const WITH_UNITS = { data_quota: DATA_UNITS, time_quota: TIME_UNITS, validity: TIME_UNITS } as const;
type UnitField = keyof typeof WITH_UNITS;

const FIELDS = [
  "name",
  "description",
  "download_kbps",
  "upload_kbps",
  "data_quota",
  "data_quota_unit",
  "data_period",
  "time_quota",
  "time_quota_unit",
  "time_period",
  "validity",
  "validity_unit",
  "devices",
  "role",
] as const;
type Values = Record<(typeof FIELDS)[number], string>;

const blank = (): Values => ({
  ...(Object.fromEntries(FIELDS.map((f) => [f, ""])) as Values),
  data_quota_unit: "MB",
  time_quota_unit: "hours",
  validity_unit: "days",
});

/** A figure typed in the form: empty is no limit (null); anything but digits NaN, which the service names. */
function figure(text: string, scale = 1): number | null {
  if (text === "") return null;
  return /^\d{1,16}$/.test(text) ? Number(text) * scale : Number.NaN;
}

function scaleOf(field: UnitField, unit: string): number {
  return WITH_UNITS[field].find(([name]) => name === unit)?.[1] ?? Number.NaN;
}

function inputOf(v: Values): PlanInput {
  return {
    name: v.name,
    description: v.description,
    download_kbps: figure(v.download_kbps),
    upload_kbps: figure(v.upload_kbps),
    data_quota: figure(v.data_quota, scaleOf("data_quota", v.data_quota_unit)),
    data_period: v.data_period === "" ? null : v.data_period,
    time_quota: figure(v.time_quota, scaleOf("time_quota", v.time_quota_unit)),
    time_period: v.time_period === "" ? null : v.time_period,
    validity: figure(v.validity, scaleOf("validity", v.validity_unit)),
    devices: figure(v.devices),
    role: v.role,
  };
}

/** A stored figure as an amount and the largest unit that divides it. */
function withUnit(value: number | null, units: readonly [string, number][]): [string, string] {
  if (value === null) return ["", units[0]![0]];
  const [unit, scale] = units.find(([, s]) => value % s === 0) ?? units[units.length - 1]!;
  return [String(value / scale), unit];
}

function valuesOf(plan: Plan): Values {
  const [dataQuota, dataUnit] = withUnit(plan.data_quota, DATA_UNITS);
  const [timeQuota, timeUnit] = withUnit(plan.time_quota, TIME_UNITS);
  const [validity, validityUnit] = withUnit(plan.validity, TIME_UNITS);
  const text = (n: number | null) => (n === null ? "" : String(n));
  return {
    name: plan.name,
    description: plan.description,
    download_kbps: text(plan.download_kbps),
    upload_kbps: text(plan.upload_kbps),
    data_quota: dataQuota,
    data_quota_unit: dataUnit,
    data_period: plan.data_period ?? "",
    time_quota: timeQuota,
    time_quota_unit: timeUnit,
    time_period: plan.time_period ?? "",
    validity,
    validity_unit: validityUnit,
    devices: text(plan.devices),
    role: plan.role,
  };
}

/** A plan's figures in words, for the list: "—" where there is no limit. */
export function planSummary(plan: Plan): Record<string, string> {
  const amount = (value: number | null, units: readonly [string, number][]) => {
    const [n, unit] = withUnit(value, units);
    return n === "" ? "—" : `${n} ${unit}`;
  };
  const per = (value: number | null, units: readonly [string, number][], period: string | null) =>
    value === null ? "—" : `${amount(value, units)} per ${period}`;
  return {
    download: plan.download_kbps === null ? "—" : `${plan.download_kbps} kbit/s`,
    upload: plan.upload_kbps === null ? "—" : `${plan.upload_kbps} kbit/s`,
    data: per(plan.data_quota, DATA_UNITS, plan.data_period),
    time: per(plan.time_quota, TIME_UNITS, plan.time_period),
    validity: amount(plan.validity, TIME_UNITS),
    devices: plan.devices === null ? "—" : String(plan.devices),
    role: plan.role || "—",
  };
}

const readValues = (form: Form) => Object.fromEntries(FIELDS.map((f) => [f, form.text(f)])) as Values;
const choices = {
  periods: PLAN_PERIODS,
  dataUnits: DATA_UNITS.map(([u]) => u),
  timeUnits: TIME_UNITS.map(([u]) => u),
};

export async function planRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "plans" };

  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    state: { values?: Values; errors?: FieldErrors; status?: number } = {},
  ) {
    const { accountId } = sessionOf(request);
    const page = await core.plans.list(
      accountId,
      { page: pageNumber(queryText(request, "page")), limit: PAGE_SIZE },
      "name",
    );
    return show(
      request,
      reply,
      "plans",
      { title: "Plans", ...section, status: state.status ?? 200 },
      {
        plans: page.data,
        pager: pagerOf(page, "/console/plans", {}),
        summary: planSummary,
        values: state.values ?? blank(),
        errors: state.errors ?? {},
        ...choices,
      },
    );
  }

  async function editPage(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    state: { values?: Values; errors?: FieldErrors; status?: number } = {},
  ) {
    const { accountId } = sessionOf(request);
    const plan = await core.plans.get(accountId, id);
    const uses = await core.plans.uses(accountId, id);
    return show(
      request,
      reply,
      "plan",
      { title: plan.name, ...section, status: state.status ?? 200 },
      { plan, uses, values: state.values ?? valuesOf(plan), errors: state.errors ?? {}, ...choices },
    );
  }

  app.get("/plans", need("plans:read"), (request, reply) => listPage(request, reply));

  app.post("/plans", need("plans:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const values = readValues(formOf(request));
    const result = await attempt(() => core.plans.create(accountId, inputOf(values)), "name");
    if ("errors" in result) return listPage(request, reply, { values, errors: result.errors, status: 400 });
    return reply.redirect("/console/plans?notice=plan-created", 303);
  });

  app.get("/plans/:id", need("plans:read"), (request, reply) => editPage(request, reply, idParam(request)));

  app.post("/plans/:id", need("plans:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const values = readValues(formOf(request));
    const result = await attempt(() => core.plans.update(accountId, id, inputOf(values)), "name");
    if ("errors" in result)
      return editPage(request, reply, id, { values, errors: result.errors, status: 400 });
    return reply.redirect(`/console/plans/${id}?notice=plan-updated`, 303);
  });

  app.post("/plans/:id/delete", need("plans:write"), async (request, reply) => {
    const id = idParam(request);
    // A plan in use is refused (409) with the counts: shown on its page, nothing deleted.
    const result = await attempt(() => core.plans.delete(sessionOf(request).accountId, id));
    if ("errors" in result) return editPage(request, reply, id, { errors: result.errors, status: 409 });
    return reply.redirect("/console/plans?notice=plan-deleted", 303);
  });
}

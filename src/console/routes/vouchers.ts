// Vouchers: create batches, look at a batch, print it as a sheet of cards (code, validity, network
// name) and export it as CSV; find single vouchers by code.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { VoucherBatch } from "../../core/activity/service.ts";
import type { Network } from "../../core/networks/service.ts";
import { MAX_BATCH } from "../../core/vouchers/rules.ts";
import type { Voucher } from "../../core/vouchers/service.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf, positiveId } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import {
  attempt,
  checkChosenPlan,
  idParam,
  PAGE_SIZE,
  pageNumber,
  pagerOf,
  planIdOf,
  queryText,
} from "./common.ts";

interface BatchFormValues {
  quantity: string;
  prefix: string;
  validity: string;
  validity_unit: string;
  usage_limit: string;
  session_timeout: string;
  session_timeout_unit: string;
  /** A plan's id, or "" for none. */
  plan_id: string;
}

const UNITS: Record<string, number> = { minutes: 60, hours: 3600, days: 86_400 };
const READ_CHUNK = 1000;
const NETWORK_CHOICES = 1000;

/** A number of units in seconds; NaN passes through so the service names the field. */
function seconds(amount: string, unit: string): number | undefined {
  if (amount === "") return undefined;
  if (!/^\d{1,9}$/.test(amount)) return Number.NaN;
  return Number(amount) * (UNITS[unit] ?? 1);
}

function wholeNumber(text: string): number | undefined {
  if (text === "") return undefined;
  return /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
}

/** One CSV field: quoted when it must be, and never read as a formula by a spreadsheet. */
function csvField(value: string | number | null): string {
  let text = value === null ? "" : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export async function voucherRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "vouchers" };

  async function allVouchers(accountId: number, batchId: number): Promise<Voucher[]> {
    const vouchers: Voucher[] = [];
    for (let page = 1; ; page++) {
      const chunk = await core.vouchers.list(accountId, { batchId }, { page, limit: READ_CHUNK });
      vouchers.push(...chunk.data);
      if (chunk.data.length < READ_CHUNK || vouchers.length >= chunk.total) return vouchers;
    }
  }

  async function vouchersPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: BatchFormValues,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const { accountId } = sessionOf(request);
    const search = queryText(request, "search").slice(0, 16);
    const [batches, found] = await Promise.all([
      core.activity.listBatches(accountId, {
        page: pageNumber(queryText(request, "page")),
        limit: PAGE_SIZE,
      }),
      search ? core.vouchers.list(accountId, { search }, { page: 1, limit: PAGE_SIZE }) : null,
    ]);
    const pager = pagerOf(batches, "/console/vouchers", { search });
    const plans = await core.plans.names(accountId);
    return show(
      request,
      reply,
      "vouchers",
      { title: "Vouchers", ...section, status },
      { batches: batches.data, pager, search, found, values, errors, maxBatch: MAX_BATCH, plans },
    );
  }

  app.get("/vouchers", need("vouchers:read"), (request, reply) =>
    vouchersPage(request, reply, {
      quantity: "20",
      prefix: "",
      validity: "1",
      validity_unit: "days",
      usage_limit: "1",
      session_timeout: "",
      session_timeout_unit: "hours",
      plan_id: "",
    }),
  );

  app.post("/vouchers/batches", need("vouchers:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const form = formOf(request);
    const values: BatchFormValues = {
      quantity: form.text("quantity"),
      prefix: form.text("prefix"),
      validity: form.text("validity"),
      validity_unit: form.text("validity_unit"),
      usage_limit: form.text("usage_limit"),
      session_timeout: form.text("session_timeout"),
      session_timeout_unit: form.text("session_timeout_unit"),
      plan_id: form.text("plan_id"),
    };
    const result = await attempt(async () => {
      await checkChosenPlan(core, accountId, planIdOf(values.plan_id));
      return core.vouchers.createBatch(accountId, {
        quantity: wholeNumber(values.quantity),
        prefix: values.prefix,
        validity: seconds(values.validity, values.validity_unit),
        usage_limit: wholeNumber(values.usage_limit),
        session_timeout: seconds(values.session_timeout, values.session_timeout_unit) ?? null,
        plan_id: planIdOf(values.plan_id),
      });
    });
    if ("errors" in result) return vouchersPage(request, reply, values, result.errors, 400);
    return reply.redirect(`/console/vouchers/batches/${result.ok.batch_id}?notice=batch-created`, 303);
  });

  async function batchPage(request: FastifyRequest, reply: FastifyReply, planError?: string) {
    const { accountId } = sessionOf(request);
    const batch = await core.activity.getBatch(accountId, idParam(request));
    const [vouchers, networks, plans] = await Promise.all([
      core.vouchers.list(
        accountId,
        { batchId: batch.id },
        { page: pageNumber(queryText(request, "page")), limit: 100 },
      ),
      core.networks.list(accountId, {}, { page: 1, limit: NETWORK_CHOICES }),
      core.plans.names(accountId),
    ]);
    const pager = pagerOf(vouchers, `/console/vouchers/batches/${batch.id}`, {});
    return show(
      request,
      reply,
      "batch",
      { title: `Voucher batch ${batch.id}`, ...section, status: planError ? 400 : 200 },
      { batch, vouchers: vouchers.data, pager, networks: networks.data, plans, planError },
    );
  }

  app.get("/vouchers/batches/:id", need("vouchers:read"), (request, reply) => batchPage(request, reply));

  app.post("/vouchers/batches/:id/plan", need("vouchers:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const planId = planIdOf(formOf(request).text("plan_id"));
    const result = await attempt(async () => {
      await checkChosenPlan(core, accountId, planId);
      return core.vouchers.setBatchPlan(accountId, id, planId);
    }, "plan_id");
    if ("errors" in result) return batchPage(request, reply, result.errors.plan_id ?? result.errors._form);
    return reply.redirect(`/console/vouchers/batches/${id}?notice=batch-plan-saved`, 303);
  });

  app.get("/vouchers/batches/:id/print", need("vouchers:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const batch: VoucherBatch = await core.activity.getBatch(accountId, idParam(request));
    const networkId = positiveId(queryText(request, "network"));
    let network: Network | null = null;
    if (networkId !== undefined) network = await core.networks.get(accountId, networkId);
    else {
      const only = await core.networks.list(accountId, {}, { page: 1, limit: 2 });
      if (only.total === 1) network = only.data[0] ?? null;
    }
    const vouchers = await allVouchers(accountId, batch.id);
    return show(
      request,
      reply,
      "batch-print",
      { title: `Vouchers of batch ${batch.id}`, ...section },
      { batch, vouchers, network },
    );
  });

  app.get("/vouchers/batches/:id/csv", need("vouchers:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const batch = await core.activity.getBatch(accountId, idParam(request));
    const vouchers = await allVouchers(accountId, batch.id);
    const header = [
      "code",
      "status",
      "validity_seconds",
      "usage_limit",
      "session_timeout_seconds",
      "created",
      "expires",
    ];
    const lines = [header.join(",")];
    for (const v of vouchers) {
      lines.push(
        [v.code, v.status, v.validity, v.usage_limit, v.session_timeout, v.created, v.expires]
          .map(csvField)
          .join(","),
      );
    }
    return reply
      .type("text/csv; charset=utf-8")
      .header("Content-Disposition", `attachment; filename="voucher-batch-${batch.id}.csv"`)
      .header("Cache-Control", "no-store")
      .send(`${lines.join("\r\n")}\r\n`);
  });
}

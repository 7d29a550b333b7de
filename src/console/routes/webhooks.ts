// Account > Webhooks: endpoints with their event selection (the secret is shown once, on the page
// creation and rotation lead to), enable/disable, delete after a confirmation page, "send test
// event", and each endpoint's delivery log with a resend button per delivery. Other accounts' ids
// answer 404.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { EVENT_KINDS } from "../../core/webhooks/rules.ts";
import type { Delivery, Webhook } from "../../core/webhooks/service.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam } from "./common.ts";
import { secretPage } from "./secret-pages.ts";

const DELIVERY_LOG = 50;

export interface WebhookFormValues {
  url: string;
  /** "all" or chosen kinds. */
  events: string[];
}

const blank: WebhookFormValues = { url: "", events: ["all"] };

export async function webhookRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "webhooks" };

  /** The latest delivery of each endpoint, for the list's "last delivery" column. */
  async function lastDeliveries(accountId: number, hooks: Webhook[]): Promise<Map<number, Delivery>> {
    const latest = await Promise.all(hooks.map((hook) => core.webhooks.deliveries(accountId, hook.id, 1)));
    const map = new Map<number, Delivery>();
    hooks.forEach((hook, i) => {
      const delivery = latest[i]?.[0];
      if (delivery) map.set(hook.id, delivery);
    });
    return map;
  }

  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: WebhookFormValues,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const { accountId } = sessionOf(request);
    const hooks = await core.webhooks.list(accountId);
    const last = await lastDeliveries(accountId, hooks);
    return show(
      request,
      reply,
      "webhooks",
      { title: "Webhooks", ...section, status },
      { hooks, last, values, errors, kinds: EVENT_KINDS },
    );
  }

  async function endpointPage(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    problem = "",
    status = 200,
  ) {
    const { accountId } = sessionOf(request);
    const hook = await core.webhooks.get(accountId, id);
    const deliveries = await core.webhooks.deliveries(accountId, id, DELIVERY_LOG);
    return show(
      request,
      reply,
      "webhook",
      { title: `Webhook ${hook.url}`, ...section, status },
      { hook, deliveries, problem, warnings: core.webhooks.urlWarnings(hook.url) },
    );
  }

  const redirectToSecret = secretPage(app, core, "webhooks", {
    gone: (id) => `/console/webhooks/${id}?notice=webhook-secret-shown`,
    async render(request, reply, id, { secret, event }) {
      const hook = await core.webhooks.get(sessionOf(request).accountId, id);
      const fresh = event === "created";
      return show(
        request,
        reply,
        "webhook-secret",
        { title: fresh ? "Webhook created" : "New signing secret", ...section },
        { hook, secret, fresh, warnings: core.webhooks.urlWarnings(hook.url) },
      );
    },
  });

  app.get("/webhooks", need("webhooks:read"), (request, reply) => listPage(request, reply, blank));

  app.post("/webhooks", need("webhooks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const form = formOf(request);
    const values: WebhookFormValues = { url: form.text("url"), events: form.all("events") };
    const result = await attempt(() =>
      core.webhooks.create(accountId, { url: values.url, events: values.events }),
    );
    if ("errors" in result) return listPage(request, reply, values, result.errors, 400);
    const { webhook, secret } = result.ok;
    return redirectToSecret(request, reply, webhook.id, { secret, event: "created" });
  });

  app.get("/webhooks/:id", need("webhooks:read"), (request, reply) =>
    endpointPage(request, reply, idParam(request)),
  );

  app.post("/webhooks/:id/enabled", need("webhooks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const enabled = formOf(request).text("enabled") === "1";
    const hook = await core.webhooks.update(accountId, idParam(request), { enabled });
    return reply.redirect(
      `/console/webhooks/${hook.id}?notice=${enabled ? "webhook-enabled" : "webhook-disabled"}`,
      303,
    );
  });

  app.post("/webhooks/:id/test", need("webhooks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const result = await attempt(() => core.webhooks.sendTest(accountId, id));
    if ("errors" in result) {
      return endpointPage(request, reply, id, Object.values(result.errors).join(" "), 400);
    }
    return reply.redirect(`/console/webhooks/${id}?notice=webhook-test-queued`, 303);
  });

  app.post("/webhooks/:id/deliveries/:delivery/resend", need("webhooks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const deliveryId = idParam(request, "delivery");
    const delivery = await core.webhooks.delivery(accountId, deliveryId);
    if (delivery.webhook_endpoint_id !== id) return endpointPage(request, reply, id, "", 404);
    const result = await attempt(() => core.webhooks.resend(accountId, deliveryId));
    if ("errors" in result) {
      return endpointPage(request, reply, id, Object.values(result.errors).join(" "), 400);
    }
    return reply.redirect(`/console/webhooks/${id}?notice=webhook-resent`, 303);
  });

  app.get("/webhooks/:id/rotate", need("webhooks:write"), async (request, reply) => {
    const hook = await core.webhooks.get(sessionOf(request).accountId, idParam(request));
    return show(
      request,
      reply,
      "webhook-rotate",
      { title: "Rotate the signing secret", ...section },
      { hook },
    );
  });

  app.post("/webhooks/:id/rotate", need("webhooks:write"), async (request, reply) => {
    const { webhook, secret } = await core.webhooks.rotateSecret(
      sessionOf(request).accountId,
      idParam(request),
    );
    return redirectToSecret(request, reply, webhook.id, { secret, event: "rotated" });
  });

  app.get("/webhooks/:id/delete", need("webhooks:write"), async (request, reply) => {
    const hook = await core.webhooks.get(sessionOf(request).accountId, idParam(request));
    return show(request, reply, "webhook-delete", { title: "Delete webhook", ...section }, { hook });
  });

  app.post("/webhooks/:id/delete", need("webhooks:write"), async (request, reply) => {
    await core.webhooks.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/webhooks?notice=webhook-deleted", 303);
  });
}

// Captive portals: list, create, edit, delete (after a confirmation page). A portal belongs to a
// network of the same account; its login URL is derived from PUBLIC_URL by the service.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CaptivePortal, PortalInput } from "../../core/portals/service.ts";
import { type ConsoleContext, sessionOf } from "../context.ts";
import { type Form, formOf, positiveId } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam, PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

export interface PortalFormValues {
  name: string;
  network_id: string;
  success_url: string;
}

/** Networks offered in a portal's network list. */
const NETWORK_CHOICES = 1000;

function readForm(form: Form): PortalFormValues {
  return {
    name: form.text("name"),
    network_id: form.text("network_id"),
    success_url: form.text("success_url"),
  };
}

function inputOf(values: PortalFormValues): PortalInput {
  return {
    name: values.name,
    network_id: values.network_id === "" ? undefined : (positiveId(values.network_id) ?? Number.NaN),
    success_url: values.success_url,
  };
}

export async function portalRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "portals" };

  async function formPage(
    request: FastifyRequest,
    reply: FastifyReply,
    portal: CaptivePortal | null,
    values: PortalFormValues,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const { accountId } = sessionOf(request);
    const networks = await core.networks.list(accountId, {}, { page: 1, limit: NETWORK_CHOICES });
    const title = portal ? `Edit ${portal.name}` : "New captive portal";
    return show(
      request,
      reply,
      "portal-form",
      { title, ...section, status },
      { portal, values, errors, networks: networks.data },
    );
  }

  app.get("/portals", async (request, reply) => {
    const { accountId } = sessionOf(request);
    const search = queryText(request, "search");
    const [page, networks] = await Promise.all([
      core.portals.list(
        accountId,
        { search: search || undefined },
        { page: pageNumber(queryText(request, "page")), limit: PAGE_SIZE },
      ),
      core.networks.list(accountId, {}, { page: 1, limit: NETWORK_CHOICES }),
    ]);
    const networkNames = Object.fromEntries(networks.data.map((n) => [n.id, n.name]));
    const pager = pagerOf(page, "/console/portals", { search });
    return show(
      request,
      reply,
      "portals",
      { title: "Captive portals", ...section },
      { portals: page.data, networkNames, pager, search, hasNetworks: networks.total > 0 },
    );
  });

  app.get("/portals/new", (request, reply) =>
    formPage(request, reply, null, { name: "", network_id: queryText(request, "network"), success_url: "" }),
  );

  app.post("/portals", async (request, reply) => {
    const { accountId } = sessionOf(request);
    const values = readForm(formOf(request));
    const result = await attempt(() => core.portals.create(accountId, inputOf(values)));
    if ("errors" in result) return formPage(request, reply, null, values, result.errors, 400);
    return reply.redirect("/console/portals?notice=portal-created", 303);
  });

  app.get("/portals/:id/edit", async (request, reply) => {
    const portal = await core.portals.get(sessionOf(request).accountId, idParam(request));
    const values = {
      name: portal.name,
      network_id: String(portal.network_id),
      success_url: portal.success_url,
    };
    return formPage(request, reply, portal, values);
  });

  app.post("/portals/:id", async (request, reply) => {
    const { accountId } = sessionOf(request);
    const portal = await core.portals.get(accountId, idParam(request));
    const values = readForm(formOf(request));
    const result = await attempt(() => core.portals.update(accountId, portal.id, inputOf(values)));
    if ("errors" in result) return formPage(request, reply, portal, values, result.errors, 400);
    return reply.redirect("/console/portals?notice=portal-updated", 303);
  });

  app.get("/portals/:id/delete", async (request, reply) => {
    const portal = await core.portals.get(sessionOf(request).accountId, idParam(request));
    return show(request, reply, "portal-delete", { title: `Delete ${portal.name}`, ...section }, { portal });
  });

  app.post("/portals/:id/delete", async (request, reply) => {
    await core.portals.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/portals?notice=portal-deleted", 303);
  });
}

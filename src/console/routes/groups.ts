// Groups: list, create and delete (after a confirmation page). Membership is managed on each
// user's page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf } from "../forms.ts";
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

interface GroupFormValues {
  name: string;
  description: string;
  /** A plan's id, or "" for none. */
  plan_id: string;
}

export async function groupRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "groups" };

  async function groupsPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: GroupFormValues,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const { accountId } = sessionOf(request);
    const search = queryText(request, "search");
    const page = await core.groups.list(accountId, search.slice(0, 100) || undefined, {
      page: pageNumber(queryText(request, "page")),
      limit: PAGE_SIZE,
    });
    const pager = pagerOf(page, "/console/groups", { search });
    const plans = await core.plans.names(accountId);
    return show(
      request,
      reply,
      "groups",
      { title: "Groups", ...section, status },
      { groups: page.data, pager, search, values, errors, plans },
    );
  }

  app.get("/groups", need("groups:read"), (request, reply) =>
    groupsPage(request, reply, { name: "", description: "", plan_id: "" }),
  );

  app.post("/groups", need("groups:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const form = formOf(request);
    const values = {
      name: form.text("name"),
      description: form.text("description"),
      plan_id: form.text("plan_id"),
    };
    const planId = planIdOf(values.plan_id);
    const result = await attempt(async () => {
      await checkChosenPlan(core, accountId, planId);
      return core.groups.create(accountId, { ...values, plan_id: planId });
    }, "name");
    if ("errors" in result) return groupsPage(request, reply, values, result.errors, 400);
    return reply.redirect("/console/groups?notice=group-created", 303);
  });

  /** The group's plan, from the select on its row of the list. */
  app.post("/groups/:id/plan", need("groups:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const planId = planIdOf(formOf(request).text("plan_id"));
    const result = await attempt(async () => {
      await checkChosenPlan(core, accountId, planId);
      return core.groups.update(accountId, id, { plan_id: planId });
    });
    if ("errors" in result) {
      const errors = { _form: `Plan ${result.errors.plan_id ?? result.errors._form ?? ""}` };
      return groupsPage(request, reply, { name: "", description: "", plan_id: "" }, errors, 400);
    }
    return reply.redirect("/console/groups?notice=group-updated", 303);
  });

  app.get("/groups/:id/delete", need("groups:write"), async (request, reply) => {
    const group = await core.groups.get(sessionOf(request).accountId, idParam(request));
    return show(request, reply, "group-delete", { title: `Delete ${group.name}`, ...section }, { group });
  });

  app.post("/groups/:id/delete", need("groups:write"), async (request, reply) => {
    await core.groups.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/groups?notice=group-deleted", 303);
  });
}

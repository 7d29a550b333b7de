// Groups: list, create and delete (after a confirmation page). Membership is managed on each
// user's page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam, PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

interface GroupFormValues {
  name: string;
  description: string;
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
    return show(
      request,
      reply,
      "groups",
      { title: "Groups", ...section, status },
      { groups: page.data, pager, search, values, errors },
    );
  }

  app.get("/groups", need("groups:read"), (request, reply) =>
    groupsPage(request, reply, { name: "", description: "" }),
  );

  app.post("/groups", need("groups:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const form = formOf(request);
    const values = { name: form.text("name"), description: form.text("description") };
    const result = await attempt(() => core.groups.create(accountId, values), "name");
    if ("errors" in result) return groupsPage(request, reply, values, result.errors, 400);
    return reply.redirect("/console/groups?notice=group-created", 303);
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

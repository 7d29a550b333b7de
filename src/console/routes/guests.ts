// Pending guests (issue 27): the account's verifications in progress, and the sponsor requests an
// admin of the account may approve (with a duration of the portal's choices) or deny from here, as
// the sponsor would from their email.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DecisionProblem } from "../../core/guests/service.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf } from "../forms.ts";
import { show } from "../views.ts";
import { idParam } from "./common.ts";

const PROBLEMS: Record<DecisionProblem, string> = {
  not_found: "That request does not exist.",
  used: "That request was already decided.",
  expired: "That request's approval window has passed.",
  bad_duration: "Choose one of the portal's durations.",
  portal_off: "The request's portal is switched off or gone.",
};

export async function guestRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "guests" };

  async function page(request: FastifyRequest, reply: FastifyReply, error = "", status = 200) {
    const { accountId } = sessionOf(request);
    const rows = await core.guests.listOpen(accountId);
    const portals = new Map<number, { title: string; durations: number[] }>();
    for (const id of new Set(rows.map((r) => r.portal_id))) {
      const portal = await core.portals.forGuests(id);
      if (portal) portals.set(id, { title: portal.title, durations: portal.verification.sponsorDurations });
    }
    const now = Math.floor(Date.now() / 1000);
    const requests = rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      status: r.status,
      name: r.name,
      email: r.email,
      phone: r.phone,
      sponsor: r.sponsor_email,
      delivery: r.delivery,
      created: new Date(r.created * 1000).toISOString().replace("T", " ").slice(0, 16),
      portal: portals.get(r.portal_id)?.title ?? `#${r.portal_id}`,
      durations: portals.get(r.portal_id)?.durations ?? [],
      decidable: r.kind === "sponsor" && r.status === "pending" && (r.secret_expires ?? 0) > now,
    }));
    return show(
      request,
      reply,
      "guests",
      { title: "Pending guests", ...section, status },
      { requests, error },
    );
  }

  app.get("/guests", need("users:read"), (request, reply) => page(request, reply));

  app.post("/guests/:id/decide", need("users:write"), async (request, reply) => {
    const session = sessionOf(request);
    const form = formOf(request);
    const approve = form.text("decision") === "approve";
    const result = await core.guests.decideById(session.accountId, idParam(request), {
      approve,
      duration: Number(form.text("duration")),
      by: `console:${session.email}`,
    });
    if (!result.ok)
      return page(request, reply, PROBLEMS[result.problem], result.problem === "bad_duration" ? 400 : 409);
    return reply.redirect(`/console/guests?notice=${approve ? "guest-approved" : "guest-denied"}`, 303);
  });
}

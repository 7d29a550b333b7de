// My sessions: the console sessions of the admin who is logged in (device, address, last seen,
// created), each of which they can end, this one included. Owners see and end a team member's
// sessions through the same page (routes/team.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Admin } from "../../core/admins/service.ts";
import type { Core } from "../../core/index.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { clearSessionCookie } from "../security.ts";
import { show } from "../views.ts";
import { idParam } from "./common.ts";

/** The sessions of the admin logged in, or of a team member (`member`, for an owner). */
export async function sessionsPage(core: Core, request: FastifyRequest, reply: FastifyReply, member?: Admin) {
  const session = sessionOf(request);
  const sessions = await core.admins.sessionsOf(session.accountId, member?.id ?? session.adminId);
  const { idleMs, maxMs } = core.admins.sessionLimits;
  return show(
    request,
    reply,
    "console-sessions",
    { title: member ? `Sessions of ${member.email}` : "My sessions", section: member ? "team" : "account" },
    {
      sessions,
      member: member ?? null,
      current: session.id,
      base: member ? `/console/team/${member.id}/sessions` : "/console/account/sessions",
      idleSeconds: idleMs / 1000,
      maxSeconds: maxMs / 1000,
    },
  );
}

export async function accountRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  app.get("/account/sessions", need("self"), (request, reply) => sessionsPage(core, request, reply));

  app.post("/account/sessions/:id/end", need("self"), async (request, reply) => {
    const session = sessionOf(request);
    const id = idParam(request);
    await core.admins.endSession(session.accountId, session.adminId, id);
    if (id !== session.id) return reply.redirect("/console/account/sessions?notice=session-ended", 303);
    clearSessionCookie(request, reply);
    return reply.redirect("/console/login?notice=logged-out", 303);
  });
}

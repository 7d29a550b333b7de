// Account > Team: the account's console users with their roles; owners (team:write) invite new
// members by email, change roles, remove members and end their sessions. The invitation's link
// leads to /console/invite/<token>, open without a session, where the invitee chooses a password.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ROLE_NAMES, ROLES } from "../../core/admins/roles.ts";
import { InvitationError } from "../../core/admins/team.ts";
import { ConflictError, ValidationError } from "../../core/shared/errors.ts";
import { addressGroup } from "../../http/rate-limit.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf } from "../forms.ts";
import { preSessionToken } from "../security.ts";
import { type FieldErrors, fieldErrors, show } from "../views.ts";
import { sessionsPage } from "./account.ts";
import { attempt, idParam } from "./common.ts";

const ROLE_ENTRIES = ROLE_NAMES.map((name) => [name, ROLES[name]] as const);

export async function teamRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "team" };

  async function teamPage(
    request: FastifyRequest,
    reply: FastifyReply,
    options: {
      values?: { email: string; role: string };
      errors?: FieldErrors;
      error?: string;
      status?: number;
    } = {},
  ) {
    const session = sessionOf(request);
    const [members, invitations] = await Promise.all([
      core.team.members(session.accountId),
      session.can("team:write") ? core.team.openInvitations(session.accountId) : [],
    ]);
    return show(
      request,
      reply,
      "team",
      { title: "Team", ...section, status: options.status ?? 200 },
      {
        members,
        invitations,
        roles: ROLE_ENTRIES,
        values: options.values ?? { email: "", role: "help_desk" },
        errors: options.errors ?? {},
        error: options.error ?? "",
      },
    );
  }

  app.get("/team", need("team:read"), (request, reply) => teamPage(request, reply));

  app.post("/team/invites", need("team:write"), async (request, reply) => {
    const session = sessionOf(request);
    const form = formOf(request);
    const values = { email: form.text("email"), role: form.text("role") };
    const result = await attempt(async () => {
      const account = await core.accounts.get(session.accountName);
      return core.team.invite(account, session, values);
    }, "email");
    if ("errors" in result) return teamPage(request, reply, { values, errors: result.errors, status: 400 });
    return reply.redirect("/console/team?notice=invite-sent", 303);
  });

  app.post("/team/invites/:id/withdraw", need("team:write"), async (request, reply) => {
    await core.team.withdraw(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/team?notice=invite-withdrawn", 303);
  });

  app.post("/team/:id/role", need("team:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    try {
      await core.team.setRole(accountId, id, formOf(request).text("role"));
    } catch (error) {
      if (!(error instanceof ConflictError || error instanceof ValidationError)) throw error;
      return teamPage(request, reply, { error: error.message, status: error.status });
    }
    return reply.redirect("/console/team?notice=role-changed", 303);
  });

  app.get("/team/:id/remove", need("team:write"), async (request, reply) => {
    const member = await core.team.member(sessionOf(request).accountId, idParam(request));
    return show(request, reply, "team-remove", { title: "Remove team member", ...section }, { member });
  });

  app.post("/team/:id/remove", need("team:write"), async (request, reply) => {
    try {
      await core.team.remove(sessionOf(request).accountId, idParam(request));
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      return teamPage(request, reply, { error: error.message, status: 409 });
    }
    return reply.redirect("/console/team?notice=member-removed", 303);
  });

  app.get("/team/:id/sessions", need("team:write"), async (request, reply) => {
    const member = await core.team.member(sessionOf(request).accountId, idParam(request));
    return sessionsPage(core, request, reply, member);
  });

  app.post("/team/:id/sessions/:session/end", need("team:write"), async (request, reply) => {
    const id = idParam(request);
    await core.admins.endSession(sessionOf(request).accountId, id, idParam(request, "session"));
    return reply.redirect(`/console/team/${id}/sessions?notice=session-ended`, 303);
  });

  // The invitation's link: no session, the double-submit CSRF token of the login form.
  const open = { config: { consolePublic: true } };

  function invitePage(
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    invitation: Awaited<ReturnType<typeof core.team.lookup>>,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const csrf = preSessionToken(request, reply);
    const title = "Join the team";
    return show(request, reply, "invite", { title, status, csrf }, { invitation, token, errors });
  }

  function refused(request: FastifyRequest, reply: FastifyReply, error: InvitationError) {
    return show(
      request,
      reply,
      "error",
      { title: "Invitation not valid", status: 400 },
      { message: error.message },
    );
  }

  app.get<{ Params: { token: string } }>("/invite/:token", open, async (request, reply) => {
    const { token } = request.params;
    try {
      return invitePage(request, reply, token, await core.team.lookup(token));
    } catch (error) {
      if (error instanceof InvitationError) return refused(request, reply, error);
      throw error;
    }
  });

  app.post<{ Params: { token: string } }>("/invite/:token", open, async (request, reply) => {
    const { token } = request.params;
    const form = formOf(request);
    const password = form.raw("password");
    try {
      const invitation = await core.team.lookup(token);
      if (password !== form.raw("password_confirm")) {
        const errors = { password_confirm: "does not match the password" };
        return invitePage(request, reply, token, invitation, errors, 400);
      }
      try {
        await core.team.accept(token, password, addressGroup(request.ip));
      } catch (error) {
        if (error instanceof ValidationError)
          return invitePage(request, reply, token, invitation, fieldErrors(error.details), 400);
        if (error instanceof ConflictError)
          return invitePage(request, reply, token, invitation, { _form: error.message }, 409);
        throw error;
      }
    } catch (error) {
      if (error instanceof InvitationError) return refused(request, reply, error);
      throw error;
    }
    return reply.redirect("/console/login?notice=invite-accepted", 303);
  });
}

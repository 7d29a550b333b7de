// A console user's own sign-in security (issue 29 point 2), and the account's requirement:
//   GET  /console/security                       TOTP, passkeys, recovery codes, the requirement
//   GET  /console/security/totp                  a new authenticator app: QR code and key
//   POST /console/security/totp                  confirmed by its first code
//   POST /console/security/totp/remove
//   POST /console/security/passkeys              a new passkey (the browser's answer, a name)
//   POST /console/security/passkeys/<id>         renamed
//   POST /console/security/passkeys/<id>/remove
//   POST /console/security/recovery-codes        new codes; GET shows them once
//   POST /console/security/requirement           a second factor required of everyone, or not
// The passkey page's challenge waits among the session's pending secrets, taken by the answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AdminRef } from "../../core/admins/second-factors.ts";
import type { ConsoleSession } from "../../core/admins/service.ts";
import { AppError, ValidationError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf, positiveId } from "../forms.ts";
import { keepRecoveryCodes, optionsJson, takeRecoveryCodes, totpSetupView } from "../two-factor-view.ts";
import { type FieldErrors, fieldErrors, show, webauthnScripts } from "../views.ts";
import { safeNext } from "./auth.ts";

const CHALLENGE = "passkey-registration";

const refOf = (session: ConsoleSession): AdminRef => ({
  accountId: session.accountId,
  adminId: session.adminId,
  email: session.email,
});

export async function securityRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const factors = core.admins.factors;
  const page = { title: "Sign-in security", section: "security" };

  async function securityPage(
    request: FastifyRequest,
    reply: FastifyReply,
    problem: { error?: string; errors?: FieldErrors; status?: number } = {},
  ) {
    const session = sessionOf(request);
    const who = refOf(session);
    const options = await factors.passkeyRegistration(who);
    await core.admins.pendingSecrets.keep(session, CHALLENGE, {
      secret: options.challenge,
      event: "created",
    });
    return show(
      request,
      reply,
      "security",
      { ...page, status: problem.status ?? 200 },
      {
        status: await factors.status(who),
        options: optionsJson(options),
        error: problem.error ?? "",
        errors: problem.errors ?? {},
        scripts: webauthnScripts(),
      },
    );
  }

  /** A refusal (a conflict, a missing passkey) shown on the page, not as a page of its own. */
  async function orPage(request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>) {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ValidationError)
        return securityPage(request, reply, { errors: fieldErrors(error.details), status: 400 });
      if (error instanceof AppError && error.status < 500)
        return securityPage(request, reply, { error: error.message, status: error.status });
      throw error;
    }
  }

  /** After a factor was added: the session counts as proved, and first recovery codes are shown. */
  async function added(reply: FastifyReply, session: ConsoleSession, codes: string[] | null, notice: string) {
    if (!codes) return reply.redirect(`/console/security?notice=${notice}`, 303);
    await keepRecoveryCodes(core, session, codes);
    return reply.redirect("/console/security/recovery-codes", 303);
  }

  app.get("/security", need("self"), async (request, reply) => securityPage(request, reply));

  async function totpPage(
    request: FastifyRequest,
    reply: FastifyReply,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const enrolment = await factors.totpEnrolment(refOf(sessionOf(request)));
    return show(
      request,
      reply,
      "totp-page",
      { ...page, title: "Set up an authenticator app", status },
      { totp: await totpSetupView(enrolment), action: "/console/security", errors },
    );
  }

  app.get("/security/totp", need("self"), async (request, reply) => totpPage(request, reply));

  app.post("/security/totp", need("self"), async (request, reply) => {
    const session = sessionOf(request);
    try {
      const codes = await factors.confirmTotp(refOf(session), formOf(request).text("code"));
      await factors.markSession(refOf(session), session.id, "totp");
      return added(reply, session, codes, "totp-on");
    } catch (error) {
      if (error instanceof ValidationError) return totpPage(request, reply, fieldErrors(error.details), 400);
      throw error;
    }
  });

  app.post("/security/totp/remove", need("self"), async (request, reply) =>
    orPage(request, reply, async () => {
      await factors.removeTotp(refOf(sessionOf(request)));
      return reply.redirect("/console/security?notice=totp-off", 303);
    }),
  );

  app.post("/security/passkeys", need("self"), async (request, reply) =>
    orPage(request, reply, async () => {
      const session = sessionOf(request);
      const form = formOf(request);
      const challenge = await core.admins.pendingSecrets.take(session, CHALLENGE);
      if (!challenge) throw new AppError(409, "This page was open too long: add the passkey again.");
      const { recoveryCodes } = await factors.registerPasskey(
        refOf(session),
        form.raw("credential"),
        challenge.secret,
        form.text("name"),
      );
      await factors.markSession(refOf(session), session.id, "passkey");
      return added(reply, session, recoveryCodes, "passkey-added");
    }),
  );

  app.post<{ Params: { id: string } }>("/security/passkeys/:id", need("self"), async (request, reply) =>
    orPage(request, reply, async () => {
      const id = positiveId(request.params.id) ?? 0;
      await factors.renamePasskey(refOf(sessionOf(request)), id, formOf(request).text("name"));
      return reply.redirect("/console/security?notice=passkey-renamed", 303);
    }),
  );

  app.post<{ Params: { id: string } }>(
    "/security/passkeys/:id/remove",
    need("self"),
    async (request, reply) =>
      orPage(request, reply, async () => {
        await factors.removePasskey(refOf(sessionOf(request)), positiveId(request.params.id) ?? 0);
        return reply.redirect("/console/security?notice=passkey-removed", 303);
      }),
  );

  app.post("/security/recovery-codes", need("self"), async (request, reply) =>
    orPage(request, reply, async () => {
      const session = sessionOf(request);
      const codes = await factors.regenerateRecoveryCodes(refOf(session));
      await keepRecoveryCodes(core, session, codes);
      return reply.redirect("/console/security/recovery-codes", 303);
    }),
  );

  app.get<{ Querystring: { next?: string } }>(
    "/security/recovery-codes",
    need("self"),
    async (request, reply) => {
      const codes = await takeRecoveryCodes(core, sessionOf(request));
      if (!codes) return reply.redirect("/console/security?notice=codes-shown", 303);
      const next = safeNext(request.query.next ?? "/console/security");
      return show(request, reply, "recovery-codes", { ...page, title: "Recovery codes" }, { codes, next });
    },
  );

  app.post("/security/requirement", need("team:write"), async (request, reply) =>
    orPage(request, reply, async () => {
      const session = sessionOf(request);
      const on = formOf(request).text("required") === "1";
      await factors.setRequired(refOf(session), session.id, on);
      return reply.redirect(`/console/security?notice=second-factor-${on ? "required" : "optional"}`, 303);
    }),
  );
}

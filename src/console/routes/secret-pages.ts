// Secrets made by a console form (API keys, webhook and network secrets) follow Post/Redirect/Get:
// the POST keeps the secret in the server-side session and answers 303 to the secret's own page,
// which takes it out as it shows it. A reload or Back then finds nothing there, so the secret is
// never shown twice and nothing is made again: the browser is sent on to the resource's page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { PendingSecret } from "../../core/admins/pending-secrets.ts";
import type { Core } from "../../core/index.ts";
import { need, sessionOf } from "../context.ts";
import { idParam } from "./common.ts";

/** The path segment of what the secret belongs to: /console/<kind>/<id>/secret shows it. */
export type SecretKind = "keys" | "webhooks" | "networks";

export interface SecretPage {
  /** Where the page sends a reload once the secret was shown (or expired): a page with a notice. */
  gone(id: number): string;
  render(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    pending: PendingSecret,
  ): FastifyReply | Promise<FastifyReply>;
}

/** How a POST that made a secret answers: keep it for this session, redirect (303) to its page. */
export type RedirectToSecret = (
  request: FastifyRequest,
  reply: FastifyReply,
  id: number,
  pending: PendingSecret,
) => Promise<FastifyReply>;

/** Registers GET /<kind>/:id/secret, which shows a pending secret once, and returns its redirect. */
export function secretPage(
  app: FastifyInstance,
  core: Core,
  kind: SecretKind,
  page: SecretPage,
): RedirectToSecret {
  const subject = (id: number) => `${kind}:${id}`;
  // Only the session that made the secret finds it; made by a form its role may use.
  const permission =
    kind === "networks" ? "networks:write" : kind === "keys" ? "keys:write" : "webhooks:write";
  app.get(`/${kind}/:id/secret`, need(permission), async (request, reply) => {
    const id = idParam(request);
    const pending = await core.admins.pendingSecrets.take(sessionOf(request), subject(id));
    if (!pending) return reply.redirect(page.gone(id), 303);
    return page.render(request, reply, id, pending);
  });
  return async (request, reply, id, pending) => {
    await core.admins.pendingSecrets.keep(sessionOf(request), subject(id), pending);
    return reply.redirect(`/console/${kind}/${id}/secret`, 303);
  };
}

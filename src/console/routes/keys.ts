// Account > API keys: generate (the value is shown once, on the page the form leads to), list the
// active keys masked with created and last-used dates, revoke after a confirmation page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { RESOURCES } from "../../core/keys/permissions.ts";
import { type KeyListing, MAX_KEY_RATE_LIMIT } from "../../core/keys/service.ts";
import { NotFoundError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam } from "./common.ts";
import { secretPage } from "./secret-pages.ts";

const ACCESS = ["full", "read", "custom"] as const;

export interface KeyFormValues {
  name: string;
  access: string;
  /** resource -> "none" | "read" | "write" */
  grants: Record<string, string>;
  allow_ips: string;
  rate_limit: string;
}

const blank: KeyFormValues = { name: "", access: "full", grants: {}, allow_ips: "", rate_limit: "" };

function readForm(form: Form): KeyFormValues {
  const grants: Record<string, string> = {};
  for (const resource of RESOURCES) {
    const choice = form.text(`grant_${resource}`);
    grants[resource] = choice === "read" || choice === "write" ? choice : "none";
  }
  const access = form.text("access");
  return {
    name: form.text("name"),
    access: (ACCESS as readonly string[]).includes(access) ? access : "full",
    grants,
    allow_ips: form.text("allow_ips"),
    rate_limit: form.text("rate_limit"),
  };
}

/** "full", "read", or the chosen per-resource grants ("" when none: the service says so). */
function permissionsOf(values: KeyFormValues): string {
  if (values.access !== "custom") return values.access;
  return Object.entries(values.grants)
    .filter(([, choice]) => choice !== "none")
    .map(([resource, choice]) => `${resource}:${choice}`)
    .join(",");
}

export async function keyRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  async function ownKey(accountId: number, id: number): Promise<KeyListing> {
    const key = (await core.keys.list(accountId)).find((k) => k.id === id && k.revoked === null);
    if (!key) throw new NotFoundError(`no active API key ${id} in this account`);
    return key;
  }

  async function keysPage(
    request: FastifyRequest,
    reply: FastifyReply,
    values: KeyFormValues,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const { accountId } = sessionOf(request);
    const keys = await core.keys.list(accountId);
    return show(
      request,
      reply,
      "keys",
      { title: "API keys", section: "keys", status },
      {
        active: keys.filter((k) => k.revoked === null).reverse(),
        revoked: keys
          .filter((k) => k.revoked !== null)
          .slice(-10)
          .reverse(),
        values,
        errors,
        resources: RESOURCES,
        maxRateLimit: MAX_KEY_RATE_LIMIT,
      },
    );
  }

  const redirectToKey = secretPage(app, core, "keys", {
    gone: () => "/console/keys?notice=key-shown",
    async render(request, reply, id, { secret }) {
      const listing = (await core.keys.list(sessionOf(request).accountId)).find((k) => k.id === id);
      const title = "API key created";
      return show(request, reply, "key-created", { title, section: "keys" }, { key: secret, listing });
    },
  });

  app.get("/keys", need("keys:read"), (request, reply) => keysPage(request, reply, blank));

  app.post("/keys", need("keys:write"), async (request, reply) => {
    const session = sessionOf(request);
    const form = formOf(request);
    const values = readForm(form);
    const rateLimit = form.integer("rate_limit");
    const result = await attempt(async () => {
      const account = await core.accounts.get(session.accountName);
      return core.keys.create(account, {
        name: values.name,
        permissions: permissionsOf(values),
        allowIps: values.allow_ips
          .split(/[\s,]+/)
          .filter(Boolean)
          .join(","),
        rateLimit,
      });
    });
    if ("errors" in result) return keysPage(request, reply, values, result.errors, 400);
    const { key, row } = result.ok;
    return redirectToKey(request, reply, row.id, { secret: key, event: "created" });
  });

  app.get("/keys/:id/revoke", need("keys:write"), async (request, reply) => {
    const key = await ownKey(sessionOf(request).accountId, idParam(request));
    return show(request, reply, "key-revoke", { title: "Revoke API key", section: "keys" }, { key });
  });

  app.post("/keys/:id/revoke", need("keys:write"), async (request, reply) => {
    const key = await ownKey(sessionOf(request).accountId, idParam(request));
    await core.keys.revoke(key.id);
    return reply.redirect("/console/keys?notice=key-revoked", 303);
  });
}

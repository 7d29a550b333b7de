// Identity providers (issue 26): list, create (from a preset: Google, Microsoft Entra ID, Okta, a
// generic SAML IdP), edit, delete after a confirmation page; the account's console sign-in setting
// (password login on or off). The client secret is write-only: the form never shows it, an empty
// field keeps it. SAML metadata comes as a file (multipart, parsed in this context only) or an
// address Wisp reads.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { IDP_PRESETS } from "../../core/idp/rules.ts";
import type { IdentityProvider, ProviderInput } from "../../core/idp/service.ts";
import { ValidationError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf } from "../forms.ts";
import { MultipartForm, registerMultipartParser } from "../multipart.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam, queryText } from "./common.ts";

export interface IdpFormValues {
  name: string;
  kind: string;
  display_name: string;
  enabled: boolean;
  issuer: string;
  client_id: string;
  scopes: string;
  user_claim: string;
  group_claim: string;
  allowed_domains: string;
  metadata_url: string;
  user_attribute: string;
  group_attribute: string;
  console_login: boolean;
  admin_domains: string;
  /** One "IdP group = Wisp group" a line. */
  group_mappings: string;
}

const PRESET_LABELS: Record<keyof typeof IDP_PRESETS, string> = {
  google: "Google",
  entra: "Microsoft Entra ID",
  okta: "Okta",
  saml: "Generic SAML 2.0 IdP",
};

function blank(preset: string): IdpFormValues {
  const presets = IDP_PRESETS as Record<string, Record<string, string>>;
  const chosen: Record<string, string> = presets[preset] ?? presets.google ?? {};
  return {
    name: preset in IDP_PRESETS ? preset : "",
    kind: chosen.kind ?? "oidc",
    display_name: chosen.display_name ?? "",
    enabled: true,
    issuer: chosen.issuer ?? "",
    client_id: "",
    scopes: chosen.scopes ?? "openid email profile",
    user_claim: chosen.user_claim ?? "sub",
    group_claim: chosen.group_claim ?? "",
    allowed_domains: "",
    metadata_url: "",
    user_attribute: chosen.user_attribute ?? "",
    group_attribute: chosen.group_attribute ?? "",
    console_login: false,
    admin_domains: "",
    group_mappings: "",
  };
}

function valuesOf(p: IdentityProvider): IdpFormValues {
  return {
    ...p,
    allowed_domains: p.allowed_domains.join("\n"),
    admin_domains: p.admin_domains.join("\n"),
    group_mappings: p.group_mappings.map((m) => `${m.idp_group} = ${m.group}`).join("\n"),
  };
}

function readForm(form: Form): IdpFormValues {
  return {
    name: form.text("name"),
    kind: form.text("kind"),
    display_name: form.text("display_name"),
    enabled: form.checked("enabled"),
    issuer: form.text("issuer"),
    client_id: form.text("client_id"),
    scopes: form.text("scopes"),
    user_claim: form.text("user_claim"),
    group_claim: form.text("group_claim"),
    allowed_domains: form.text("allowed_domains"),
    metadata_url: form.text("metadata_url"),
    user_attribute: form.text("user_attribute"),
    group_attribute: form.text("group_attribute"),
    console_login: form.checked("console_login"),
    admin_domains: form.text("admin_domains"),
    group_mappings: form.text("group_mappings"),
  };
}

/** "IdP group = Wisp group" lines; a line without "=" is a field error. */
function mappingsOf(text: string): ProviderInput["group_mappings"] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const eq = line.lastIndexOf("=");
      if (eq < 1)
        throw ValidationError.field(
          "group_mappings",
          `must be lines of "IdP group = Wisp group" (not "${line}")`,
        );
      return { idp_group: line.slice(0, eq).trim(), group: line.slice(eq + 1).trim() };
    });
}

/** The service's input from the form; the secret and metadata only when given. */
function inputOf(
  values: IdpFormValues,
  request: FastifyRequest,
  before: IdentityProvider | null,
): ProviderInput {
  const creating = before === null;
  const form = formOf(request);
  const secret = form.raw("client_secret");
  const file = request.body instanceof MultipartForm ? request.body.files.get("metadata_file") : undefined;
  const oidc = values.kind === "oidc";
  return {
    ...(creating ? { name: values.name, kind: values.kind } : {}),
    display_name: values.display_name || (creating ? values.name : undefined),
    enabled: values.enabled,
    console_login: values.console_login,
    allowed_domains: [values.allowed_domains],
    admin_domains: [values.admin_domains],
    group_mappings: mappingsOf(values.group_mappings),
    ...(oidc
      ? {
          issuer: values.issuer,
          client_id: values.client_id,
          scopes: values.scopes,
          user_claim: values.user_claim,
          group_claim: values.group_claim,
          client_secret: form.checked("client_secret_remove") ? "" : secret === "" ? undefined : secret,
        }
      : {
          user_attribute: values.user_attribute,
          group_attribute: values.group_attribute,
          // A new file, or the address read again when it changed (or on create).
          metadata: file ? file.data.toString("utf8") : undefined,
          metadata_url:
            file || values.metadata_url === "" || values.metadata_url === before?.metadata_url
              ? undefined
              : values.metadata_url,
        }),
  };
}

export async function identityProviderRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "idp" };

  function formPage(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: IdentityProvider | null,
    values: IdpFormValues,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const title = provider ? `Edit ${provider.display_name}` : "New identity provider";
    return show(request, reply, "idp-form", { title, ...section, status }, { provider, values, errors });
  }

  app.get("/identity-providers", need("identityproviders:read"), async (request, reply) => {
    const session = sessionOf(request);
    const [providers, passwordLogin] = await Promise.all([
      core.idp.list(session.accountId),
      core.consoleSso.passwordLogin(session.accountId),
    ]);
    const viaSso = providers.find((p) => p.id === session.providerId && p.enabled && p.console_login);
    return show(
      request,
      reply,
      "idps",
      { title: "Identity providers", ...section },
      { providers, presets: PRESET_LABELS, passwordLogin, viaSso: viaSso?.display_name ?? "" },
    );
  });

  app.get("/identity-providers/new", need("identityproviders:write"), (request, reply) =>
    formPage(request, reply, null, blank(queryText(request, "preset"))),
  );

  app.get("/identity-providers/:id", need("identityproviders:read"), async (request, reply) => {
    const provider = await core.idp.get(sessionOf(request).accountId, idParam(request));
    return formPage(request, reply, provider, valuesOf(provider));
  });

  // Create and edit take a metadata file: multipart forms (and plain ones) in this context.
  await app.register(async (forms) => {
    registerMultipartParser(forms);
    forms.post("/identity-providers", need("identityproviders:write"), async (request, reply) => {
      const { accountId } = sessionOf(request);
      const values = readForm(formOf(request));
      const result = await attempt(() => core.idp.create(accountId, inputOf(values, request, null)), "name");
      if ("errors" in result) return formPage(request, reply, null, values, result.errors, 400);
      return reply.redirect(`/console/identity-providers/${result.ok.id}?notice=idp-created`, 303);
    });

    forms.post("/identity-providers/:id", need("identityproviders:write"), async (request, reply) => {
      const { accountId } = sessionOf(request);
      const provider = await core.idp.get(accountId, idParam(request));
      const values = { ...readForm(formOf(request)), name: provider.name, kind: provider.kind };
      const result = await attempt(() =>
        core.idp.update(accountId, provider.id, inputOf(values, request, provider)),
      );
      if ("errors" in result) return formPage(request, reply, provider, values, result.errors, 400);
      return reply.redirect(`/console/identity-providers/${provider.id}?notice=idp-updated`, 303);
    });
  });

  app.get("/identity-providers/:id/delete", need("identityproviders:write"), async (request, reply) => {
    const provider = await core.idp.get(sessionOf(request).accountId, idParam(request));
    return show(
      request,
      reply,
      "idp-delete",
      { title: `Delete ${provider.display_name}`, ...section },
      { provider },
    );
  });

  app.post("/identity-providers/:id/delete", need("identityproviders:write"), async (request, reply) => {
    await core.idp.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/identity-providers?notice=idp-deleted", 303);
  });

  app.post("/identity-providers/password-login", need("team:write"), async (request, reply) => {
    const on = formOf(request).text("password_login") === "on";
    await core.consoleSso.setPasswordLogin(sessionOf(request), on);
    return reply.redirect(`/console/identity-providers?notice=password-login-${on ? "on" : "off"}`, 303);
  });
}

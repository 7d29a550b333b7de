// Networks (the RADIUS clients of a site): list, create (secret shown once, on the page the form
// leads to), a page with the RADIUS and WPA-Enterprise settings to type into an access point and the latest
// authentications, edit, rotate the secret (shown once, likewise), delete after a confirmation page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { GATEWAY_VENDORS } from "../../core/networks/rules.ts";
import type { Network, NetworkInput } from "../../core/networks/service.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam, PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";
import { eapSettings } from "./eap.ts";
import { type RadsecRefusal, radsecPanel, radsecRoutes } from "./radsec.ts";
import { secretPage } from "./secret-pages.ts";

export interface NetworkFormValues {
  name: string;
  nas_ip: string;
  secret: string;
  nas_identifier: string;
  description: string;
  require_message_authenticator: boolean;
  coa_enabled: boolean;
  coa_port: string;
  coa_fallback: string;
  coa_rate: string;
  interim_interval: string;
  stale_after: string;
  eap_method: string;
  mab_mode: string;
  mab_password: string;
  /** Write-only: empty keeps the stored one. */
  mab_secret: string;
  vendor: string;
  /** IANA name; empty: the account's. */
  time_zone: string;
}

/** A whole number typed in a form; empty: not given; anything else NaN, which the service refuses. */
function whole(text: string): number | undefined {
  if (text === "") return undefined;
  return /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
}

const RECENT_AUTHENTICATIONS = 25;

function readForm(form: Form): NetworkFormValues {
  return {
    name: form.text("name"),
    nas_ip: form.text("nas_ip"),
    secret: form.raw("secret"),
    nas_identifier: form.text("nas_identifier"),
    description: form.text("description"),
    require_message_authenticator: form.checked("require_message_authenticator"),
    coa_enabled: form.checked("coa_enabled"),
    coa_port: form.text("coa_port"),
    coa_fallback: form.text("coa_fallback"),
    coa_rate: form.text("coa_rate"),
    interim_interval: form.text("interim_interval"),
    stale_after: form.text("stale_after"),
    eap_method: form.text("eap_method"),
    mab_mode: form.text("mab_mode"),
    mab_password: form.text("mab_password"),
    mab_secret: form.raw("mab_secret"),
    vendor: form.text("vendor"),
    time_zone: form.text("time_zone"),
  };
}

function valuesOf(network: Network): NetworkFormValues {
  return {
    ...network,
    secret: "",
    mab_secret: "",
    coa_port: String(network.coa_port),
    coa_rate: String(network.coa_rate),
    interim_interval: String(network.interim_interval),
    stale_after: String(network.stale_after),
    time_zone: network.time_zone ?? "",
  };
}

function inputOf(values: NetworkFormValues, withSecret: boolean): NetworkInput {
  return {
    name: values.name,
    nas_ip: values.nas_ip,
    secret: withSecret && values.secret !== "" ? values.secret : undefined,
    nas_identifier: values.nas_identifier,
    description: values.description,
    require_message_authenticator: values.require_message_authenticator,
    coa_enabled: values.coa_enabled,
    coa_port: whole(values.coa_port),
    coa_fallback: values.coa_fallback === "" ? undefined : values.coa_fallback,
    coa_rate: whole(values.coa_rate),
    interim_interval: whole(values.interim_interval),
    stale_after: whole(values.stale_after),
    // A form without the field (an older page) keeps the stored method.
    eap_method: values.eap_method === "" ? undefined : values.eap_method,
    mab_mode: values.mab_mode === "" ? undefined : values.mab_mode,
    mab_password: values.mab_password === "" ? undefined : values.mab_password,
    mab_secret: values.mab_secret === "" ? undefined : values.mab_secret,
    vendor: values.vendor === "" ? undefined : values.vendor,
    // Empty clears it: the network follows the account's time zone.
    time_zone: values.time_zone,
  };
}

export async function networkRoutes(app: FastifyInstance, context: ConsoleContext): Promise<void> {
  const { core } = context;
  const section = { section: "networks" };

  function formPage(
    request: FastifyRequest,
    reply: FastifyReply,
    network: Network | null,
    values: NetworkFormValues,
    errors: FieldErrors = {},
    status = 200,
  ) {
    const title = network ? `Edit ${network.name}` : "New network";
    return show(
      request,
      reply,
      "network-form",
      { title, ...section, status },
      { network, values, errors, vendors: GATEWAY_VENDORS },
    );
  }

  const redirectToSecret = secretPage(app, core, "networks", {
    gone: (id) => `/console/networks/${id}?notice=network-secret-shown`,
    async render(request, reply, id, { secret, event }) {
      const network = await core.networks.get(sessionOf(request).accountId, id);
      const title = event === "created" ? "Network created" : "New shared secret";
      return show(
        request,
        reply,
        "network-secret",
        { title, ...section },
        { network, secret, radius: core.activity.radiusSettings() },
      );
    },
  });

  app.get("/networks", need("networks:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const search = queryText(request, "search");
    const page = await core.networks.list(
      accountId,
      { search: search || undefined },
      { page: pageNumber(queryText(request, "page")), limit: PAGE_SIZE },
    );
    const pager = pagerOf(page, "/console/networks", { search });
    return show(
      request,
      reply,
      "networks",
      { title: "Networks", ...section },
      { networks: page.data, pager, search },
    );
  });

  app.get("/networks/new", need("networks:write"), (request, reply) =>
    formPage(request, reply, null, {
      name: "",
      nas_ip: "",
      secret: "",
      nas_identifier: "",
      description: "",
      require_message_authenticator: false,
      coa_enabled: false,
      coa_port: "3799",
      coa_fallback: "none",
      coa_rate: "20",
      interim_interval: "0",
      stale_after: "0",
      eap_method: "peap",
      mab_mode: "off",
      mab_password: "mac",
      mab_secret: "",
      vendor: "generic",
      time_zone: "",
    }),
  );

  app.post("/networks", need("networks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const values = readForm(formOf(request));
    const result = await attempt(() => core.networks.create(accountId, inputOf(values, true)), "nas_ip");
    if ("errors" in result) return formPage(request, reply, null, values, result.errors, 400);
    const { network, secret } = result.ok;
    return redirectToSecret(request, reply, network.id, { secret, event: "created" });
  });

  /** The network's page; with a refused RadSec form, shown again with its errors (400). */
  async function networkPage(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    refusal?: RadsecRefusal,
  ) {
    const { accountId } = sessionOf(request);
    const network = await core.networks.get(accountId, id);
    const [portals, authentications, eap, radsec] = await Promise.all([
      core.portals.list(accountId, { networkId: id }, { page: 1, limit: 100 }),
      core.activity.recentAuthentications(accountId, id, RECENT_AUTHENTICATIONS),
      eapSettings(core),
      radsecPanel(core, accountId, network, refusal),
    ]);
    return show(
      request,
      reply,
      "network",
      { title: network.name, ...section, status: refusal ? 400 : 200 },
      {
        network,
        portals: portals.data,
        authentications,
        radius: core.activity.radiusSettings(),
        eap,
        radsec,
        tooWide: core.networks.widthProblem(network.nas_ip),
      },
    );
  }

  app.get("/networks/:id", need("networks:read"), (request, reply) =>
    networkPage(request, reply, idParam(request)),
  );
  await radsecRoutes(app, context, networkPage);

  app.get("/networks/:id/edit", need("networks:write"), async (request, reply) => {
    const network = await core.networks.get(sessionOf(request).accountId, idParam(request));
    return formPage(request, reply, network, valuesOf(network));
  });

  app.post("/networks/:id", need("networks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const network = await core.networks.get(accountId, idParam(request));
    const values = readForm(formOf(request));
    const result = await attempt(
      () => core.networks.update(accountId, network.id, inputOf(values, false)),
      "nas_ip",
    );
    if ("errors" in result) return formPage(request, reply, network, values, result.errors, 400);
    return reply.redirect(`/console/networks/${network.id}?notice=network-updated`, 303);
  });

  app.get("/networks/:id/rotate", need("networks:write"), async (request, reply) => {
    const network = await core.networks.get(sessionOf(request).accountId, idParam(request));
    return show(
      request,
      reply,
      "network-rotate",
      { title: "Rotate the shared secret", ...section },
      { network },
    );
  });

  app.post("/networks/:id/rotate", need("networks:write"), async (request, reply) => {
    const { network, secret } = await core.networks.rotateSecret(
      sessionOf(request).accountId,
      idParam(request),
    );
    return redirectToSecret(request, reply, network.id, { secret, event: "rotated" });
  });

  app.get("/networks/:id/delete", need("networks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const network = await core.networks.get(accountId, idParam(request));
    const portals = await core.networks.countPortals(accountId, network.id);
    return show(
      request,
      reply,
      "network-delete",
      { title: `Delete ${network.name}`, ...section },
      { network, portals },
    );
  });

  app.post("/networks/:id/delete", need("networks:write"), async (request, reply) => {
    await core.networks.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/networks?notice=network-deleted", 303);
  });
}

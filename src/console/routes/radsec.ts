// RadSec on a network's page: its transport, the NASes connected now (from the listener's port), the
// certificates Wisp issued for it (issue: the file is the POST's answer, a download, since the key
// is never kept; revoke; the certificate's PEM), and an outside CA with its match rule.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Core } from "../../core/index.ts";
import type { Network } from "../../core/networks/service.ts";
import { RADSEC_CERT_DAYS } from "../../core/radsec/rules.ts";
import type { RadsecCertificate, TrustedCa } from "../../core/radsec/service.ts";
import type { RadsecConnection } from "../../core/radsec/types.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { formOf } from "../forms.ts";
import type { FieldErrors } from "../views.ts";
import { attempt, idParam } from "./common.ts";

/** What the form fields held, shown again with the errors of a refused POST. */
export interface RadsecFormValues {
  days: string;
  format: string;
  ca: string;
  match_field: string;
  patterns: string;
}

export interface RadsecPanel {
  transport: Network["transport"];
  certificates: RadsecCertificate[];
  ca: TrustedCa | null;
  connections: RadsecConnection[];
  values: RadsecFormValues;
  errors: FieldErrors;
}

/** A refused RadSec form, for the network page to show again (status 400). */
export interface RadsecRefusal {
  values: Partial<RadsecFormValues>;
  errors: FieldErrors;
}

export async function radsecPanel(
  core: Core,
  accountId: number,
  network: Network,
  refusal?: RadsecRefusal,
): Promise<RadsecPanel> {
  const [certificates, ca] = await Promise.all([
    core.radsec.certificates(accountId, network.id),
    core.radsec.trusted(accountId, network.id),
  ]);
  const values: RadsecFormValues = {
    days: String(RADSEC_CERT_DAYS),
    format: "p12",
    ca: "",
    match_field: ca?.match.field ?? "cn",
    patterns: ca?.match.patterns.join("\n") ?? "",
    ...refusal?.values,
  };
  return {
    transport: network.transport,
    certificates,
    ca,
    connections: core.radsecConnections.byNetwork(accountId, network.id),
    values,
    errors: refusal?.errors ?? {},
  };
}

/** Shows the network page again with a refused RadSec form (networks.ts renders it). */
export type NetworkPage = (
  request: FastifyRequest,
  reply: FastifyReply,
  id: number,
  refusal: RadsecRefusal,
) => Promise<FastifyReply>;

/** A whole number typed in a form; empty: the default; anything else NaN, which the service refuses. */
function days(text: string): number | undefined {
  if (text === "") return undefined;
  return /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
}

export async function radsecRoutes(app: FastifyInstance, { core }: ConsoleContext, page: NetworkPage) {
  const base = (id: number) => `/console/networks/${id}`;

  app.post("/networks/:id/radsec/certificates", need("networks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const form = formOf(request);
    const values = { days: form.text("days"), format: form.text("format") === "pem" ? "pem" : "p12" };
    const result = await attempt(() =>
      core.radsec.issue(accountId, id, { days: days(values.days), password: form.raw("password") }),
    );
    if ("errors" in result) return page(request, reply, id, { values, errors: result.errors });
    const issued = result.ok;
    const name = `wisp-network-${id}-${issued.certificate.serial}`;
    reply.header("Cache-Control", "no-store");
    if (values.format === "pem") {
      // The certificate, its key (encrypted with the password) and the CA, one file.
      return reply
        .type("application/x-pem-file")
        .header("Content-Disposition", `attachment; filename="${name}.pem"`)
        .send(`${issued.cert.trimEnd()}\n${issued.key.trimEnd()}\n${issued.ca.trimEnd()}\n`);
    }
    return reply
      .type("application/x-pkcs12")
      .header("Content-Disposition", `attachment; filename="${name}.p12"`)
      .send(issued.pkcs12);
  });

  app.get("/networks/:id/radsec/certificates/:serial", need("networks:read"), async (request, reply) => {
    const serial = String((request.params as { serial?: unknown }).serial ?? "").replace(/\.pem$/, "");
    const { certificate, cert } = await core.radsec.certificate(
      sessionOf(request).accountId,
      idParam(request),
      serial,
    );
    return reply
      .type("application/x-pem-file")
      .header("Content-Disposition", `attachment; filename="wisp-radsec-${certificate.serial}.pem"`)
      .send(cert.endsWith("\n") ? cert : `${cert}\n`);
  });

  app.post(
    "/networks/:id/radsec/certificates/:serial/revoke",
    need("networks:write"),
    async (request, reply) => {
      const id = idParam(request);
      const serial = String((request.params as { serial?: unknown }).serial ?? "");
      await core.radsec.revoke(sessionOf(request).accountId, id, serial);
      return reply.redirect(`${base(id)}?notice=radsec-revoked#radsec`, 303);
    },
  );

  app.post("/networks/:id/radsec/ca", need("networks:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const form = formOf(request);
    const values = {
      ca: form.raw("ca"),
      match_field: form.text("match_field"),
      patterns: form.raw("patterns"),
    };
    const patterns = values.patterns
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== "");
    const result = await attempt(() =>
      core.radsec.trust(accountId, id, { ca: values.ca, match: { field: values.match_field, patterns } }),
    );
    if ("errors" in result) {
      // A private key pasted by mistake is not put back on the page.
      if (/PRIVATE KEY/.test(values.ca)) values.ca = "";
      return page(request, reply, id, { values, errors: result.errors });
    }
    return reply.redirect(`${base(id)}?notice=radsec-ca-saved#radsec`, 303);
  });

  app.post("/networks/:id/radsec/ca/delete", need("networks:write"), async (request, reply) => {
    const id = idParam(request);
    await core.radsec.untrust(sessionOf(request).accountId, id);
    return reply.redirect(`${base(id)}?notice=radsec-ca-removed#radsec`, 303);
  });
}

// WPA-Enterprise on the console: the CA certificate that users' devices install to check the
// RADIUS server (PEM for most systems, DER for the ones that want a .der/.cer), behind the console
// session like every other page. The network page shows what to type into an access point
// (eapSettings, rendered by views/eap-settings.eta).
import type { FastifyInstance } from "fastify";
import type { Core } from "../../core/index.ts";
import { NotFoundError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need } from "../context.ts";

/** What the network page shows for WPA-Enterprise. */
export interface EapSettings {
  /** The name devices match against the server certificate (wpa_supplicant domain_match). */
  serverName: string;
  /** The CA devices install, when Wisp knows it; null when it comes from files that lack it. */
  authority: { fingerprint: string; subject: string; not_after: string } | null;
  fromFiles: boolean;
}

export async function eapSettings(core: Core): Promise<EapSettings> {
  const authority = await core.certs.authorityCertificate();
  return {
    serverName: core.certs.serverName(),
    authority: authority && {
      fingerprint: authority.fingerprint,
      subject: authority.subject,
      not_after: authority.not_after,
    },
    fromFiles: core.certs.fromFiles,
  };
}

export async function eapRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  async function authority() {
    const found = await core.certs.authorityCertificate();
    if (!found) throw new NotFoundError("The CA that issued the server certificate is not in Wisp's files.");
    return found;
  }

  app.get("/eap/ca.pem", need("networks:read"), async (_request, reply) => {
    const { pem } = await authority();
    return reply
      .type("application/x-pem-file")
      .header("Content-Disposition", 'attachment; filename="wisp-eap-ca.pem"')
      .send(pem);
  });

  // RFC 2585 section 4.1: a DER certificate is application/pkix-cert.
  app.get("/eap/ca.der", need("networks:read"), async (_request, reply) => {
    const { der } = await authority();
    return reply
      .type("application/pkix-cert")
      .header("Content-Disposition", 'attachment; filename="wisp-eap-ca.der"')
      .send(der);
  });
}

// The TLS contexts of the EAP methods, built from the server credentials: one per method type,
// so that a session (ticket) of one method never resumes another (its session id context
// differs) and a PEAP session cannot stand in for an EAP-TLS certificate. Built in the thread
// that runs the TLS connections (this one, or each worker of ./tls-pool.ts), on the TLS engine
// chosen: OpenSSL's memory BIOs (./native-tunnel.ts) or node's TLSSocket (./tunnel.ts).
import { constants } from "node:crypto";
import { createSecureContext } from "node:tls";
import { sentChain } from "../../core/certs/files.ts";
import { openSslAddon } from "./native-addon.ts";
import { OpenSslContext, OpenSslTunnel } from "./native-tunnel.ts";
import { EapType } from "./packet.ts";
import { TlsTunnel, type Tunnel } from "./tunnel.ts";
import type { EapServerCredentials, TlsEngine } from "./types.ts";

/** The TLS-based methods served, in the order a NAK's proposals are considered. */
export const TLS_METHOD_TYPES = [EapType.Peap, EapType.Ttls, EapType.Tls];

/** Opens a TLS server connection of one method. */
export type OpenTunnel = (requestClientCertificate: boolean) => Tunnel;

/** The engine `wanted` names, or for "auto" the OpenSSL addon when it was built, else node's. */
export function resolveTlsEngine(wanted: TlsEngine | "auto"): TlsEngine {
  if (wanted !== "auto") return wanted;
  return "addon" in openSslAddon() ? "openssl" : "node";
}

/** `ticketKeys`: 48 octets shared by every context (and worker), so resumption survives refreshes. */
export function buildTunnels(
  credentials: EapServerCredentials,
  ticketKeys: Buffer,
  engine: TlsEngine,
): Map<number, OpenTunnel> {
  const tunnels = new Map<number, OpenTunnel>();
  const chain = sentChain(credentials.cert, credentials.chain, credentials.ca);
  const certificateChain = [credentials.cert, ...chain].join("\n");
  for (const served of TLS_METHOD_TYPES) {
    const sessionIdContext = `wisp-eap-${served}`;
    // Resumption for EAP-TLS only: a resumed PEAP or TTLS session lets the supplicant skip
    // phase 2 (RFC 5281 section 7.8), and the login must be decided again on current rules,
    // which would need the inner identity kept beside each ticket. They do full handshakes.
    const tickets = served === EapType.Tls;
    if (engine === "openssl") {
      const context = new OpenSslContext({
        certificateChain,
        key: credentials.key,
        ca: credentials.ca.length > 0 ? credentials.ca.join("\n") : null,
        sessionIdContext,
        tickets,
        ticketKeys,
      });
      tunnels.set(served, (requestClientCertificate) => new OpenSslTunnel(context, requestClientCertificate));
      continue;
    }
    const context = createSecureContext({
      key: credentials.key,
      cert: certificateChain,
      ca: credentials.ca.length > 0 ? credentials.ca : undefined,
      minVersion: "TLSv1.2",
      maxVersion: "TLSv1.3",
      sessionIdContext,
      ...(tickets ? {} : { secureOptions: constants.SSL_OP_NO_TICKET }),
    });
    context.context.setTicketKeys(ticketKeys);
    tunnels.set(served, (requestClientCertificate) => new TlsTunnel(context, requestClientCertificate));
  }
  return tunnels;
}

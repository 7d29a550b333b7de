// The TLS contexts of the EAP methods, built from the server credentials: one per method type,
// so that a session (ticket) of one method never resumes another (its session id context
// differs) and a PEAP session cannot stand in for an EAP-TLS certificate. Built in the thread
// that runs the TLS connections (this one, or each worker of ./tls-pool.ts).
import { constants } from "node:crypto";
import { createSecureContext, type SecureContext } from "node:tls";
import { sentChain } from "../../core/certs/files.ts";
import { EapType } from "./packet.ts";
import type { EapServerCredentials } from "./types.ts";

/** The TLS-based methods served, in the order a NAK's proposals are considered. */
export const TLS_METHOD_TYPES = [EapType.Peap, EapType.Ttls, EapType.Tls];

/** `ticketKeys`: 48 octets shared by every context (and worker), so resumption survives refreshes. */
export function buildContexts(
  credentials: EapServerCredentials,
  ticketKeys: Buffer,
): Map<number, SecureContext> {
  const contexts = new Map<number, SecureContext>();
  const chain = sentChain(credentials.cert, credentials.chain, credentials.ca);
  for (const served of TLS_METHOD_TYPES) {
    const context = createSecureContext({
      key: credentials.key,
      cert: [credentials.cert, ...chain].join("\n"),
      ca: credentials.ca.length > 0 ? credentials.ca : undefined,
      minVersion: "TLSv1.2",
      maxVersion: "TLSv1.3",
      sessionIdContext: `wisp-eap-${served}`,
      // Resumption for EAP-TLS only: a resumed PEAP or TTLS session lets the supplicant skip
      // phase 2 (RFC 5281 section 7.8), and the login must be decided again on current rules,
      // which would need the inner identity kept beside each ticket. They do full handshakes.
      ...(served === EapType.Tls ? {} : { secureOptions: constants.SSL_OP_NO_TICKET }),
    });
    context.context.setTicketKeys(ticketKeys);
    contexts.set(served, context);
  }
  return contexts;
}

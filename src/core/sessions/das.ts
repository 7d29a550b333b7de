// The port through which the core asks a NAS's Dynamic Authorization Server (RFC 5176) to act on a
// session. The core decides what to send and to whom; the RADIUS door (src/radius/das-client.ts)
// builds, signs and sends the packets, and validates the answers.

export interface DasTarget {
  /** The NAS's address (IPv4 or IPv6) and its DAS port (RFC 5176 section 3: 3799 by default). */
  host: string;
  port: number;
  secret: string;
}

/** Attribute name and value, FreeRADIUS text (the door's codec encodes them). */
export type DasAttribute = readonly [name: string, value: string | number];

export type DasAnswer =
  | { result: "ack" }
  /** `errorCause`: the Error-Cause's dictionary name (RFC 5176 section 3.6), or null without one. */
  | { result: "nak"; errorCause: string | null }
  | { result: "timeout" };

export interface DynamicAuthorization {
  /** Disconnect-Request (RFC 5176 section 2.1) or CoA-Request (section 2.2); resolves with the answer. */
  send(
    kind: "disconnect" | "coa",
    target: DasTarget,
    attributes: readonly DasAttribute[],
  ): Promise<DasAnswer>;
}

/** An answer, or why no request could be sent (no connection, no address). */
export type DasOutcome = DasAnswer | { result: "error"; cause: string };

/**
 * Dynamic authorization down a NAS's own RadSec connection (src/radius/radsec/): a NAS behind NAT
 * cannot be reached on its DAS port, but its TLS connection to Wisp carries requests both ways.
 */
export interface ConnectedDas {
  /** Undefined when no connection of the network is open in this process. */
  send(
    accountId: number,
    networkId: number,
    kind: "disconnect" | "coa",
    attributes: readonly DasAttribute[],
  ): Promise<DasOutcome> | undefined;
}

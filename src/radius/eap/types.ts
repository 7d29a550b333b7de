// The EAP engine's public shapes: where the server certificate comes from, how a client
// certificate is judged, and the limits on conversations.
import { availableParallelism } from "node:os";
import type { PresentedCertificate } from "../../core/certs/presented.ts";
import type { RadiusClient } from "../../core/networks/service.ts";

/** PEM texts. `ca`: the certificates trusted to have issued client certificates (EAP-TLS). */
export interface EapServerCredentials {
  key: string;
  cert: string;
  chain: string[];
  ca: string[];
}

export interface EapOptions {
  credentials(): Promise<EapServerCredentials>;
  /**
   * EAP-TLS: null when the client certificate may log in as `identity`, else the reason to reject.
   * Given read (core/certs/presented.ts), from the handshake's parse where the engine can.
   */
  checkClientCertificate(
    client: RadiusClient,
    certificate: PresentedCertificate,
    identity: string,
  ): Promise<string | null>;
  /** Largest EAP-TLS/PEAP/TTLS data per packet (RFC 5216 section 2.1.5); default 1024. */
  fragmentSize: number;
}

/** Bounds on the conversations kept between round trips (issue 14 point 3). */
export interface EapLimits {
  /** Seconds a conversation may wait for the supplicant's next packet. */
  idleTimeoutSeconds: number;
  /** Open conversations of one network; past it its least recently used one is dropped. */
  perNetwork: number;
  /** Open conversations over every network; past it one is dropped from a network over its fair share. */
  total: number;
  /** Bytes the conversations of one network may hold (issue 22 point 7); past it its oldest are dropped. */
  perNetworkBytes: number;
  /** Bytes every conversation together may hold; past it one is dropped from a network over its fair share. */
  totalBytes: number;
  /** Worker threads running the conversations' TLS (0: TLS in the thread that answers RADIUS). */
  tlsWorkers?: number;
  /** What runs TLS: "auto" (the default) takes the OpenSSL addon when the build made it. */
  tlsEngine?: TlsEngine | "auto";
}

/**
 * "openssl": OpenSSL's memory BIOs through Wisp's addon (./native-tunnel.ts); "node": node's
 * TLSSocket over memory (./tunnel.ts). The same OpenSSL does the TLS in both.
 */
export type TlsEngine = "openssl" | "node";

const MiB = 1024 * 1024;

/**
 * A half-open PEAP conversation is charged about 67 KiB (see TLS_TUNNEL_BYTES): 32 MiB holds about
 * 480 of one network, 256 MiB about 3,900 in all, far above what logins need (a login holds its
 * conversation for a few round trips) and far below what the counts alone allowed (1.3 GB).
 */
export const DEFAULT_EAP_LIMITS: EapLimits = {
  idleTimeoutSeconds: 30,
  perNetwork: 2000,
  total: 20000,
  perNetworkBytes: 32 * MiB,
  totalBytes: 256 * MiB,
  // One core is left to the thread that answers RADIUS (and decides logins). On 2 cores TLS stays in
  // that thread: a step handed to a worker and back cost as much CPU as it spread, or more, in every
  // quiet run of bench/eap.ts that measured both (sessions 11, 13 and 14; session 14, the same
  // rounds, a turn's steps in one message, CPU per login against FreeRADIUS `files` on one worker
  // and without: PEAP 1.91x and 1.78x, TTLS/PAP 1.57x and 1.39x, EAP-TLS 1.71x and 1.72x).
  tlsWorkers: availableParallelism() > 2 ? Math.min(16, availableParallelism() - 1) : 0,
  tlsEngine: "auto",
};
export const DEFAULT_FRAGMENT_SIZE = 1024;

/** The methods Wisp serves, as recorded in radpostauth.method. */
export type EapMethodName = "PEAP" | "TTLS" | "TLS";

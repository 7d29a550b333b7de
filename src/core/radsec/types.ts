// The contract between the RadSec door (src/radius/radsec/, the TLS listener) and the core that
// decides which network a NAS certificate belongs to (src/core/radsec/). The door verifies the
// chain in the TLS handshake against authorities(); the core says which network it is, or why none.
import type { RadiusClient } from "../networks/service.ts";

/** The certificates a NAS presented in the RadSec handshake, DER, leaf first. */
export interface RadsecPeer {
  chain: Buffer[];
}

/** The network a verified NAS certificate belongs to, or the reason it belongs to none (logged; no secrets). */
export type RadsecIdentity = { network: RadiusClient } | { refused: string };

export interface RadsecTrust {
  /**
   * Every CA a NAS certificate may chain to (PEM), across all accounts: Wisp's own RadSec CA and
   * every CA uploaded for a network. `tag` changes whenever the list does (the door reloads then).
   */
  authorities(): Promise<{ tag: string; pems: string[] }>;
  /** Which network presented this chain (already verified by TLS against authorities()), or why none. */
  identify(peer: RadsecPeer): Promise<RadsecIdentity>;
}

/** A NAS connected over RadSec now, as the listener knows it (the console's network page shows it). */
export interface RadsecConnection {
  networkId: number;
  accountId: number;
  /** "address:port" of the NAS as seen by Wisp. */
  remote: string;
  /** ISO time the handshake completed. */
  since: string;
  tlsVersion: string;
  protocol: "radius/1.0" | "radius/1.1";
  peerSubject: string;
  peerFingerprint: string;
}

/** Live RadSec connections of the process that runs the listener; empty where none runs. */
export interface RadsecConnections {
  byNetwork(accountId: number, networkId: number): RadsecConnection[];
}

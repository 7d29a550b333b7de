// The MSK of each TLS-based method, from the TLS exporter, and how it travels to the NAS.
// - TLS 1.2: EAP-TLS and PEAPv0 use PRF(master_secret, "client EAP encryption", client.random ||
//   server.random) (RFC 5216 section 2.3; [MS-PEAP] section 3.1.5.5 without crypto-binding);
//   EAP-TTLS uses "ttls keying material" (RFC 5281 section 8).
// - TLS 1.3: every method uses TLS-Exporter("EXPORTER_EAP_TLS_Key_Material", Type-Code, 128)
//   (RFC 9190 section 2.3 for EAP-TLS, RFC 9427 section 2.1 for PEAP and TTLS).
// MSK = the first 64 octets. RFC 2548 section 2.4: MS-MPPE-Recv-Key is the first 32 octets of the
// MSK, MS-MPPE-Send-Key the next 32 (as FreeRADIUS and hostapd send them); the RADIUS codec hides
// both with the shared secret and the Request Authenticator (RFC 2548 section 2.4.2).
import { EapType } from "./packet.ts";

/** What the MSK is exported from: a TLS connection after its handshake. */
export interface KeyExporter {
  readonly protocol: string | null;
  exportKeyingMaterial(length: number, label: string, context?: Buffer): Buffer;
}

export function masterSessionKey(tunnel: KeyExporter, type: number): Buffer {
  if (tunnel.protocol === "TLSv1.3") {
    return tunnel.exportKeyingMaterial(128, "EXPORTER_EAP_TLS_Key_Material", Buffer.of(type)).subarray(0, 64);
  }
  const label = type === EapType.Ttls ? "ttls keying material" : "client EAP encryption";
  return tunnel.exportKeyingMaterial(128, label).subarray(0, 64);
}

export function mppeKeys(msk: Buffer): { recv: Buffer; send: Buffer } {
  return { recv: msk.subarray(0, 32), send: msk.subarray(32, 64) };
}

// MS-CHAPv2 outside EAP (RFC 2548 section 2.3, RFC 2759): an Access-Request carrying
// MS-CHAP-Challenge and MS-CHAP2-Response. This module reads them into a verifier for the login
// decision (core/aaa/decide.ts asks it with the user's NT hash) and, once it has matched, builds
// the answer's Microsoft attributes as FreeRADIUS 3.2's rlm_mschap does: MS-CHAP2-Success and the
// MPPE keys in an Access-Accept, MS-CHAP-Error in an Access-Reject.
import { randomBytes } from "node:crypto";
import type { AttributeInput, RadiusPacket } from "../packet.ts";
import { MschapV2Verifier } from "./mschapv2.ts";

/** RFC 2548 section 2.3.2: Ident(1) Flags(1) Peer-Challenge(16) Reserved(8) Response(24). */
const RESPONSE_LENGTH = 50;

// rlm_mschap's defaults (use_mppe yes, require_encryption no, require_strong no): encryption
// allowed (1), RC4 40 or 128 bits (6).
const ENCRYPTION_POLICY_ALLOWED = 1;
const ENCRYPTION_TYPES_40_OR_128 = 6;

export interface MschapV2Request {
  /** The verifier for Credentials.mschapv2: true when the NT-Response was made from this hash. */
  verify(ntPasswordHash: Buffer): boolean;
  /**
   * Attributes for the Access-Accept: MS-CHAP2-Success (RFC 2548 section 2.3.3: Ident + the RFC
   * 2759 authenticator response), MS-MPPE-Recv-Key / Send-Key (sections 2.4.2-2.4.3, hidden by
   * the encoder as encrypt=2 attributes), MS-MPPE-Encryption-Policy / -Types unless the user's
   * reply already has them. Empty when no password was checked (Auth-Type Accept): with no hash
   * there is no authenticator response to give, and FreeRADIUS gives none either.
   */
  acceptAttributes(reply: readonly { attribute: string }[]): AttributeInput[];
  /**
   * MS-CHAP-Error for the Access-Reject (RFC 2548 section 2.3.5, text as RFC 2759 section 6):
   * "E=691 R=0 C=<new challenge> V=3 M=Authentication rejected", as rlm_mschap words it, but
   * R=0: the peer is not invited to try another password on the same connection (RFC 2759
   * section 10 asks authenticators to limit retries; FreeRADIUS's allow_retry says R=1). Sent
   * for every reject, also for a disabled user, where FreeRADIUS sends none (its Auth-Type Reject
   * skips rlm_mschap): the peer then reports a failed authentication rather than a dropped link.
   */
  rejectAttributes(): AttributeInput[];
}

function find(packet: RadiusPacket, name: string): Buffer | undefined {
  return packet.attributes.find((a) => a.name === name)?.raw;
}

/**
 * The MS-CHAPv2 exchange of a request, or undefined when it has none: no MS-CHAP-Challenge of at
 * least 16 octets (rlm_mschap reads the first 16), no 50-octet MS-CHAP2-Response (the decoder
 * leaves another size as a raw Attr-26.311.25), or no User-Name (rlm_mschap requires one). The
 * request is then decided on its other credentials, or rejected for having none.
 */
export function mschapV2Request(packet: RadiusPacket): MschapV2Request | undefined {
  const challenge = find(packet, "MS-CHAP-Challenge");
  const response = find(packet, "MS-CHAP2-Response");
  const username = packet.attributes.find((a) => a.name === "User-Name")?.value;
  if (!challenge || challenge.length < 16 || response?.length !== RESPONSE_LENGTH || username === undefined) {
    return undefined;
  }
  const ident = response[0]!;
  const verifier = new MschapV2Verifier({
    authenticatorChallenge: Buffer.from(challenge.subarray(0, 16)),
    peerChallenge: Buffer.from(response.subarray(2, 18)),
    ntResponse: Buffer.from(response.subarray(26, 50)),
    username,
  });

  return {
    verify: verifier.verify,
    acceptAttributes(reply) {
      const success = verifier.authenticatorResponse();
      const keys = verifier.mppeKeys();
      if (success === undefined || keys === undefined) return [];
      const { masterSendKey, masterRecvKey } = keys;
      const has = (name: string) => reply.some((p) => p.attribute.toLowerCase() === name.toLowerCase());
      const attributes: AttributeInput[] = [
        ["MS-CHAP2-Success", Buffer.concat([Buffer.of(ident), Buffer.from(success, "ascii")])],
        ["MS-MPPE-Recv-Key", masterRecvKey],
        ["MS-MPPE-Send-Key", masterSendKey],
      ];
      if (!has("MS-MPPE-Encryption-Policy")) {
        attributes.push(["MS-MPPE-Encryption-Policy", ENCRYPTION_POLICY_ALLOWED]);
      }
      if (!has("MS-MPPE-Encryption-Types")) {
        attributes.push(["MS-MPPE-Encryption-Types", ENCRYPTION_TYPES_40_OR_128]);
      }
      return attributes;
    },
    rejectAttributes() {
      const text = `E=691 R=0 C=${randomBytes(16).toString("hex")} V=3 M=Authentication rejected`;
      return [["MS-CHAP-Error", Buffer.concat([Buffer.of(ident), Buffer.from(text, "ascii")])]];
    },
  };
}

// RADIUS/1.1 (RFC 9765): the transport profile a RadSec connection speaks once ALPN agreed on
// "radius/1.1". The packet layout is RADIUS's, but the header's Authenticator field becomes a
// 4-octet Token and 12 reserved octets (RFC 9765 section 4.1), nothing is signed or hidden with MD5
// (sections 4.1 and 5.1), and Message-Authenticator is never sent and discarded when received
// (section 5.2). decodePacket/encodePacket take a `radius11` option; this module holds the parts
// of the profile that are not an attribute codec: names, the Token and the header.

import { randomFillSync } from "node:crypto";
import { findAttribute } from "../../core/aaa/dictionary.ts";
import { RadiusDecodeError } from "./codes.ts";
import { HEADER, MESSAGE_AUTHENTICATOR } from "./shared.ts";

/** ALPN protocol names (RFC 9765 section 3.1): "radius/1.0" is today's RadSec, "radius/1.1" this profile. */
export const ALPN_RADIUS_1_0 = "radius/1.0";
export const ALPN_RADIUS_1_1 = "radius/1.1";

/** Octets of the Token (RFC 9765 section 4.1), at offset 4 of the header. */
export const TOKEN_LENGTH = 4;
const TOKEN_AT = 4;

/**
 * The Token of a RADIUS/1.1 packet (a copy of header octets 4-7), for matching a reply to its request
 * and for per-connection duplicate detection (RFC 9765 section 4.2.2: on the Token alone). Throws
 * RadiusDecodeError when the buffer is shorter than a RADIUS header (20 octets).
 */
export function tokenOf(packet: Uint8Array): Buffer {
  if (!(packet instanceof Uint8Array) || packet.length < HEADER) {
    throw new RadiusDecodeError("packet too short for a RADIUS/1.1 header");
  }
  return Buffer.from(packet.subarray(TOKEN_AT, TOKEN_AT + TOKEN_LENGTH));
}

export function checkToken(token: unknown): Buffer {
  if (!Buffer.isBuffer(token) || token.length !== TOKEN_LENGTH) {
    throw new TypeError(`a RADIUS/1.1 token must be a Buffer of ${TOKEN_LENGTH} octets`);
  }
  return token;
}

/** RFC 9765 section 4.1: Token in octets 4-7, the 12 Reserved octets after it zero on send. */
export function writeHeader11(out: Buffer, token: Buffer): void {
  token.copy(out, TOKEN_AT);
  out.fill(0, TOKEN_AT + TOKEN_LENGTH, HEADER);
}

/**
 * Tokens for the requests one connection sends (CoA/Disconnect to a NAS): RFC 9765 section 4.2.1
 * recommends a 32-bit counter per connection that starts at a random value and wraps silently.
 */
export function tokenCounter(): () => Buffer {
  let next = randomFillSync(Buffer.allocUnsafe(TOKEN_LENGTH)).readUInt32BE(0);
  return () => {
    const token = Buffer.allocUnsafe(TOKEN_LENGTH);
    token.writeUInt32BE(next, 0);
    next = (next + 1) >>> 0;
    return token;
  };
}

let discarded: Set<number> | undefined;

/**
 * Standard attributes that MUST NOT be sent over RADIUS/1.1 and are silently discarded on receipt:
 * Message-Authenticator (RFC 9765 section 5.2), and Message-Authentication-Code and MAC-Randomizer
 * (section 5.3) when the dictionary defines them. Original-Packet-Code (section 5.5) is an extended
 * attribute, which this codec keeps whole as its Extended-Attribute-1 octets and never encodes.
 */
export function discardedIn11(code: number): boolean {
  if (!discarded) {
    discarded = new Set([MESSAGE_AUTHENTICATOR]);
    for (const name of ["Message-Authentication-Code", "MAC-Randomizer"]) {
      const def = findAttribute(name);
      if (def && def.vendorId === undefined) discarded.add(def.code);
    }
  }
  return discarded.has(code);
}

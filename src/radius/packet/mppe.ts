// MS-MPPE-Send-Key / MS-MPPE-Recv-Key values (RFC 2548 sections 2.4.2 and 2.4.3): a 2-octet salt
// whose most significant bit is set, then the key length octet, the key and zero padding to a
// multiple of 16, hidden with MD5(secret + Request Authenticator + salt) and then
// MD5(secret + previous cipher block). That is the RFC 2868 Tunnel-Password scheme, so the work is
// crypto.ts's; the dictionary marks both attributes encrypt=2, and encodePacket hides them itself.
// These are for callers that hold the value outside a packet (EAP's MSK, tests).
import { decryptTunnelPassword, encryptTunnelPassword } from "./crypto.ts";

/**
 * The hidden attribute value (salt included) for `key`, in a response to the request with
 * `requestAuthenticator`. A random salt is drawn unless one is given (its high bit is set either way).
 * Keys longer than 239 octets do not fit in a Vendor-Specific attribute: RadiusEncodeError.
 */
export function encryptMppeKey(
  key: Buffer,
  secret: string,
  requestAuthenticator: Buffer,
  salt?: Buffer,
): Buffer {
  if (salt !== undefined && salt.length !== 2) throw new RangeError("the salt must be 2 octets");
  return encryptTunnelPassword(key, secret, requestAuthenticator, salt);
}

/**
 * The key hidden in an MS-MPPE-Send-Key/Recv-Key value, or undefined when it does not decrypt to a
 * sensible key (wrong length field, a salt without its high bit, a value not 2 + 16n octets).
 */
export function decryptMppeKey(
  value: Buffer,
  secret: string,
  requestAuthenticator: Buffer,
): Buffer | undefined {
  if (value.length < 18 || (value[0]! & 0x80) === 0) return undefined;
  return decryptTunnelPassword(value, secret, requestAuthenticator);
}

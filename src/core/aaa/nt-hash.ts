// The NT password hash of MS-CHAP (RFC 2759 section 8.3): MD4 over the password in UTF-16LE. It
// lives in core because the login decision compares it (with an NT-Password check item or a hash
// of the Cleartext-Password); the RADIUS door only computes the MS-CHAP responses from it.
// MD4 is ./md4.ts's own (node:crypto has none under OpenSSL 3: see there).
import { md4 } from "./md4.ts";

/**
 * NtPasswordHash (RFC 2759 section 8.3): MD4 of the password as UTF-16 little-endian, without a
 * terminating zero. Characters outside the BMP become their surrogate pairs, as Windows encodes them.
 */
export function ntPasswordHash(password: string): Buffer {
  return md4(Buffer.from(password, "utf16le"));
}

/** HashNtPasswordHash (RFC 2759 section 8.4): MD4 of the 16-octet password hash. */
export function hashNtPasswordHash(passwordHash: Buffer): Buffer {
  return md4(passwordHash);
}

/**
 * An NT-Password check item's value as the 16-octet hash, or undefined when it is not one, read as
 * FreeRADIUS 3.2 reads the octets attribute: "0x" and 32 hex digits; 32 hex digits (rlm_mschap
 * decodes a 32-octet value as hex); or any other text of exactly 16 octets, taken as the hash
 * itself.
 */
export function parseNtPassword(value: string): Buffer | undefined {
  const hex = /^0x/i.test(value) ? value.slice(2) : value;
  if (/^[0-9a-f]{32}$/i.test(hex)) return Buffer.from(hex, "hex");
  if (hex !== value) return undefined;
  const octets = Buffer.from(value, "utf8");
  return octets.length === 16 ? octets : undefined;
}

// The NT password hash of MS-CHAP (RFC 2759 section 8.3): MD4 over the password in UTF-16LE. It
// lives in core because the login decision compares it (with an NT-Password check item or a hash
// of the Cleartext-Password, and a PAP password with an NT-Password); the RADIUS door only computes
// the MS-CHAP responses from it. MD4 is ./md4.ts's own (node:crypto has none under OpenSSL 3: see
// there).
import { md4 } from "./md4.ts";

/**
 * NtPasswordHash (RFC 2759 section 8.3): MD4 of the password as UTF-16 little-endian, without a
 * terminating zero. Characters outside the BMP become their surrogate pairs, as Windows encodes them.
 */
export function ntPasswordHash(password: string): Buffer {
  return md4(Buffer.from(password, "utf16le"));
}

/**
 * The NT hash of a PAP password's octets as FreeRADIUS 3.2's rlm_pap computes it (pap_auth_nt),
 * or undefined where rlm_pap gives up ("User-Password is not in UCS2 format"). The octets become
 * UTF-16LE by fr_utf8_to_ucs2 (src/lib/misc.c), which is not a UTF-8 decoder: a byte up to 0x7f is
 * one unit; a byte 110xxxxx takes the next byte, any other byte above 0x7f the next two, as their
 * low six bits, continuation bytes unchecked; a byte above 0x7f as the last octet fails, and a
 * three-byte sequence cut after its second byte reads the terminating NUL as its third. Valid
 * UTF-8 of the BMP gives what ntPasswordHash gives its text; a four-byte sequence (a character
 * outside the BMP) is read as a three-byte one and the rest as another, so such a password does
 * not match the hash Windows makes of it, in FreeRADIUS as here.
 */
export function papNtPasswordHash(password: Uint8Array): Buffer | undefined {
  const units = Buffer.alloc(password.length * 2);
  let length = 0;
  for (let i = 0; i < password.length; i++) {
    const c = password[i]!;
    let unit = c;
    if (c > 0x7f) {
      if (i === password.length - 1) return undefined;
      const c2 = password[++i]!;
      if ((c & 0xe0) === 0xc0) unit = ((c & 0x1f) << 6) | (c2 & 0x3f);
      else unit = ((c & 0x0f) << 12) | ((c2 & 0x3f) << 6) | ((password[++i] ?? 0) & 0x3f);
    }
    length = units.writeUInt16LE(unit, length);
  }
  return md4(units.subarray(0, length));
}

/** HashNtPasswordHash (RFC 2759 section 8.4): MD4 of the 16-octet password hash. */
export function hashNtPasswordHash(passwordHash: Buffer): Buffer {
  return md4(passwordHash);
}

const BASE64 = /^([A-Za-z0-9+/]*)=*$/;

/**
 * An NT-Password check item's value as the 16-octet hash, or undefined when it is not one, read as
 * FreeRADIUS 3.2 reads it. The octets attribute is "0x" and hex digits, or else the text's own
 * octets. rlm_pap's authorize then normalises it (normify, `normalise = yes`), which is what
 * rlm_mschap and rlm_pap's pap_auth_nt find: an even number of at least 32 octets that are all
 * hex digits is decoded as hex; else at least 22 octets of base64 (optional "=" padding at the
 * end) that decode to at least 16 octets are decoded; anything else is left as it is. The result
 * is the hash when it has exactly 16 octets: 32 hex digits with or without 0x, base64 of 16
 * octets, or 16 octets of any other text.
 */
export function parseNtPassword(value: string): Buffer | undefined {
  let octets: Buffer;
  if (/^0x/i.test(value)) {
    if (!/^0x([0-9a-f]{2})*$/i.test(value)) return undefined; // FreeRADIUS cannot read it at all
    octets = Buffer.from(value.slice(2), "hex");
  } else {
    octets = Buffer.from(value, "utf8");
  }
  const text = octets.toString("latin1");
  if (text.length % 2 === 0 && text.length >= 32 && /^[0-9a-f]*$/i.test(text)) {
    octets = Buffer.from(text, "hex");
  } else if (text.length >= 22) {
    const base64 = BASE64.exec(text)?.[1];
    // A last group of one character is no base64 (fr_base64_decode fails).
    if (base64 !== undefined && base64.length % 4 !== 1) {
      const decoded = Buffer.from(base64, "base64");
      if (decoded.length >= 16) octets = decoded;
    }
  }
  return octets.length === 16 ? octets : undefined;
}

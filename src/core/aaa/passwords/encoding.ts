// The text-to-octets readings FreeRADIUS 3.2 applies to stored password items, reproduced to the
// octet: they decide which stored hashes are read as what, so Wisp must read them the same way.
// References are FreeRADIUS 3.2.1's sources (the version of the parity suite).

/** A value read as a C string stops at its first NUL (vp_strvalue, strcpy, strchr). */
export function cString(octets: Buffer): Buffer {
  const nul = octets.indexOf(0);
  return nul < 0 ? octets : octets.subarray(0, nul);
}

/**
 * fr_hex2bin (src/lib/misc.c): decodes pairs of hex digits from the start of `hex` into at most
 * `outlen` octets and stops at the first pair that is not two digits; the caller compares the count
 * with what it expected. Its digit lookup is memchr over "0123456789abcdef" and the terminating NUL,
 * so a NUL octet reads as the digit 16: reproduced, as it changes which values decode.
 */
export function frHex2bin(hex: Buffer, outlen: number): Buffer {
  const length = Math.min(hex.length >> 1, outlen);
  const out = Buffer.alloc(length);
  let i = 0;
  for (; i < length; i++) {
    const high = hexDigit(hex[i * 2]!);
    const low = hexDigit(hex[i * 2 + 1]!);
    if (high < 0 || low < 0) break;
    out[i] = ((high << 4) + low) & 0xff;
  }
  return out.subarray(0, i);
}

function hexDigit(octet: number): number {
  if (octet === 0) return 16;
  if (octet >= 0x30 && octet <= 0x39) return octet - 0x30;
  const lower = octet | 0x20; // tolower() of the C locale, for letters only
  if (lower >= 0x61 && lower <= 0x66 && (octet >= 0x41 || octet === lower)) return lower - 0x61 + 10;
  return -1;
}

const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < BASE64_ALPHABET.length; i++) BASE64_VALUE[BASE64_ALPHABET.charCodeAt(i)] = i;

/**
 * fr_base64_decode (src/lib/base64.c) into a buffer of `outlen` octets: undefined where FreeRADIUS
 * returns an error. Only the standard alphabet (+ and /); full groups of four while they are all
 * base64, then a last group of 0, 2 or 3 characters (1 is an error), then nothing but "=" (any
 * number of them). A full group is written only while more than 3 octets of room are left, a last
 * group of n characters needs n - 1: a value too long for the buffer is an error.
 */
export function frBase64Decode(input: Buffer, outlen: number): Buffer | undefined {
  const out = Buffer.alloc(outlen);
  const value = (i: number) => BASE64_VALUE[input[i]!]!;
  let written = 0;
  let p = 0;
  while (input.length - p >= 4) {
    if (value(p) < 0 || value(p + 1) < 0 || value(p + 2) < 0 || value(p + 3) < 0) break;
    if (outlen - written <= 3) return undefined;
    const group = (value(p) << 18) | (value(p + 1) << 12) | (value(p + 2) << 6) | value(p + 3);
    out[written++] = group >> 16;
    out[written++] = (group >> 8) & 0xff;
    out[written++] = group & 0xff;
    p += 4;
  }
  let q = p;
  while (q < input.length && value(q) >= 0) q++;
  const tail = q - p;
  if (tail === 1 || tail >= 4) return undefined;
  if (tail >= 2) {
    if (outlen - written < tail - 1) return undefined;
    out[written++] = ((value(p) << 2) | (value(p + 1) >> 4)) & 0xff;
    if (tail === 3) out[written++] = ((value(p + 1) << 4) | (value(p + 2) >> 2)) & 0xff;
    p = q;
  }
  for (; p < input.length; p++) if (input[p] !== 0x3d) return undefined;
  return out.subarray(0, written);
}

/**
 * The octets of an `octets` attribute as rlm_sql reads its text from the database
 * (value_data_from_str): "0x" (any case) and an even number of hex digits is hex; anything else is
 * the text's own octets. undefined when it starts with 0x but is not hex: FreeRADIUS cannot read
 * the row at all.
 */
export function sqlOctets(value: string): Buffer | undefined {
  if (!/^0x/i.test(value)) return Buffer.from(value, "utf8");
  if (!/^0x([0-9a-f]{2})*$/i.test(value)) return undefined;
  return Buffer.from(value.slice(2), "hex");
}

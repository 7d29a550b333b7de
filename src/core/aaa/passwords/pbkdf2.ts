// PBKDF2-Password as FreeRADIUS 3.2.1's rlm_pap reads it (pap_auth_pbkdf2, pap_auth_pbkdf2_parse),
// in its three formats:
//   {X-PBKDF2}<digest>:<iterations, base64 of 4 octets big-endian>:<b64 salt>:<b64 hash>  (LDAP)
//   $PBKDF2$<digest>:<iterations>:<b64 salt>$<b64 hash>                                  (Crypt::PBKDF2)
//   $pbkdf2-<digest>$<iterations>$<b64 salt>$<b64 hash>                                    (passlib)
// base64 is FreeRADIUS's own (standard alphabet only: passlib's "." for "+" does not decode there).
// Later 3.2 releases add 389ds's {PBKDF2-SHA256} forms; 3.2.1, the parity reference, has none.
import { pbkdf2 } from "node:crypto";
import { promisify } from "node:util";
import { type Check, problem } from "./check.ts";
import { sameDigest } from "./digests.ts";
import { frBase64Decode } from "./encoding.ts";

const pbkdf2Async = promisify(pbkdf2);

/**
 * Iterations above this are refused: FreeRADIUS takes up to 2^32 - 1, which would keep a worker
 * thread busy for hours per login of a user whose imported hash says so.
 */
export const MAX_PBKDF2_ITERATIONS = 10_000_000;

interface Digest {
  algorithm: string;
  length: number;
}

const sha = (algorithm: string, length: number): Digest => ({ algorithm, length });

/** pbkdf2_crypt_names (LDAP and Crypt::PBKDF2 formats), matched ignoring case. */
const CRYPT_NAMES = new Map<string, Digest>([
  ["hmacsha1", sha("sha1", 20)],
  ["hmacsha2+224", sha("sha224", 28)],
  ["hmacsha2+256", sha("sha256", 32)],
  ["hmacsha2+384", sha("sha384", 48)],
  ["hmacsha2+512", sha("sha512", 64)],
  ["hmacsha3+224", sha("sha3-224", 28)],
  ["hmacsha3+256", sha("sha3-256", 32)],
  ["hmacsha3+384", sha("sha3-384", 48)],
  ["hmacsha3+512", sha("sha3-512", 64)],
]);

/** pbkdf2_passlib_names. */
const PASSLIB_NAMES = new Map<string, Digest>([
  ["sha1", sha("sha1", 20)],
  ["sha256", sha("sha256", 32)],
  ["sha512", sha("sha512", 64)],
]);

interface Format {
  names: Map<string, Digest>;
  schemeSeparator: number;
  iterationSeparator: number;
  saltSeparator: number;
  base64Iterations: boolean;
}

const COLON = 0x3a;
const DOLLAR = 0x24;
const LDAP: Format = {
  names: CRYPT_NAMES,
  schemeSeparator: COLON,
  iterationSeparator: COLON,
  saltSeparator: COLON,
  base64Iterations: true,
};
const CRYPT: Format = { ...LDAP, saltSeparator: DOLLAR, base64Iterations: false };
const PASSLIB: Format = {
  names: PASSLIB_NAMES,
  schemeSeparator: DOLLAR,
  iterationSeparator: DOLLAR,
  saltSeparator: DOLLAR,
  base64Iterations: false,
};

export interface Pbkdf2Hash {
  digest: Digest;
  iterations: number;
  salt: Buffer;
  hash: Buffer;
}

/** The stored value's parts, or why rlm_pap cannot use it. */
export function parsePbkdf2(value: Buffer): Pbkdf2Hash | ReturnType<typeof problem> {
  if (value.length < 2) return problem("malformed", "PBKDF2-Password too short");
  if (value[0] !== DOLLAR) {
    let rest = value;
    if (value[0] === 0x7b) {
      const close = value.indexOf(0x7d);
      // rlm_pap 3.2.1 reads past a "{" without "}" (a crash there): never valid.
      if (close < 0) return problem("malformed", "PBKDF2-Password header without }");
      rest = value.subarray(close + 1);
    }
    return parseParts(rest, LDAP);
  }
  if (value.length >= 9 && value.subarray(0, 8).toString("latin1") === "$PBKDF2$") {
    return parseParts(value.subarray(8), CRYPT);
  }
  if (value.length >= 9 && value.subarray(0, 8).toString("latin1") === "$pbkdf2-") {
    return parseParts(value.subarray(8), PASSLIB);
  }
  return problem("malformed", "unknown PBKDF2-Password format");
}

function parseParts(text: Buffer, format: Format): Pbkdf2Hash | ReturnType<typeof problem> {
  if (text.length <= 1) return problem("malformed", "PBKDF2-Password too short");
  const schemeEnd = text.indexOf(format.schemeSeparator);
  if (schemeEnd < 0) return problem("malformed", "PBKDF2-Password without separators");
  const name = text
    .subarray(0, schemeEnd)
    .toString("latin1")
    .replace(/[A-Z]/g, (c) => c.toLowerCase());
  const digest = format.names.get(name);
  // 3.2.1's name tables lack their end marker: an unknown name reads past them. Refused here.
  if (!digest) return problem("unsupported", "unknown PBKDF2 digest");
  let p = schemeEnd + 1;
  const iterationEnd = text.indexOf(format.iterationSeparator, p);
  if (iterationEnd < 0 || iterationEnd === p)
    return problem("malformed", "PBKDF2-Password without iterations");
  const iterations = readIterations(text.subarray(p, iterationEnd), format.base64Iterations);
  if (typeof iterations !== "number") return iterations;
  p = iterationEnd + 1;
  const saltEnd = text.indexOf(format.saltSeparator, p);
  if (saltEnd < 0 || saltEnd === p) return problem("malformed", "PBKDF2-Password without salt");
  const saltText = text.subarray(p, saltEnd);
  const salt = frBase64Decode(saltText, 3 * Math.floor(saltText.length / 4) + 2);
  if (!salt) return problem("malformed", "PBKDF2-Password salt is not base64");
  const hash = frBase64Decode(text.subarray(saltEnd + 1), 64);
  if (!hash) return problem("malformed", "PBKDF2-Password hash is not base64");
  if (hash.length !== digest.length) return problem("malformed", "PBKDF2-Password hash of the wrong length");
  return { digest, iterations, salt, hash };
}

function readIterations(text: Buffer, base64: boolean): number | ReturnType<typeof problem> {
  let iterations: number;
  if (base64) {
    const decoded = frBase64Decode(text, 4);
    // Fewer than 4 octets leave the rest of FreeRADIUS's integer unset: no defined meaning.
    if (decoded?.length !== 4) return problem("malformed", "PBKDF2-Password iterations not 4 octets");
    iterations = decoded.readUInt32BE(0);
  } else {
    // strtoul over at most 11 characters (rlm_pap's buffer), the whole of them digits. FreeRADIUS
    // also takes spaces and signs there; Wisp holds the field to digits.
    const digits = text.subarray(0, 11).toString("latin1");
    if (!/^\d+$/.test(digits)) return problem("malformed", "PBKDF2-Password iterations not a number");
    iterations = Number(BigInt(digits) & 0xffffffffn);
  }
  if (iterations === 0) iterations = 1; // as rlm_pap does
  if (iterations > MAX_PBKDF2_ITERATIONS) {
    return problem("unsupported", `PBKDF2 iterations above ${MAX_PBKDF2_ITERATIONS}`);
  }
  return iterations;
}

/** pap_auth_pbkdf2: the password's PBKDF2-HMAC with the stored salt and iterations, compared. */
export async function checkPbkdf2(value: Buffer, password: Buffer): Promise<Check> {
  const parsed = parsePbkdf2(value);
  if ("kind" in parsed) return parsed;
  const { digest, iterations, salt, hash } = parsed;
  const computed = await pbkdf2Async(password, salt, iterations, digest.length, digest.algorithm);
  return sameDigest(computed, hash);
}

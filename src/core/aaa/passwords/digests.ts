// The plain and salted digest items of rlm_pap (pap_auth_md5, _smd5, _sha, _ssha, _sha2, _ssha2,
// _nt, _lm, _ns_mta_md5 in FreeRADIUS 3.2.1's rlm_pap.c): each normalises the stored value once
// more (normify, as its authorize step did), checks its length, hashes the password (with the salt
// that follows the digest, for the salted ones) and compares in constant time.
import { createHash, timingSafeEqual } from "node:crypto";
import { papNtPasswordHash } from "../nt-hash.ts";
import { type Check, problem } from "./check.ts";
import { frHex2bin } from "./encoding.ts";
import { normify } from "./items.ts";
import { lmPasswordHash } from "./lm-hash.ts";

/** rad_digest_cmp over digests of one length, in constant time. */
export function sameDigest(computed: Buffer, stored: Buffer): boolean {
  return computed.length === stored.length && timingSafeEqual(computed, stored);
}

const digest = (algorithm: string, ...parts: Buffer[]) => {
  const hash = createHash(algorithm);
  for (const part of parts) hash.update(part);
  return hash.digest();
};

const wrongLength = (item: string) => problem("malformed", `${item} of the wrong length`);

/** An unsalted digest of a known length (MD5-Password, SHA-Password). */
function plain(item: string, algorithm: string, size: number) {
  return (stored: Buffer, password: Buffer): Check => {
    const known = normify(stored, size);
    if (known.length !== size) return wrongLength(item);
    return sameDigest(digest(algorithm, password), known);
  };
}

/** A digest followed by its salt: hash(password + salt) against the first `size` octets. */
function salted(item: string, algorithm: string, size: number, normifyLength = size) {
  return (stored: Buffer, password: Buffer): Check => {
    const known = normify(stored, normifyLength);
    if (known.length <= size) return wrongLength(item);
    const computed = digest(algorithm, password, known.subarray(size));
    return sameDigest(computed, known.subarray(0, size));
  };
}

export const checkMd5 = plain("MD5-Password", "md5", 16);
export const checkSha = plain("SHA-Password", "sha1", 20);
export const checkSmd5 = salted("SMD5-Password", "md5", 16);
export const checkSsha = salted("SSHA-Password", "sha1", 20);
// pap_auth_ssha2 normalises with one octet more than the digest (a salt of at least one octet).
export const checkSsha2_224 = salted("SSHA2-224-Password", "sha224", 28, 29);
export const checkSsha2_256 = salted("SSHA2-256-Password", "sha256", 32, 33);
export const checkSsha2_384 = salted("SSHA2-384-Password", "sha384", 48, 49);
export const checkSsha2_512 = salted("SSHA2-512-Password", "sha512", 64, 65);

const SHA2_BY_LENGTH = new Map([
  [28, "sha224"],
  [32, "sha256"],
  [48, "sha384"],
  [64, "sha512"],
]);

/** SHA2-Password: the digest's length says which SHA-2 it is. */
export function checkSha2(stored: Buffer, password: Buffer): Check {
  const known = normify(stored, 28);
  const algorithm = SHA2_BY_LENGTH.get(known.length);
  if (!algorithm) return problem("malformed", "SHA2-Password of no SHA-2 digest length");
  return sameDigest(digest(algorithm, password), known);
}

/** NT-Password: MD4 of the password as rlm_pap makes UCS-2 of it (see papNtPasswordHash). */
export function checkNt(stored: Buffer, password: Buffer): Check {
  const known = normify(stored, 16);
  if (known.length !== 16) return problem("malformed", "NT-Password is not an NT hash");
  const computed = papNtPasswordHash(password);
  if (!computed) return problem("uncheckable", "the password is not in UCS-2 form");
  return sameDigest(computed, known);
}

/** LM-Password: the LAN Manager hash rlm_mschap's %{mschap:LM-Hash ...} gives. */
export function checkLm(stored: Buffer, password: Buffer): Check {
  const known = normify(stored, 16);
  if (known.length !== 16) return wrongLength("LM-Password");
  return sameDigest(lmPasswordHash(password), known);
}

/** Room rlm_pap leaves for the password in NS-MTA-MD5's buffer (MAX_STRING_LEN - 2 - 64). */
const NS_MTA_MAX_PASSWORD = 254 - 2 - 64;

/**
 * NS-MTA-MD5-Password (Netscape Messaging Server): 64 characters, 32 hex digits of the digest then
 * a 32-character salt; the digest is MD5(salt, "Y", password, 0xF7, salt). As in rlm_pap, exactly
 * 16 octets must decode from the front (fr_hex2bin stops at the first pair that is no hex), so a
 * salt starting with two hex digits is refused.
 */
export function checkNsMtaMd5(stored: Buffer, password: Buffer): Check {
  if (stored.length !== 64) return wrongLength("NS-MTA-MD5-Password");
  const known = frHex2bin(stored, 128);
  if (known.length !== 16) return problem("malformed", "NS-MTA-MD5-Password is not hex and salt");
  if (password.length >= NS_MTA_MAX_PASSWORD)
    return problem("uncheckable", "password too long for NS-MTA-MD5");
  const salt = stored.subarray(32, 64);
  const computed = digest("md5", salt, Buffer.of(89), password, Buffer.of(247), salt);
  return sameDigest(computed, known);
}

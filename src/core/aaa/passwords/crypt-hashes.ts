// MD5-crypt ($1$) and SHA-crypt ($5$, $6$), the crypt(3) schemes of Linux shadow files, on octets.
// Written here rather than taken from npm: the packages for them (apache-md5, unixcrypt,
// sha512crypt-node) take the password as a JavaScript string and hash its UTF-8 (apache-md5 even
// its "ascii" bytes), while crypt(3) hashes the password's octets, and a RADIUS User-Password may be
// any octets (RFC 2865 section 5.2). Checked in test/aaa/crypt.test.ts against the system's
// crypt(3) (libxcrypt), which is what FreeRADIUS's Crypt-Password calls.
import { createHash } from "node:crypto";

/** crypt(3)'s base-64 alphabet ("./0-9A-Za-z"), least significant 6 bits first. */
const ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Encodes three octets (b2 most significant) as `n` characters, as crypt's b64_from_24bit does. */
function from24bit(b2: number, b1: number, b0: number, n: number): string {
  let w = (b2 << 16) | (b1 << 8) | b0;
  let out = "";
  for (let i = 0; i < n; i++) {
    out += ITOA64[w & 0x3f];
    w >>>= 6;
  }
  return out;
}

/** Encodes a digest by groups of three of its octets (the scheme's permutation). */
function encodeGroups(digest: Buffer, groups: readonly (readonly number[])[]): string {
  return groups
    .map((g) =>
      g.length === 3 ? from24bit(digest[g[0]!]!, digest[g[1]!]!, digest[g[2]!]!, 4) : tail(digest, g),
    )
    .join("");
}

function tail(digest: Buffer, group: readonly number[]): string {
  // The last, short group: one octet (2 characters) or two octets (3 characters).
  if (group.length === 1) return from24bit(0, 0, digest[group[0]!]!, 2);
  return from24bit(0, digest[group[0]!]!, digest[group[1]!]!, 3);
}

const MD5_GROUPS = [[0, 6, 12], [1, 7, 13], [2, 8, 14], [3, 9, 15], [4, 10, 5], [11]] as const;

/**
 * MD5-crypt (Poul-Henning Kamp's md5crypt, FreeBSD 1994): "$1$" + salt + "$" + 22 characters.
 * `salt` is at most 8 characters of the crypt alphabet.
 */
export function md5Crypt(password: Buffer, salt: string): string {
  const saltOctets = Buffer.from(salt, "latin1");
  const alternate = createHash("md5").update(password).update(saltOctets).update(password).digest();
  const context = createHash("md5").update(password).update("$1$").update(saltOctets);
  for (let left = password.length; left > 0; left -= 16)
    context.update(alternate.subarray(0, Math.min(16, left)));
  // The famous oddity: a zero octet for each 1 bit of the length, the password's first octet for each 0 bit.
  for (let i = password.length; i > 0; i >>= 1)
    context.update(i & 1 ? Buffer.of(0) : password.subarray(0, 1));
  let digest = context.digest();
  for (let round = 0; round < 1000; round++) {
    const step = createHash("md5");
    step.update(round & 1 ? password : digest);
    if (round % 3) step.update(saltOctets);
    if (round % 7) step.update(password);
    step.update(round & 1 ? digest : password);
    digest = step.digest();
  }
  return `$1$${salt}$${encodeGroups(digest, MD5_GROUPS)}`;
}

// SHA-crypt's permutation of the digest's octets (Drepper's specification, step 22).
const SHA256_GROUPS = [
  [0, 10, 20],
  [21, 1, 11],
  [12, 22, 2],
  [3, 13, 23],
  [24, 4, 14],
  [15, 25, 5],
  [6, 16, 26],
  [27, 7, 17],
  [18, 28, 8],
  [9, 19, 29],
  [31, 30],
] as const;
const SHA512_GROUPS = [
  [0, 21, 42],
  [22, 43, 1],
  [44, 2, 23],
  [3, 24, 45],
  [25, 46, 4],
  [47, 5, 26],
  [6, 27, 48],
  [28, 49, 7],
  [50, 8, 29],
  [9, 30, 51],
  [31, 52, 10],
  [53, 11, 32],
  [12, 33, 54],
  [34, 55, 13],
  [56, 14, 35],
  [15, 36, 57],
  [37, 58, 16],
  [59, 17, 38],
  [18, 39, 60],
  [40, 61, 19],
  [62, 20, 41],
  [63],
] as const;
const SHA_GROUPS = { 32: SHA256_GROUPS, 64: SHA512_GROUPS } as const;

/** `length` octets of `block` repeated (steps 11-12, 16 and 20 of the specification). */
function repeated(block: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let at = 0; at < length; at += block.length)
    block.copy(out, at, 0, Math.min(block.length, length - at));
  return out;
}

/** Rounds between two yields to the event loop (about 50 ms of work). */
const YIELD_EVERY_ROUNDS = 10_000;

/**
 * SHA-crypt (Ulrich Drepper, "Unix crypt using SHA-256 and SHA-512", 2007): "$5$" or "$6$",
 * "rounds=N$" when given, salt (at most 16 characters), "$" and 43 or 86 characters.
 */
export async function shaCrypt(
  id: "5" | "6",
  password: Buffer,
  salt: string,
  rounds: number | undefined,
): Promise<string> {
  const algorithm = id === "5" ? "sha256" : "sha512";
  const size = id === "5" ? 32 : 64;
  const saltOctets = Buffer.from(salt, "latin1");
  const b = createHash(algorithm).update(password).update(saltOctets).update(password).digest();
  const a = createHash(algorithm).update(password).update(saltOctets);
  a.update(repeated(b, password.length));
  for (let n = password.length; n > 0; n >>= 1) a.update(n & 1 ? b : password);
  let digest = a.digest();
  const dp = createHash(algorithm);
  for (let i = 0; i < password.length; i++) dp.update(password);
  const p = repeated(dp.digest(), password.length);
  const ds = createHash(algorithm);
  for (let i = 0; i < 16 + digest[0]!; i++) ds.update(saltOctets);
  const s = repeated(ds.digest(), saltOctets.length);
  for (let round = 0; round < (rounds ?? 5000); round++) {
    // A round costs a few microseconds here: many rounds must not hold up the event loop.
    if (round > 0 && round % YIELD_EVERY_ROUNDS === 0) await new Promise(setImmediate);
    const c = createHash(algorithm);
    c.update(round & 1 ? p : digest);
    if (round % 3) c.update(s);
    if (round % 7) c.update(p);
    c.update(round & 1 ? digest : p);
    digest = c.digest();
  }
  const prefix = rounds === undefined ? `$${id}$` : `$${id}$rounds=${rounds}$`;
  return `${prefix}${salt}$${encodeGroups(digest, SHA_GROUPS[size])}`;
}

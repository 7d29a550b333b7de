// Console passwords: scrypt with a random salt per password, verified in constant time. The stored
// form names its parameters (scrypt$N$r$p$salt$key), so they can be raised: a hash made with
// weaker ones still verifies, and is replaced at the next successful login.
import { randomBytes, randomInt, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

const KEY_LENGTH = 64;
const SALT_BYTES = 16;
/**
 * OWASP's minimum for scrypt (Password Storage Cheat Sheet): N = 2^17, r = 8, p = 1. About 128 MiB
 * and a few hundred milliseconds per hash.
 */
export const SCRYPT_PARAMS = { N: 2 ** 17, r: 8, p: 1 } as const;

/**
 * The parameters new hashes get: SCRYPT_PARAMS, unless WISP_TEST_SCRYPT_LOG2N (10-16) asks for a
 * smaller N. For the test suite only (`npm test` sets it; the suites that check the cost itself
 * unset it): its console suites make hundreds of hashes, each ~0.3 s of CPU at the real cost. Read
 * at each hash, so a test file can unset it before its first.
 */
function hashParams(): { N: number; r: number; p: number } {
  const log2n = Number(process.env.WISP_TEST_SCRYPT_LOG2N);
  if (!Number.isInteger(log2n) || log2n < 10 || log2n > 16) return SCRYPT_PARAMS;
  return { ...SCRYPT_PARAMS, N: 2 ** log2n };
}
/**
 * scrypt needs 128 * N * r bytes (128 MiB here), above Node's default maxmem of 32 MiB. Stored
 * hashes asking for more than this are refused rather than run.
 */
const MAX_MEMORY = 256 * 1024 * 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, { ...options, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const params = hashParams();
  const { N, r, p } = params;
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params);
  return ["scrypt", N, r, p, salt.toString("base64"), key.toString("base64")].join("$");
}

interface Parsed {
  params: { N: number; r: number; p: number };
  salt: Buffer;
  key: Buffer;
}

/** A stored hash this code wrote (any parameters), or null. */
function parse(stored: string): Parsed | null {
  const [scheme, n, r, p, salt, hash, extra] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash || extra !== undefined) return null;
  const key = Buffer.from(hash, "base64");
  if (key.length !== KEY_LENGTH) return null;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (![params.N, params.r, params.p].every((v) => Number.isInteger(v) && v > 0)) return null;
  return { params, salt: Buffer.from(salt, "base64"), key };
}

/** Whether a stored hash was made with weaker parameters than today's (or is not one at all). */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  if (!parsed) return true;
  const { N, r, p } = parsed.params;
  const today = hashParams();
  return N < today.N || r < today.r || p < today.p;
}

/** False for a wrong password and for a stored value that is not a hash this code wrote. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) return false;
  let key: Buffer;
  try {
    key = await derive(password, parsed.salt, parsed.params);
  } catch {
    return false; // parameters scrypt refuses (N not a power of two, beyond MAX_MEMORY)
  }
  return timingSafeEqual(key, parsed.key);
}

/**
 * Verifies a password and, when the stored hash has weaker parameters than today's, makes the
 * hash to replace it with (`upgraded`, only for the right password). The new hash is made whether
 * or not the password is right, so a login takes as long either way; after the check, not
 * alongside it, so one check never holds more than one scrypt's memory (see password-work.ts).
 */
export async function checkPassword(
  password: string,
  stored: string,
): Promise<{ valid: boolean; upgraded: string | null }> {
  const valid = await verifyPassword(password, stored);
  const upgraded = needsRehash(stored) ? await hashPassword(password) : null;
  return { valid, upgraded: valid ? upgraded : null };
}

let unusable: Promise<string> | undefined;

/** A hash of nothing anyone knows: verified against when an email is unknown, so timing tells nothing. */
export function unusableHash(): Promise<string> {
  unusable ??= hashPassword(randomBytes(32).toString("base64"));
  return unusable;
}

const PASSWORD_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";

/** 20 characters of 56: about 116 bits; grouped in fours so it can be read out and typed. */
export function generatePassword(): string {
  const groups: string[] = [];
  for (let g = 0; g < 5; g++) {
    let group = "";
    for (let i = 0; i < 4; i++) group += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
    groups.push(group);
  }
  return groups.join("-");
}

// Console passwords: scrypt with a random salt per password, verified in constant time. The stored
// form names its parameters, so they can be raised later without breaking existing hashes.
import { randomBytes, randomInt, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

const KEY_LENGTH = 64;
const SALT_BYTES = 16;
/** N = 2^15, r = 8, p = 1: about 32 MiB and a few tens of milliseconds per hash. */
const PARAMS = { N: 32768, r: 8, p: 1 } as const;
const MAX_MEMORY = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, { ...options, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, PARAMS);
  return ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, salt.toString("base64"), key.toString("base64")].join("$");
}

/** False for a wrong password and for a stored value that is not a hash this code wrote. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  if (expected.length !== KEY_LENGTH) return false;
  const options = { N: Number(n), r: Number(r), p: Number(p) };
  if (![options.N, options.r, options.p].every((v) => Number.isInteger(v) && v > 0)) return false;
  const key = await derive(password, Buffer.from(salt, "base64"), options);
  return timingSafeEqual(key, expected);
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

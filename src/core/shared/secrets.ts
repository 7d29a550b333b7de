// Comparing secrets of any length (passwords, codes) without leaking where they differ or how long
// the known one is: both sides are HMAC'd with a key made at process start and the equal-length
// MACs compared with timingSafeEqual. A plain length check before timingSafeEqual would answer
// faster for a wrong length, and decoding to text first would let different octets compare equal.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const KEY = randomBytes(32);

const mac = (value: Buffer) => createHmac("sha256", KEY).update(value).digest();

/** Whether `given` holds exactly the octets of `known`, in time independent of where they differ. */
export function sameOctets(given: Buffer, known: Buffer): boolean {
  return timingSafeEqual(mac(given), mac(known));
}

// Random octets drawn from the CSPRNG 4 KiB at a time, each octet used once and wiped after use:
// one getrandom() call per many draws instead of one per token, State or authenticator. A call
// per draw was 5% of a portal page's CPU and 2% of an EAP login's (bench/portal.ts, bench/eap.ts).
import { randomFillSync } from "node:crypto";

const pool = Buffer.alloc(4096);
let used = pool.length;

/** The next `n` (at most 4096) octets of the pool, to be read at once: they are wiped by take(). */
function next(n: number): number {
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return used;
}

function take(at: number, n: number): void {
  pool.fill(0, at, at + n);
  used = at + n;
}

/** Writes `n` (at most 4096) random octets into `target` at `at`. */
export function randomInto(target: Buffer, at: number, n: number): void {
  const from = next(n);
  pool.copy(target, at, from, from + n);
  take(from, n);
}

/** `n` random octets as base64url text (a token), without a Buffer of their own. */
export function randomToken(n: number): string {
  const from = next(n);
  const text = pool.toString("base64url", from, from + n);
  take(from, n);
  return text;
}

/** `n` fresh random octets. */
export function randomOctets(n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  randomInto(out, 0, n);
  return out;
}

// Random octets drawn from the CSPRNG 4 KiB at a time, each octet used once and wiped after use:
// one getrandom() call per many draws instead of one per token, State or authenticator. A call
// per draw was 5% of a portal page's CPU and 2% of an EAP login's (bench/portal.ts, bench/eap.ts).
import { randomFillSync } from "node:crypto";

const pool = Buffer.alloc(4096);
let used = pool.length;

/** Writes `n` (at most 4096) random octets into `target` at `at`. */
export function randomInto(target: Buffer, at: number, n: number): void {
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  pool.copy(target, at, used, used + n);
  pool.fill(0, used, used + n);
  used += n;
}

/** `n` fresh random octets. */
export function randomOctets(n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  randomInto(out, 0, n);
  return out;
}

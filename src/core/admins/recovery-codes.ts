// Recovery codes: single-use codes shown once when a second factor is set up, for when the
// authenticator is lost. 12 characters of a 32-letter alphabet (60 bits, no 0/O or 1/I to mix up),
// typed in groups of four. Only a keyed hash is stored (HMAC-SHA256 under a key derived from the
// sealing key), so a copy of the database alone does not let anyone try codes offline.
import { createHmac, randomInt } from "node:crypto";

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const LENGTH = 12;

export function generateRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = "";
    for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    return code.match(/.{4}/g)!.join("-");
  });
}

/** The code as typed: upper-cased, spaces and dashes dropped; null unless it can be a code. */
export function normalizeRecoveryCode(text: string): string | null {
  const code = text.toUpperCase().replace(/[\s-]/g, "");
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : null;
}

export function hashRecoveryCode(key: Buffer, normalized: string): string {
  return createHmac("sha256", key).update(normalized).digest("hex");
}

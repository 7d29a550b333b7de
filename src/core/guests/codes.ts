// The secrets of a verification: the 6-digit code (kept as an HMAC under the deployment's key, so a
// copy of the database does not give the codes away by trying all million), the guest page's token,
// and the single-use tokens of email links and sponsors' approve/deny links (256 random bits each,
// kept as SHA-256 digests: a link cannot be forged, and the database never holds one that works).
import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from "node:crypto";

export const CODE_DIGITS = 6;
/** base64url of 32 random bytes. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newCode(): string {
  return String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, "0");
}

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

export function tokenDigest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The code bound to its verification row, so a digest copied to another row does not match. */
export function codeDigest(key: Buffer, verificationId: number, code: string): string {
  return createHmac("sha256", key).update(`${verificationId}:${code}`).digest("hex");
}

/** Constant-time comparison of two hex digests. */
export function sameDigest(a: string, b: string | null): boolean {
  if (b === null || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** Digits only, as typed with spaces or dashes; null when it cannot be a code. */
export function typedCode(text: string): string | null {
  const digits = text.replace(/[\s-]/g, "");
  return new RegExp(`^[0-9]{${CODE_DIGITS}}$`).test(digits) ? digits : null;
}

/** The digest the daily caps count a recipient by (no clear address in guest_sends). */
export function recipientDigest(recipient: string): string {
  return createHash("sha256").update(recipient.toLowerCase()).digest("hex");
}

// TOTP (RFC 6238) as every authenticator app speaks it: HMAC-SHA-1, 6 digits, 30-second steps,
// a 160-bit secret (RFC 4226 section 4, R6) in base32 (RFC 4648), carried by an otpauth:// URI.
// otplib computes and compares the codes (in constant time); this file fixes the parameters and
// tells which time step a code matched, so a code is accepted once (RFC 6238 section 5.2: "the
// verifier MUST NOT accept the second attempt of the OTP after the successful validation").

/** otplib (with its hash and base32 code), loaded with the first TOTP set-up or code, not at start. */
const otplib = () => import("otplib");

export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
/**
 * Codes of the step before and after the server's are accepted too (RFC 6238 section 5.2's
 * allowance for clock drift and transmission delay): three codes at a time.
 */
const TOLERANCE_S = TOTP_PERIOD;
/** The issuer apps show next to the account (the otpauth URI's issuer). */
export const TOTP_ISSUER = "Wisp";

/** A new secret, base32 (20 random bytes). */
export async function newTotpSecret(): Promise<string> {
  const { generateSecret } = await otplib();
  return generateSecret({ length: 20 });
}

/** The otpauth:// URI an app scans; the app shows "Wisp: <email>". */
export async function totpUri(secret: string, email: string): Promise<string> {
  const { generateURI } = await otplib();
  return generateURI({
    issuer: TOTP_ISSUER,
    label: email,
    secret,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
  });
}

/** The code as typed: spaces and dashes dropped; null unless 6 digits remain. */
export function normalizeTotpCode(text: string): string | null {
  const code = text.replace(/[\s-]/g, "");
  return /^\d{6}$/.test(code) ? code : null;
}

/** The RFC 6238 time step T of a unix time in milliseconds: floor(seconds / 30). */
export function timeStep(ms: number): number {
  return Math.floor(ms / 1000 / TOTP_PERIOD);
}

/** The time step the code belongs to (within the tolerance of `now`), or null for a wrong code. */
export async function matchTotp(secret: string, text: string, now = Date.now()): Promise<number | null> {
  const token = normalizeTotpCode(text);
  if (!token) return null;
  const { verify } = await otplib();
  const result = await verify({
    secret,
    token,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    epoch: Math.floor(now / 1000),
    epochTolerance: TOLERANCE_S,
  });
  // delta: how many steps from now's the code matched (-1, 0 or +1).
  return result.valid ? timeStep(now) + result.delta : null;
}

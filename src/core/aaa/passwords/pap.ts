// PAP as FreeRADIUS 3.2.1's rlm_pap authenticates (mod_authenticate): the first password item of
// the list rlm_pap's authorize step left (knownGoodPasswords) decides, whatever follows it, with
// the check of its kind. Every door that checks a password Wisp-side (RADIUS PAP, EAP-TTLS/PAP,
// the captive portal's sign-in, `wisp radius test` through the RADIUS door) comes here.
import { sameOctets } from "../../shared/secrets.ts";
import { type Check, isProblem, type Problem } from "./check.ts";
import { checkCrypt, cryptScheme } from "./crypt.ts";
import {
  checkLm,
  checkMd5,
  checkNsMtaMd5,
  checkNt,
  checkSha,
  checkSha2,
  checkSmd5,
  checkSsha,
  checkSsha2_224,
  checkSsha2_256,
  checkSsha2_384,
  checkSsha2_512,
} from "./digests.ts";
import { cString } from "./encoding.ts";
import type { KnownGood, PasswordItem } from "./items.ts";
import { checkPbkdf2, parsePbkdf2 } from "./pbkdf2.ts";

type ItemCheck = (stored: Buffer, password: Buffer) => Check | Promise<Check>;

const CHECKS: Record<PasswordItem, ItemCheck> = {
  "Cleartext-Password": (stored, password) => sameOctets(password, stored),
  "Crypt-Password": checkCrypt,
  "MD5-Password": checkMd5,
  "SMD5-Password": checkSmd5,
  "SHA-Password": checkSha,
  "SSHA-Password": checkSsha,
  "SHA2-Password": checkSha2,
  "SSHA2-224-Password": checkSsha2_224,
  "SSHA2-256-Password": checkSsha2_256,
  "SSHA2-384-Password": checkSsha2_384,
  "SSHA2-512-Password": checkSsha2_512,
  "PBKDF2-Password": checkPbkdf2,
  "NT-Password": checkNt,
  "LM-Password": checkLm,
  "NS-MTA-MD5-Password": checkNsMtaMd5,
};

export const NO_PASSWORD = "no password configured for the user";
export const WRONG_PASSWORD = "wrong password";
export const EMPTY_PASSWORD = "empty password";

/**
 * The reason an Access-Reject gives when the deciding item cannot be used: one per item and kind
 * (a bounded set, see rejectReasons), the detail going to the auth log beside it.
 */
export function problemReason(item: PasswordItem, found: Problem): string {
  switch (found.kind) {
    case "malformed":
      // Kept as it was worded before for the NT-Password, which dashboards may count.
      return item === "NT-Password" ? "the NT-Password is not an NT hash" : `the stored ${item} is malformed`;
    case "unsupported":
      return `the stored ${item} uses a scheme Wisp does not check`;
    case "uncheckable":
      return `the password cannot be checked against the stored ${item}`;
  }
}

/** Every reason papFailure can give (for bounded metric labels). */
export function papRejectReasons(): string[] {
  const reasons = new Set([NO_PASSWORD, WRONG_PASSWORD, EMPTY_PASSWORD]);
  for (const item of Object.keys(CHECKS) as PasswordItem[]) {
    for (const kind of ["malformed", "unsupported", "uncheckable"] as const) {
      reasons.add(problemReason(item, { kind, detail: "" }));
    }
  }
  return [...reasons];
}

export interface PapFailure {
  reason: string;
  /** More for the auth log (which hash, which limit); never the password or the stored value. */
  detail?: string;
}

/** undefined when `password` is right by the first known-good item, else why not. */
export async function papFailure(
  known: readonly KnownGood[],
  password: Buffer,
): Promise<PapFailure | undefined> {
  const first = known[0];
  if (!first) return { reason: NO_PASSWORD };
  // rlm_pap: "Password must not be empty".
  if (password.length === 0) return { reason: EMPTY_PASSWORD };
  if (!first.octets) {
    return {
      reason: problemReason(first.item, { kind: "malformed", detail: "" }),
      detail: "not readable as octets",
    };
  }
  const verdict = await CHECKS[first.item](first.octets, password);
  if (isProblem(verdict)) return { reason: problemReason(first.item, verdict), detail: verdict.detail };
  return verdict ? undefined : { reason: WRONG_PASSWORD };
}

/**
 * Why a stored item (after rlm_pap's authorize step) could never let anyone in, or undefined. Parses
 * only: no crypt or PBKDF2 work is done, so validating input costs nothing.
 */
export function storedItemProblem(item: PasswordItem, stored: Buffer): Problem | undefined {
  if (item === "Crypt-Password") {
    const scheme = cryptScheme(cString(stored).toString("latin1"));
    return typeof scheme === "object" ? scheme : undefined;
  }
  if (item === "PBKDF2-Password") {
    const parsed = parsePbkdf2(stored);
    return "kind" in parsed ? parsed : undefined;
  }
  // The digest checks are synchronous and cheap: run them with a throwaway password.
  const verdict = CHECKS[item](stored, Buffer.from("x")) as Check;
  return isProblem(verdict) && verdict.kind !== "uncheckable" ? verdict : undefined;
}

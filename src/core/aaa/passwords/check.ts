// What checking a password against one stored item can come to: it matches, it does not, or the
// item cannot be used (FreeRADIUS: RLM_MODULE_INVALID), for a reason Wisp records.

export type ProblemKind =
  /** The stored value is not what the item holds: wrong length, bad base64, unparsable format. */
  | "malformed"
  /** A well-formed value of a kind Wisp does not check (a crypt scheme, a PBKDF2 digest, a limit). */
  | "unsupported"
  /** The password sent cannot be put into the form the item needs (not UCS-2, not UTF-8...). */
  | "uncheckable";

export interface Problem {
  kind: ProblemKind;
  /** Why, in words, for the auth log. Never holds the password or the stored value. */
  detail: string;
}

export type Check = boolean | Problem;

export const problem = (kind: ProblemKind, detail: string): Problem => ({ kind, detail });

export function isProblem(check: Check): check is Problem {
  return typeof check === "object";
}

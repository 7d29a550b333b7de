// What a valid console user looks like, and the shape of the first-run setup code.
import { randomInt } from "node:crypto";
import { EMAIL_PATTERN, MAX_EMAIL } from "../users/rules.ts";

export { MAX_EMAIL };
export const MIN_PASSWORD = 12;
export const MAX_PASSWORD = 200;
export const EMAIL_RULE = "must be an email address";
export const PASSWORD_RULE = `must be ${MIN_PASSWORD}-${MAX_PASSWORD} characters`;

const emailPattern = new RegExp(EMAIL_PATTERN);

/** Emails are compared ignoring case and surrounding space. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function emailProblem(email: string): string | null {
  return email === "" || email.length > MAX_EMAIL || !emailPattern.test(email) ? EMAIL_RULE : null;
}

export function passwordProblem(password: string): string | null {
  const length = Array.from(password).length;
  return length < MIN_PASSWORD || length > MAX_PASSWORD ? PASSWORD_RULE : null;
}

/** No look-alikes (0 O 1 I L): the code is read off a log and typed into a form. */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/** XXXX-XXXX: 31^8 ≈ 8.5e11 codes, guessed at most a few times a minute behind the login limit. */
export function generateSetupCode(): string {
  let code = "";
  for (let i = 0; i < 8; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** What a person may type for a code: any case, with or without the dash or spaces. */
export function normalizeSetupCode(text: string): string {
  const bare = text.replace(/[\s-]/g, "").toUpperCase();
  return bare.length === 8 ? `${bare.slice(0, 4)}-${bare.slice(4)}` : bare;
}

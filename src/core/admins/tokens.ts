// Random tokens of console cookies (sessions, sign-ins) and the hashes they are stored as.
import { createHash, randomBytes } from "node:crypto";

export const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** 32 random bytes, base64url (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

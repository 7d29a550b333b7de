// Standard Webhooks signatures: v1,<base64 HMAC-SHA256 of "id.timestamp.body"> keyed with the
// secret's decoded bytes.
import { createHmac, timingSafeEqual } from "node:crypto";
import { secretBytes } from "./crypto.ts";

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

export function sign(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", secretBytes(secret))
    .update(`${messageId}.${timestampSeconds}.${body}`)
    .digest("base64");
  return `v1,${mac}`;
}

export function signedHeaders(
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string,
): SignedHeaders {
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": sign(secret, messageId, timestampSeconds, body),
  };
}

/** True when any v1 signature in the header matches (compared in constant time). */
export function verify(
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string,
  header: string,
): boolean {
  const expected = Buffer.from(sign(secret, messageId, timestampSeconds, body));
  return header.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

// What decoding, the crypto and encoding all need: header and attribute constants, the shared-secret
// key cache, md5, and FreeRADIUS's raw attribute names.

import crypto, { createHash } from "node:crypto";

export const HEADER = 20;
export const MAX_PACKET = 4096;
export const ZERO16 = Buffer.alloc(16);
export const EAP_MESSAGE = 79;
export const MESSAGE_AUTHENTICATOR = 80;
export const VENDOR_SPECIFIC = 26;
export const CUI = 89;

/** A shared secret with its HMAC-MD5 pads (RFC 2104). */
export interface SecretKey {
  key: Buffer;
  ipad: Buffer;
  opad: Buffer;
}

// Secrets come from a handful of configured networks: their key material is computed once.
const secretKeys = new Map<string, SecretKey>();

function makeSecretKey(key: Buffer): SecretKey {
  if (key.length === 0) throw new TypeError("RADIUS shared secret must not be empty");
  const k = key.length > 64 ? md5(key) : key;
  const ipad = Buffer.alloc(64, 0x36);
  const opad = Buffer.alloc(64, 0x5c);
  for (let i = 0; i < k.length; i++) {
    ipad[i]! ^= k[i]!;
    opad[i]! ^= k[i]!;
  }
  return { key, ipad, opad };
}

export function secretKey(secret: string | Buffer): SecretKey {
  if (typeof secret !== "string") return makeSecretKey(secret);
  let sk = secretKeys.get(secret);
  if (!sk) {
    if (secretKeys.size >= 1000) secretKeys.clear();
    sk = makeSecretKey(Buffer.from(secret, "utf8"));
    secretKeys.set(secret, sk);
  }
  return sk;
}

/** The secret's octets (no HMAC pads needed). */
export function toSecret(secret: string | Buffer): Buffer {
  if (typeof secret === "string") return secretKey(secret).key;
  if (secret.length === 0) throw new TypeError("RADIUS shared secret must not be empty");
  return secret;
}

export function checkAuthenticator(auth: Buffer | undefined, what: string): Buffer {
  if (auth?.length !== 16) throw new TypeError(`${what} must be 16 octets`);
  return auth;
}

// One-shot MD5 (crypto.hash, Node 20.12+) over the parts copied side by side: a Hash object and an
// update call per part cost more than the copy (a RADIUS packet takes three MD5s; 0.7 µs each
// saved here). Older Node: createHash.
const oneShot = typeof crypto.hash === "function" ? crypto.hash : undefined;
const joined = Buffer.allocUnsafe(8192);

/** MD5 of the parts in order. */
export function md5(...parts: Buffer[]): Buffer {
  const out = Buffer.allocUnsafe(16);
  md5Into(out, 0, parts);
  return out;
}

/**
 * MD5 of the parts in order, written into `out` at `at` (it may overlap the parts). The packet
 * authenticators take this way: the digest comes back as a 16-character "binary" (latin1) string, not as a
 * Buffer of its own, whose memory outside the JS heap costs a malloc, a free and GC bookkeeping
 * (5 digests per EAP round trip; 0.3 µs each in a loop, more in the GC's threads).
 */
export function md5Into(out: Buffer, at: number, parts: readonly Buffer[]): void {
  if (oneShot) {
    let length = 0;
    for (const part of parts) length += part.length;
    if (length <= joined.length) {
      let offset = 0;
      for (const part of parts) offset += part.copy(joined, offset);
      out.write(oneShot("md5", joined.subarray(0, length), "binary"), at, 16, "latin1");
      return;
    }
  }
  const h = createHash("md5");
  for (const part of parts) h.update(part);
  h.digest().copy(out, at);
}

export function rawName(code: number, vendorId: number | undefined): string {
  return vendorId === undefined ? `Attr-${code}` : `Attr-26.${vendorId}.${code}`;
}

// Hidden values (User-Password, Tunnel-Password), CHAP, and the packet authenticators: Request and
// Response Authenticators and Message-Authenticator (HMAC-MD5).

import { randomFillSync, timingSafeEqual } from "node:crypto";
import { checkedAddon } from "../eap/native-addon.ts";
import { isResponseCode, isSignedRequest, packetCodeName, RadiusEncodeError } from "./codes.ts";
import {
  checkAuthenticator,
  HEADER,
  MESSAGE_AUTHENTICATOR,
  md5,
  md5Into,
  type SecretKey,
  secretKey,
  toSecret,
  ZERO16,
} from "./shared.ts";

/** RFC 2865 §5.2: User-Password hidden with MD5(secret + authenticator), chained per 16 octets. */
export function encryptUserPassword(
  password: Buffer | string,
  secret: string | Buffer,
  auth: Buffer,
): Buffer {
  const plain = typeof password === "string" ? Buffer.from(password, "utf8") : password;
  if (plain.length > 128) throw new RadiusEncodeError("User-Password is longer than 128 octets");
  const out = Buffer.alloc(Math.max(16, Math.ceil(plain.length / 16) * 16));
  plain.copy(out);
  hideBlocks(out, 0, toSecret(secret), checkAuthenticator(auth, "authenticator"));
  return out;
}

/** XORs 16-octet blocks in place with MD5(secret + previous cipher block), the first with `iv`. */
function hideBlocks(buf: Buffer, start: number, secret: Buffer, iv: Buffer): void {
  let prev = iv;
  for (let i = start; i < buf.length; i += 16) {
    const b = md5(secret, prev);
    for (let k = 0; k < 16; k++) buf[i + k]! ^= b[k]!;
    prev = buf.subarray(i, i + 16);
  }
}

/**
 * Reverses User-Password hiding and strips trailing NULs. As in FreeRADIUS, at most 128 octets are
 * read and a last partial block is decoded as far as it goes.
 */
export function decryptUserPassword(
  raw: Buffer,
  secret: string | Buffer,
  requestAuthenticator: Buffer,
): Buffer {
  const key = toSecret(secret);
  const len = Math.min(raw.length, 128);
  const out = Buffer.allocUnsafe(len);
  let prev = checkAuthenticator(requestAuthenticator, "requestAuthenticator");
  for (let i = 0; i < len; i += 16) {
    const b = md5(key, prev);
    for (let k = 0; k < 16 && i + k < len; k++) out[i + k] = raw[i + k]! ^ b[k]!;
    prev = raw.subarray(i, i + 16);
  }
  let end = len;
  while (end > 0 && out[end - 1] === 0) end--;
  return out.subarray(0, end);
}

/** RFC 2868 §3.5 (and RFC 2548 MS-MPPE keys): salt(2) + hidden(length octet + value + padding). */
export function encryptTunnelPassword(
  password: Buffer | string,
  secret: string | Buffer,
  auth: Buffer,
  salt?: Buffer,
): Buffer {
  const plain = typeof password === "string" ? Buffer.from(password, "utf8") : password;
  if (plain.length > 239) throw new RadiusEncodeError("Tunnel-Password is longer than 239 octets");
  const out = Buffer.alloc(2 + Math.ceil((plain.length + 1) / 16) * 16);
  if (salt) salt.copy(out, 0, 0, 2);
  else randomFillSync(out, 0, 2);
  out[0]! |= 0x80; // RFC 2868: the salt's most significant bit must be set
  out[2] = plain.length;
  plain.copy(out, 3);
  const key = toSecret(secret);
  const first = md5(key, checkAuthenticator(auth, "authenticator"), out.subarray(0, 2));
  for (let k = 0; k < 16; k++) out[2 + k]! ^= first[k]!;
  hideBlocks(out, 18, key, out.subarray(2, 18));
  return out;
}

/** Reverses encryptTunnelPassword; undefined when the value does not decrypt sensibly. */
export function decryptTunnelPassword(
  raw: Buffer,
  secret: string | Buffer,
  auth: Buffer,
): Buffer | undefined {
  if (raw.length < 2) return undefined;
  // A salt with no data (or only a length octet): FreeRADIUS reads an empty password.
  if (raw.length <= 3) return Buffer.alloc(0);
  if ((raw.length - 2) % 16 !== 0) return undefined;
  const key = toSecret(secret);
  const plain = Buffer.allocUnsafe(raw.length - 2);
  let b = md5(key, checkAuthenticator(auth, "authenticator"), raw.subarray(0, 2));
  for (let i = 2; i < raw.length; i += 16) {
    for (let k = 0; k < 16; k++) plain[i - 2 + k] = raw[i + k]! ^ b[k]!;
    b = md5(key, raw.subarray(i, i + 16));
  }
  const len = plain[0]!;
  if (len > plain.length - 1) return undefined;
  return plain.subarray(1, 1 + len);
}

/** CHAP-Password value: ident + MD5(ident + password + challenge). */
export function chapPassword(ident: number, password: Buffer | string, challenge: Buffer): Buffer {
  const id = Buffer.of(ident & 0xff);
  const pw = typeof password === "string" ? Buffer.from(password, "utf8") : password;
  return Buffer.concat([id, md5(id, pw, challenge)]);
}

/**
 * Checks a CHAP-Password (17 octets) against the cleartext password. The challenge is the
 * CHAP-Challenge attribute, or the Request Authenticator when there is none (the caller picks).
 */
export function verifyChap(
  chapPasswordValue: Buffer,
  challenge: Buffer,
  cleartext: string | Buffer,
): boolean {
  if (chapPasswordValue.length !== 17) return false;
  const pw = typeof cleartext === "string" ? Buffer.from(cleartext, "utf8") : cleartext;
  const expected = md5(chapPasswordValue.subarray(0, 1), pw, challenge);
  return timingSafeEqual(expected, chapPasswordValue.subarray(1));
}

/** Valid header and Length field; the packet length, or -1. */
function packetLength(buf: Buffer): number {
  if (buf.length < HEADER) return -1;
  const length = buf.readUInt16BE(2);
  return length >= HEADER && length <= buf.length ? length : -1;
}

/** Offsets of Message-Authenticator attributes (at most 2 reported), or null if malformed. */
function findMessageAuthenticators(buf: Buffer, length: number): number[] | null {
  const found: number[] = [];
  for (let p = HEADER; p < length; ) {
    if (length - p < 2) return null;
    const len = buf[p + 1]!;
    if (len < 2 || p + len > length) return null;
    if (buf[p] === MESSAGE_AUTHENTICATOR) {
      if (len !== 18) return null;
      found.push(p);
      if (found.length > 1) return found;
    }
    p += len;
  }
  return found;
}

/** True when the packet has a well-formed Message-Authenticator attribute. */
export function hasMessageAuthenticator(buf: Buffer): boolean {
  const length = packetLength(buf);
  const found = length < 0 ? null : findMessageAuthenticators(buf, length);
  return found !== null && found.length > 0;
}

/** The inner digest of an HMAC (one at a time: this module runs to completion). */
const innerDigest = Buffer.alloc(16);
/** A computed authenticator, compared and then done with (reused: no Buffer per packet). */
const computed = Buffer.alloc(16);

/**
 * The OpenSSL addon's MD5 over a packet where it lies (openssl-tunnel.c radiusHmac, radiusDigest),
 * when the build made it and it agrees with crypto.hash on a known packet; else crypto.hash.
 */
const digests = checkedAddon((addon) => {
  // An Access-Challenge: header, a Message-Authenticator (zeros), an empty attribute.
  const packet = Buffer.from(`0b2a0028${"11".repeat(16)}5012${"00".repeat(16)}0102`, "hex");
  const key = secretKey("s3cret");
  const native = Buffer.alloc(32);
  const script = Buffer.alloc(32);
  addon.radiusHmac(native, 0, key.ipad, key.opad, packet, packet.length, 20, ZERO16);
  addon.radiusDigest(native, 16, packet, packet.length, ZERO16, key.key);
  hmacInScript(packet, packet.length, 20, ZERO16, key, script, 0);
  md5Into(script, 16, [packet.subarray(0, 4), ZERO16, packet.subarray(HEADER), key.key]);
  return native.equals(script);
});

/** Tests only: compute authenticators with crypto.hash (false) or the addon when it loads (true). */
export function useNativeDigests(on: boolean): void {
  digests.use(on);
}

/** Whether authenticators are computed by the addon (tests). */
export function nativeDigestsInUse(): boolean {
  return digests.get() !== undefined;
}

/**
 * HMAC-MD5(secret, packet) with the Message-Authenticator value as 16 zeros (RFC 3579 §3.2) and
 * the authenticator field as `auth`, written into `out` at `at` (a new Buffer by default).
 */
export function hmacOver(
  buf: Buffer,
  length: number,
  maAt: number,
  auth: Buffer,
  sk: SecretKey,
  out: Buffer = Buffer.allocUnsafe(16),
  at = 0,
): Buffer {
  const native = digests.get();
  if (native) native.radiusHmac(out, at, sk.ipad, sk.opad, buf, length, maAt, auth);
  else hmacInScript(buf, length, maAt, auth, sk, out, at);
  return out;
}

function hmacInScript(
  buf: Buffer,
  length: number,
  maAt: number,
  auth: Buffer,
  sk: SecretKey,
  out: Buffer,
  at: number,
) {
  // HMAC from two MD5s over cached pads: createHmac costs several times more per packet.
  md5Into(
    innerDigest,
    0,
    maAt < 0
      ? [sk.ipad, buf.subarray(0, 4), auth, buf.subarray(HEADER, length)]
      : [
          sk.ipad,
          buf.subarray(0, 4),
          auth,
          buf.subarray(HEADER, maAt + 2),
          ZERO16,
          buf.subarray(maAt + 18, length),
        ],
  );
  md5Into(out, at, [sk.opad, innerDigest]);
}

/**
 * The authenticator fields a Message-Authenticator may be computed over, in order of preference:
 * Access-Request/Status-Server use their own; Accounting/CoA/Disconnect requests use zeros
 * (RFC 5176); responses use the request's. FreeRADIUS 3 signs Accounting-Response (except to
 * Status-Server) and CoA/Disconnect ACK/NAK over zeros, so verification accepts that too.
 */
function maAuthenticators(buf: Buffer, requestAuthenticator: Buffer | undefined): Buffer[] {
  const code = buf[0]!;
  if (isSignedRequest(code)) return [ZERO16];
  if (!isResponseCode(code)) return [buf.subarray(4, HEADER)];
  const req = checkAuthenticator(requestAuthenticator, "requestAuthenticator");
  if (code === 5 || code >= 41) return [req, ZERO16];
  return [req];
}

/**
 * The Message-Authenticator for an encoded packet (its own MA value, if any, counts as zeros).
 * Responses need the Request Authenticator of the request they answer.
 */
export function computeMessageAuthenticator(
  buf: Buffer,
  secret: string | Buffer,
  requestAuthenticator?: Buffer,
): Buffer {
  const length = packetLength(buf);
  if (length < 0) throw new TypeError("not a RADIUS packet");
  const found = findMessageAuthenticators(buf, length);
  if (!found) throw new TypeError("malformed RADIUS packet");
  const auth = maAuthenticators(buf, requestAuthenticator)[0]!;
  return hmacOver(buf, length, found[0] ?? -1, auth, secretKey(secret));
}

/**
 * True when the packet carries exactly one Message-Authenticator and it is right. False when it
 * is missing, repeated or wrong (check hasMessageAuthenticator to tell missing apart).
 */
export function verifyMessageAuthenticator(
  buf: Buffer,
  secret: string | Buffer,
  requestAuthenticator?: Buffer,
): boolean {
  const length = packetLength(buf);
  if (length < 0) return false;
  const found = findMessageAuthenticators(buf, length);
  if (found?.length !== 1) return false;
  const at = found[0]!;
  const sk = secretKey(secret);
  const got = buf.subarray(at + 2, at + 18);
  let ok = false;
  for (const auth of maAuthenticators(buf, requestAuthenticator)) {
    // Every candidate is computed and compared, so timing does not depend on which one matched.
    if (timingSafeEqual(hmacOver(buf, length, at, auth, sk, computed), got)) ok = true;
  }
  return ok;
}

/**
 * MD5(Code + Identifier + Length + `auth` + Attributes + secret), written into `out` at `at` (a
 * new Buffer by default; the packet's own authenticator field may be the target).
 */
export function digestWith(
  buf: Buffer,
  length: number,
  auth: Buffer,
  secret: Buffer,
  out: Buffer = Buffer.allocUnsafe(16),
  at = 0,
): Buffer {
  const native = digests.get();
  if (native) native.radiusDigest(out, at, buf, length, auth, secret);
  else md5Into(out, at, [buf.subarray(0, 4), auth, buf.subarray(HEADER, length), secret]);
  return out;
}

/**
 * Checks the Request Authenticator of an Accounting-Request, CoA-Request or Disconnect-Request:
 * MD5(packet with a zero authenticator + secret). Throws TypeError for other packet codes.
 */
export function verifyRequestAuthenticator(buf: Buffer, secret: string | Buffer): boolean {
  const length = packetLength(buf);
  if (length < 0) return false;
  if (!isSignedRequest(buf[0]!)) {
    throw new TypeError(`${packetCodeName(buf[0]!) ?? buf[0]} has no verifiable Request Authenticator`);
  }
  return timingSafeEqual(
    digestWith(buf, length, ZERO16, toSecret(secret), computed),
    buf.subarray(4, HEADER),
  );
}

/**
 * For a client: checks a response's Response Authenticator against the request's authenticator,
 * and its Message-Authenticator when present.
 */
export function verifyResponse(buf: Buffer, secret: string | Buffer, requestAuthenticator: Buffer): boolean {
  const length = packetLength(buf);
  if (length < 0 || !isResponseCode(buf[0]!)) return false;
  const sk = secretKey(secret);
  const req = checkAuthenticator(requestAuthenticator, "requestAuthenticator");
  if (!timingSafeEqual(digestWith(buf, length, req, sk.key, computed), buf.subarray(4, HEADER))) return false;
  return !hasMessageAuthenticator(buf) || verifyMessageAuthenticator(buf, secret, req);
}

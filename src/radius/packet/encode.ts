// Encoding: attribute list -> signed packet, written in one scratch buffer (hidden values, tags,
// vendor headers, concat splitting, Message-Authenticator and the packet authenticator).

import type { AttributeDef } from "../../core/aaa/dictionary.ts";
import { randomInto } from "../../core/shared/random-pool.ts";
import {
  encodeError,
  isResponseCode,
  isSignedRequest,
  PacketCode,
  packetCode,
  packetCodeName,
} from "./codes.ts";
import { digestWith, encryptTunnelPassword, encryptUserPassword, hmacOver } from "./crypto.ts";
import { resolveTarget, type Target } from "./encode-targets.ts";
import { fixedSize, HEX_VALUE, octetsFromText, writeTyped } from "./encode-values.ts";
import { checkToken, discardedIn11, writeHeader11 } from "./radius11.ts";
import {
  CUI,
  checkAuthenticator,
  EAP_MESSAGE,
  HEADER,
  MAX_PACKET,
  MESSAGE_AUTHENTICATOR,
  type SecretKey,
  secretKey,
  VENDOR_SPECIFIC,
  ZERO16,
} from "./shared.ts";

export type AttributeValue = string | number | bigint | Buffer;
/**
 * `[name, value]` or `{ name, value, tag }`. Names are case-insensitive, may carry a tag
 * ("Tunnel-Type:1") and may be raw ("Attr-26.14988.8", "Vendor-14988-Attr-8", "Attr-200").
 * Values are FreeRADIUS text (integers also take VALUE names, octets take 0x hex), numbers, or
 * Buffers holding the value's bytes (the plaintext, for hidden attributes).
 */
export type AttributeInput =
  | readonly [name: string, value: AttributeValue]
  | { readonly name: string; readonly value: AttributeValue; readonly tag?: number };

export interface PacketInput {
  /** Number or FreeRADIUS name ("Access-Accept"). */
  code: number | string;
  identifier: number;
  attributes?: readonly AttributeInput[];
  /** Access-Request / Status-Server: the Request Authenticator to use (random when absent). */
  authenticator?: Buffer;
}

export interface EncodeOptions {
  /** For responses: the Request Authenticator of the request being answered. */
  requestAuthenticator?: Buffer;
  /** For responses: the request's code (an Accounting-Response to Status-Server signs differently). */
  requestCode?: number;
  /**
   * Add a Message-Authenticator, placed first (as FreeRADIUS 3.2.5+ does against BlastRADIUS).
   * Always added to Status-Server, and to packets with EAP-Message.
   */
  messageAuthenticator?: boolean;
  /**
   * Encode for a RADIUS/1.1 connection (RFC 9765, ALPN "radius/1.1"): the header carries the
   * Identifier given, then `token` (4 octets; a reply repeats its request's) and 12 zero octets
   * (section 4.1). Nothing is signed: the secret, requestAuthenticator, requestCode,
   * messageAuthenticator and packet.authenticator are ignored, and Message-Authenticator is never
   * written, even when listed (section 5.2). Hidden attributes go as their plain type (section 5.1):
   * User-Password as its octets (1-128, no padding), Tunnel-Password as a tag octet then the
   * password (no salt), MS-MPPE keys as the key octets. CHAP-Password must come with a
   * CHAP-Challenge (section 5.1.2): there is no Request Authenticator to stand for it.
   */
  radius11?: { token: Buffer };
}

interface EncodeState {
  buf: Buffer;
  off: number;
  code: number;
  /** undefined in RADIUS/1.1, which hides nothing. */
  secret: SecretKey | undefined;
  /** Request Authenticator field of this packet: User-Password is hidden with it. */
  ownAuth: Buffer;
  requestAuth: Buffer | undefined;
  maAt: number;
  eap: boolean;
  /** Tunnel-Password salts used so far (RFC 2868: unique within a packet). */
  salts?: Set<number>;
  radius11: boolean;
}

// Packets are built in one scratch buffer and copied out at their exact size. The slack lets one
// attribute (at most 255 octets) be written before the size check.
const scratch = Buffer.allocUnsafe(MAX_PACKET + 512);

/** The plaintext octets of a string/octets style value. */
function bytesOf(def: AttributeDef | undefined, value: AttributeValue): Buffer {
  if (Buffer.isBuffer(value)) return value;
  const text = String(value);
  if (!def || def.type === "octets") return octetsFromText(text);
  if (def.type === "string") return Buffer.from(text, "utf8");
  // abinary, "other": only raw octets, as 0x hex (Ascend filter syntax is not parsed here).
  if (HEX_VALUE.test(text)) return octetsFromText(text);
  return encodeError(`${def.name}: give the value as 0x hex octets`);
}

/** Splits FreeRADIUS's ":tag:value" form for has_tag attributes. */
function splitValueTag(def: AttributeDef, value: AttributeValue): [AttributeValue, number | undefined] {
  if (typeof value !== "string" || !def.hasTag || value[0] !== ":") return [value, undefined];
  const m = /^:(\d{1,2}):/.exec(value);
  if (!m) {
    if (value.startsWith(":*:")) encodeError(`${def.name}: tag * matches in check items only`);
    return [value, undefined];
  }
  const tag = Number(m[1]);
  if (tag > 31) encodeError(`${def.name}: tag must be from 0 to 31`);
  return [value.slice(m[0].length), tag];
}

/** A tag given in the name, the value or the input object: all must agree. */
function mergeTag(def: AttributeDef, tag: number | undefined, given: number): number {
  if (!def.hasTag) encodeError(`${def.name} takes no tag`);
  if (!Number.isInteger(given) || given < 0 || given > 31)
    encodeError(`${def.name}: tag must be from 0 to 31`);
  if (tag !== undefined && tag !== given) encodeError(`${def.name}: two different tags`);
  return given;
}

/** Writes the value of one attribute at `at` with at most `room` octets; returns its length. */
function writeValue(
  state: EncodeState,
  target: Target,
  input: AttributeValue,
  inputTag: number | undefined,
  at: number,
  room: number,
): number {
  const { def } = target;
  const out = state.buf;
  if (!def) return copyValue(bytesOf(undefined, input), out, at, room, target.name);
  let value = input;
  let tag: number | undefined;
  if (def.hasTag) [value, tag] = splitValueTag(def, input);
  if (target.tag !== undefined) tag = mergeTag(def, tag, target.tag);
  if (inputTag !== undefined) tag = mergeTag(def, tag, inputTag);
  if (def.encrypt && !state.radius11) return writeHidden(state, def, value, tag, at, room);
  const size = fixedSize(def);
  if (size !== undefined) {
    if (Buffer.isBuffer(value)) {
      if (value.length !== size) encodeError(`${def.name}: a ${def.type} value is ${size} octets`);
      value.copy(out, at);
    } else writeTyped(def, value, out, at);
    if (def.hasTag && def.type === "integer") {
      if (out[at] !== 0) encodeError(`${def.name}: a tagged integer must be below 2^24`);
      out[at] = tag ?? 0;
    }
    return size;
  }
  if (def.type === "ipv6prefix" && !Buffer.isBuffer(value)) return writeTyped(def, value, out, at);
  // Strings: the tag (1-31) goes in front; FreeRADIUS sends no tag octet for 0 / none. A plain
  // RADIUS/1.1 Tunnel-Password keeps RFC 2868 section 3.5's tag octet always (RFC 9765 5.1.3).
  let lead = 0;
  if (def.hasTag && ((tag !== undefined && tag > 0) || (state.radius11 && def.encrypt === 2))) {
    out[at] = tag ?? 0;
    lead = 1;
  }
  const limit = state.radius11 && def.encrypt === 1 ? Math.min(room, 128) : room; // RFC 9765 5.1.1
  if (def.type === "string" && typeof value === "string") {
    const len = Buffer.byteLength(value, "utf8");
    if (len + lead > limit) tooLong(target.name, limit - lead);
    return lead + out.write(value, at + lead, len, "utf8");
  }
  return lead + copyValue(bytesOf(def, value), out, at + lead, limit - lead, target.name);
}

function tooLong(name: string, room: number): never {
  return encodeError(`${name}: value longer than ${room} octets`);
}

function copyValue(bytes: Buffer, out: Buffer, at: number, room: number, name: string): number {
  if (bytes.length > room) tooLong(name, room);
  return bytes.copy(out, at);
}

/** The octets to hide: typed values (integer, ipaddr with encrypt=2) are encoded first. */
function plaintextOf(def: AttributeDef, value: AttributeValue): Buffer {
  const size = fixedSize(def);
  if (size === undefined || Buffer.isBuffer(value)) return bytesOf(def, value);
  const out = Buffer.alloc(size);
  writeTyped(def, value, out, 0);
  return out;
}

/** User-Password / Tunnel-Password style values (`encrypt=1` / `encrypt=2`). */
function writeHidden(
  state: EncodeState,
  def: AttributeDef,
  value: AttributeValue,
  tag: number | undefined,
  at: number,
  room: number,
): number {
  const plain = plaintextOf(def, value);
  const response = isResponseCode(state.code);
  if (def.encrypt === 1) {
    const auth = state.code === 1 ? state.ownAuth : response ? state.requestAuth : undefined;
    if (!auth) encodeError(`${def.name} cannot be hidden in ${packetCodeName(state.code)}`);
    const hidden = encryptUserPassword(plain, state.secret!.key, auth);
    return copyValue(hidden, state.buf, at, room, def.name);
  }
  if (def.encrypt !== 2) encodeError(`${def.name}: encrypt=${def.encrypt} is not supported`);
  // Salted with the request's authenticator in responses; in requests FreeRADIUS uses zeros
  // (its decoder has no other vector there).
  const auth = response ? state.requestAuth! : ZERO16;
  let salt: number;
  do {
    const two = Buffer.allocUnsafe(2);
    randomInto(two, 0, 2);
    salt = two.readUInt16BE(0) | 0x8000;
  } while (state.salts?.has(salt));
  state.salts ??= new Set();
  state.salts.add(salt);
  const hidden = encryptTunnelPassword(plain, state.secret!.key, auth, Buffer.of(salt >> 8, salt & 0xff));
  let lead = 0;
  if (def.hasTag) {
    state.buf[at] = tag ?? 0;
    lead = 1;
  }
  return lead + copyValue(hidden, state.buf, at + lead, room - lead, def.name);
}

/** Header octets before the value: 2, or the Vendor-Specific and vendor headers. */
function headerSize(t: Target): number {
  return t.vendorId === undefined ? 2 : 6 + t.typeSize + t.lengthSize + (t.continuation ? 1 : 0);
}

function writeHeader(state: EncodeState, t: Target, at: number, valueLength: number): void {
  const buf = state.buf;
  const total = headerSize(t) + valueLength;
  if (total > 255) tooLong(t.name, 255 - headerSize(t));
  if (t.vendorId === undefined) {
    buf[at] = t.code;
    buf[at + 1] = total;
    return;
  }
  buf[at] = VENDOR_SPECIFIC;
  buf[at + 1] = total;
  buf.writeUInt32BE(t.vendorId, at + 2);
  let p = at + 6;
  buf.writeUIntBE(t.code, p, t.typeSize);
  p += t.typeSize;
  const inner = total - 6;
  if (t.lengthSize === 2) buf.writeUInt16BE(inner, p);
  else if (t.lengthSize === 1) buf[p] = inner;
  if (t.continuation) buf[p + t.lengthSize] = 0;
}

function ensureRoom(state: EncodeState): void {
  if (state.off > MAX_PACKET) encodeError("packet would be longer than 4096 octets");
}

function writeAttribute(state: EncodeState, input: AttributeInput): void {
  let name: string;
  let value: AttributeValue;
  let tag: number | undefined;
  if ("name" in input) ({ name, value, tag } = input);
  else [name, value] = input;
  const t = resolveTarget(name);
  // RFC 9765 sections 5.2 and 5.3: MUST NOT be sent over RADIUS/1.1.
  if (state.radius11 && t.vendorId === undefined && discardedIn11(t.code)) return;
  if (t.vendorId === undefined && t.code === MESSAGE_AUTHENTICATOR) {
    // Computed once the packet is complete; a second one would be invalid.
    if (state.maAt < 0) writeMessageAuthenticatorSlot(state);
    return;
  }
  if (t.vendorId === undefined && t.code === EAP_MESSAGE) state.eap = true;
  const head = headerSize(t);
  if (t.def?.concat) {
    writeConcat(state, t, value, head);
    return;
  }
  const len = writeValue(state, t, value, tag, state.off + head, 255 - head);
  // FreeRADIUS skips empty values (except CUI) rather than sending zero-length attributes.
  if (len === 0 && !(t.vendorId === undefined && t.code === CUI)) return;
  writeHeader(state, t, state.off, len);
  state.off += head + len;
  ensureRoom(state);
}

/** `concat` attributes (EAP-Message) longer than one attribute are split over several. */
function writeConcat(state: EncodeState, t: Target, value: AttributeValue, head: number): void {
  const bytes = bytesOf(t.def, value);
  const chunk = 255 - head;
  for (let i = 0; i < bytes.length; i += chunk) {
    const part = bytes.subarray(i, i + chunk);
    if (state.off + head + part.length > MAX_PACKET) encodeError("packet would be longer than 4096 octets");
    part.copy(state.buf, state.off + head);
    writeHeader(state, t, state.off, part.length);
    state.off += head + part.length;
  }
}

function writeMessageAuthenticatorSlot(state: EncodeState): void {
  state.maAt = state.off;
  state.buf[state.off] = MESSAGE_AUTHENTICATOR;
  state.buf[state.off + 1] = 18;
  ZERO16.copy(state.buf, state.off + 2);
  state.off += 18;
  ensureRoom(state);
}

/**
 * Encodes a packet and signs it: random Request Authenticator for Access-Request/Status-Server
 * (unless given), MD5 authenticator for Accounting/CoA/Disconnect requests, Response
 * Authenticator for responses (options.requestAuthenticator required), Message-Authenticator
 * when asked for (first) or given as an attribute (in place). With options.radius11, the
 * RFC 9765 header and nothing signed or hidden (see EncodeOptions.radius11; the secret may be "").
 * Throws RadiusEncodeError for attributes that cannot be sent, TypeError for a bad code,
 * identifier, authenticator or token.
 */
export function encodePacket(
  packet: PacketInput,
  secret: string | Buffer,
  options: EncodeOptions = {},
): Buffer {
  const code = packetCode(packet.code);
  if (code === undefined) throw new TypeError(`unknown packet code ${packet.code}`);
  const id = packet.identifier;
  if (!Number.isInteger(id) || id < 0 || id > 255) throw new TypeError(`bad identifier ${id}`);
  const buf = scratch;
  buf[0] = code;
  buf[1] = id;
  const state = options.radius11
    ? startRadius11(code, checkToken(options.radius11.token))
    : startSigned(packet, code, secret, options);
  for (const attribute of packet.attributes ?? []) writeAttribute(state, attribute);
  if (state.eap && state.maAt < 0 && !state.radius11) writeMessageAuthenticatorSlot(state);
  const length = state.off;
  buf.writeUInt16BE(length, 2);
  if (!state.radius11) sign(state, length, options.requestCode);
  const out = Buffer.allocUnsafe(length);
  buf.copy(out, 0, 0, length);
  return out;
}

/** RFC 9765 section 4.1: Token and 12 zero octets; no secret, no Message-Authenticator. */
function startRadius11(code: number, token: Buffer): EncodeState {
  writeHeader11(scratch, token);
  const auth = scratch.subarray(4, HEADER);
  return {
    buf: scratch,
    off: HEADER,
    code,
    secret: undefined,
    ownAuth: auth,
    requestAuth: undefined,
    maAt: -1,
    eap: false,
    radius11: true,
  };
}

/** RADIUS/UDP and RadSec 1.0: the authenticator field to sign over, the Message-Authenticator slot. */
function startSigned(packet: PacketInput, code: number, secret: string | Buffer, options: EncodeOptions) {
  const key = secretKey(secret);
  const response = isResponseCode(code);
  const requestAuth = response
    ? checkAuthenticator(options.requestAuthenticator, "requestAuthenticator")
    : undefined;
  const buf = scratch;
  if (isSignedRequest(code) || response) ZERO16.copy(buf, 4);
  else if (packet.authenticator) checkAuthenticator(packet.authenticator, "authenticator").copy(buf, 4);
  else randomInto(buf, 4, 16);
  const state: EncodeState = {
    buf,
    off: HEADER,
    code,
    secret: key,
    ownAuth: buf.subarray(4, HEADER),
    requestAuth,
    maAt: -1,
    eap: false,
    radius11: false,
  };
  if (options.messageAuthenticator || code === PacketCode.StatusServer) writeMessageAuthenticatorSlot(state);
  return state;
}

/** Message-Authenticator (RFC 3579 section 3.2), then the Request/Response Authenticator. */
function sign(state: EncodeState, length: number, requestCode: number | undefined): void {
  const { buf, code, requestAuth } = state;
  const key = state.secret!;
  const response = isResponseCode(code);
  if (state.maAt >= 0) {
    let auth: Buffer = buf.subarray(4, HEADER);
    if (response) auth = code === 5 && requestCode !== PacketCode.StatusServer ? ZERO16 : requestAuth!;
    hmacOver(buf, length, state.maAt, auth, key, buf, state.maAt + 2);
  }
  if (response) digestWith(buf, length, requestAuth!, key.key, buf, 4);
  else if (isSignedRequest(code)) digestWith(buf, length, ZERO16, key.key, buf, 4);
}

// Decoding: bytes -> attribute list, with rad_packet_ok()'s structural checks and data2vp()'s raw
// fallbacks (see the header comment of ../packet.ts).

import { type AttributeDef, type Dictionary, loadDictionary } from "../../core/aaa/dictionary.ts";
import {
  CODE_NAMES,
  isResponseCode,
  PacketCode,
  type RadiusAttribute,
  RadiusDecodeError,
  type RadiusPacket,
} from "./codes.ts";
import { decryptTunnelPassword, decryptUserPassword } from "./crypto.ts";
import { discardedIn11, tokenOf } from "./radius11.ts";
import {
  CUI,
  checkAuthenticator,
  EAP_MESSAGE,
  HEADER,
  MAX_PACKET,
  MESSAGE_AUTHENTICATOR,
  rawName,
  toSecret,
  VENDOR_SPECIFIC,
  ZERO16,
} from "./shared.ts";
import { hex, valueText } from "./text.ts";

/** FreeRADIUS's stock `max_attributes` (radiusd.conf). */
export const DEFAULT_MAX_ATTRIBUTES = 200;

export interface DecodeOptions {
  /** Shared secret: decrypts User-Password, Tunnel-Password and other `encrypt=` attributes. */
  secret?: string | Buffer;
  /** For a response: the Request Authenticator of the request (Tunnel-Password, MS-MPPE keys). */
  requestAuthenticator?: Buffer;
  /** Refuse packets with more attributes (FreeRADIUS's max_attributes); default 200. */
  maxAttributes?: number;
  /**
   * The packet came over a RADIUS/1.1 connection (RFC 9765, ALPN "radius/1.1"): no secret is used
   * (secret and requestAuthenticator are ignored); the result carries `token`; hidden attributes
   * are read as their plain data type (section 5.1: User-Password's raw octets are the password,
   * Tunnel-Password a tagged string, MS-MPPE keys the key octets); Message-Authenticator is dropped
   * (section 5.2), so EAP-Message and Status-Server need none. CHAP over RADIUS/1.1 has no Request
   * Authenticator to fall back on (section 5.1.2): the caller must take the challenge from
   * CHAP-Challenge only, and treat a CHAP-Password without one as a failed login.
   */
  radius11?: boolean;
}

interface DecodeState {
  dict: Dictionary;
  attributes: RadiusAttribute[];
  max: number;
  secret: Buffer | undefined;
  /** Authenticator User-Password style values were hidden with (undefined: cannot decrypt). */
  passwordAuth: Buffer | undefined;
  /** Authenticator Tunnel-Password style values were salted with. */
  tunnelAuth: Buffer | undefined;
  /** RFC 9765: nothing is hidden, `encrypt=` attributes carry their plain type. */
  radius11: boolean;
}

function fail(reason: string): never {
  throw new RadiusDecodeError(reason);
}

function push(state: DecodeState, attribute: RadiusAttribute): void {
  if (state.attributes.length >= state.max) fail(`more than ${state.max} attributes`);
  state.attributes.push(attribute);
}

function rawAttribute(code: number, vendorId: number | undefined, d: Buffer): RadiusAttribute {
  const attribute: RadiusAttribute = { name: rawName(code, vendorId), code, raw: d, value: hex(d) };
  if (vendorId !== undefined) attribute.vendorId = vendorId;
  return attribute;
}

/** One value (top-level or inside a VSA), following FreeRADIUS's data2vp(): raw when it fails. */
function decodeValue(
  state: DecodeState,
  def: AttributeDef | undefined,
  code: number,
  vendorId: number | undefined,
  data: Buffer,
): void {
  push(
    state,
    (def && typedAttribute(state, def, code, vendorId, data)) || rawAttribute(code, vendorId, data),
  );
}

function typedAttribute(
  state: DecodeState,
  def: AttributeDef,
  code: number,
  vendorId: number | undefined,
  data: Buffer,
): RadiusAttribute | undefined {
  let d = data;
  let tag: number | undefined;
  // RFC 9765 section 5.1: in RADIUS/1.1 hidden attributes are plain values of their type, and
  // Tunnel-Password is a tagged string like Tunnel-Client-Endpoint (section 5.1.3).
  const hidden = def.encrypt !== undefined && !state.radius11;
  // A tag is there when the first octet is < 0x20, and always before a Tunnel-Password salt.
  if (def.hasTag && d.length > 1 && (d[0]! < 0x20 || (hidden && def.encrypt === 2))) {
    tag = d[0]!;
    if (def.type === "string") d = d.subarray(1);
    else if (def.type === "integer" && d.length === 4) {
      d = Buffer.from(d);
      d[0] = 0;
    } else return undefined;
  }
  let encrypted = false;
  if (hidden) {
    const plain = state.secret ? decrypt(state, def.encrypt!, d) : undefined;
    if (plain === null) return undefined;
    if (plain) d = plain;
    else encrypted = true;
  }
  const value = encrypted ? hex(d) : valueText(def, d, tag !== undefined);
  if (value === undefined) return undefined;
  const attribute: RadiusAttribute = { name: def.name, code, raw: d, value };
  if (vendorId !== undefined) attribute.vendorId = vendorId;
  if (tag !== undefined) attribute.tag = tag;
  if (encrypted) attribute.encrypted = true;
  return attribute;
}

/** Plaintext; undefined when it cannot be decrypted here; null when it does not decrypt (raw). */
function decrypt(state: DecodeState, kind: number, d: Buffer): Buffer | undefined | null {
  const secret = state.secret!;
  if (kind === 1) {
    return state.passwordAuth ? decryptUserPassword(d, secret, state.passwordAuth) : undefined;
  }
  if (kind === 2) {
    if (!state.tunnelAuth) return undefined;
    return decryptTunnelPassword(d, secret, state.tunnelAuth) ?? null;
  }
  return undefined; // encrypt=3 (Ascend secret): kept hidden
}

/** FreeRADIUS's rad_tlv_ok() for the sub-attributes of a Vendor-Specific. */
function vsaTlvOk(d: Buffer, start: number, typeSize: number, lengthSize: number): boolean {
  for (let p = start; p < d.length; ) {
    if (p + typeSize + lengthSize > d.length) return false;
    if (typeSize === 4 && (d[p] !== 0 || (d[p + 1] === 0 && d[p + 2] === 0 && d[p + 3] === 0))) return false;
    if (typeSize === 2 && d[p] === 0 && d[p + 1] === 0) return false;
    if (lengthSize === 0) return true;
    if (lengthSize === 2 && d[p + typeSize] !== 0) return false;
    const len = d[p + typeSize + lengthSize - 1]!;
    if (len < typeSize + lengthSize || p + len > d.length) return false;
    p += len;
  }
  return true;
}

/** The contents of one Vendor-Specific (after type and length), as data2vp_vsas() reads them. */
function decodeVendorSpecific(state: DecodeState, d: Buffer): void {
  const vendorId = d.length >= 5 && d[0] === 0 ? d.readUInt32BE(0) : -1;
  const vendor = state.dict.vendorsById.get(vendorId);
  const codes = state.dict.byCode.get(vendorId);
  const typeSize = vendor?.typeSize ?? 1;
  const lengthSize = vendor?.lengthSize ?? 1;
  if (vendorId < 0 || (vendor?.continuation ? !wimaxOk(d, codes) : !vsaTlvOk(d, 4, typeSize, lengthSize))) {
    push(state, rawAttribute(VENDOR_SPECIFIC, undefined, d));
    return;
  }
  if (vendor?.continuation) {
    decodeValue(state, codes?.get(d[4]!), d[4]!, vendorId, d.subarray(7));
    return;
  }
  for (let p = 4; p < d.length; ) {
    const type = typeSize === 1 ? d[p]! : typeSize === 2 ? d.readUInt16BE(p) : d.readUInt32BE(p);
    const len = lengthSize === 0 ? d.length - p : d[p + typeSize + lengthSize - 1]!;
    const value = d.subarray(p + typeSize + lengthSize, p + len);
    // Vendors may send zero-length VSAs; FreeRADIUS makes no attribute of them.
    if (value.length > 0) decodeValue(state, vendor ? codes?.get(type) : undefined, type, vendorId, value);
    p += len;
  }
}

/** WiMAX: one known attribute with a continuation octet. Fragments over several VSAs stay raw. */
function wimaxOk(d: Buffer, codes: Map<number, AttributeDef> | undefined): boolean {
  if (d.length < 8 || !codes?.has(d[4]!)) return false;
  return d[5]! >= 3 && d[5]! + 4 === d.length && (d[6]! & 0x80) === 0;
}

/**
 * Structural checks of rad_packet_ok(); returns the packet length (octets past it are padding).
 * RADIUS/1.1 discards Message-Authenticator whatever it holds and requires it nowhere (RFC 9765
 * section 5.2), so its length and presence are not checked there.
 */
function checkStructure(buf: Buffer, max: number, radius11: boolean): number {
  if (buf.length < HEADER) fail(`packet too short (${buf.length} < 20 octets)`);
  if (buf.length > MAX_PACKET) fail(`packet too long (${buf.length} > 4096 octets)`);
  const code = buf[0]!;
  if (!CODE_NAMES.has(code)) fail(`unknown packet code ${code}`);
  const length = buf.readUInt16BE(2);
  if (length < HEADER) fail(`Length field ${length} < 20`);
  if (length > buf.length) fail(`packet truncated: Length field ${length}, received ${buf.length}`);
  let count = 0;
  let seenMa = false;
  let eap = false;
  let password = false;
  for (let p = HEADER; p < length; ) {
    if (length - p < 2) fail("attribute header overflows the packet");
    const type = buf[p]!;
    const len = buf[p + 1]!;
    if (type === 0) fail("invalid attribute 0");
    if (len < 2) fail(`attribute ${type} has length ${len} < 2`);
    if (p + len > length) fail(`attribute ${type} overflows the packet`);
    if (type === EAP_MESSAGE) eap = true;
    else if (type === 2 || type === 3 || type === 70) password = true;
    else if (type === MESSAGE_AUTHENTICATOR && !radius11) {
      if (len !== 18) fail(`Message-Authenticator has length ${len - 2}, not 16`);
      seenMa = true;
    }
    if (++count > max) fail(`more than ${max} attributes`);
    p += len;
  }
  if ((eap || code === PacketCode.StatusServer) && !seenMa && !radius11) {
    fail(`${eap ? "EAP-Message" : "Status-Server"} without Message-Authenticator`);
  }
  if (eap && password) fail("EAP-Message together with a password attribute");
  return length;
}

/**
 * Decodes a RADIUS packet. Throws RadiusDecodeError (and nothing else) for malformed input; a bad
 * option (empty secret, authenticator not 16 octets) is a TypeError.
 * Authenticators are not checked here: see verifyRequestAuthenticator, verifyMessageAuthenticator
 * and verifyResponse. With `radius11` (RFC 9765) there is nothing to check: TLS protects the packet.
 */
export function decodePacket(input: Uint8Array, options: DecodeOptions = {}): RadiusPacket {
  if (!(input instanceof Uint8Array)) fail("not a buffer");
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const max = options.maxAttributes ?? DEFAULT_MAX_ATTRIBUTES;
  const radius11 = options.radius11 === true;
  const length = checkStructure(buf, max, radius11);
  const code = buf[0]!;
  const authenticator = buf.subarray(4, HEADER);
  const state = radius11 ? plainState(max) : hiddenState(code, authenticator, max, options);
  const standard = state.dict.byCode.get(0);
  for (let p = HEADER; p < length; ) {
    const type = buf[p]!;
    const len = buf[p + 1]!;
    // RFC 9765 sections 5.2 and 5.3: silently discarded, the packet is still processed.
    if (radius11 && discardedIn11(type)) {
      p += len;
      continue;
    }
    const def = standard?.get(type);
    if (def?.concat) {
      p = decodeConcat(state, buf, p, length, def);
      continue;
    }
    const data = buf.subarray(p + 2, p + len);
    p += len;
    if (data.length === 0) {
      // FreeRADIUS drops empty attributes, except CUI (WiMAX sends it empty on purpose).
      if (type === CUI && def) push(state, { name: def.name, code: type, raw: data, value: "0x" });
      continue;
    }
    if (type === VENDOR_SPECIFIC) decodeVendorSpecific(state, data);
    else decodeValue(state, def, type, undefined, data);
  }
  const packet: RadiusPacket = {
    code,
    type: CODE_NAMES.get(code)!,
    identifier: buf[1]!,
    authenticator: Buffer.from(authenticator),
    attributes: state.attributes,
  };
  if (radius11) packet.token = tokenOf(buf);
  return packet;
}

/** RADIUS/UDP and RadSec 1.0: hidden values are revealed with the secret, when one is given. */
function hiddenState(code: number, authenticator: Buffer, max: number, options: DecodeOptions): DecodeState {
  const secret = options.secret === undefined ? undefined : toSecret(options.secret);
  const requestAuth = options.requestAuthenticator;
  if (requestAuth) checkAuthenticator(requestAuth, "requestAuthenticator");
  const response = isResponseCode(code);
  return {
    dict: loadDictionary(),
    attributes: [],
    max,
    secret,
    passwordAuth: response ? requestAuth : code === 1 ? authenticator : undefined,
    // FreeRADIUS salts Tunnel-Password in requests with a zero vector (it has no original).
    tunnelAuth: response ? requestAuth : ZERO16,
    radius11: false,
  };
}

/** RADIUS/1.1 (RFC 9765): no secret, nothing hidden. */
function plainState(max: number): DecodeState {
  return {
    dict: loadDictionary(),
    attributes: [],
    max,
    secret: undefined,
    passwordAuth: undefined,
    tunnelAuth: undefined,
    radius11: true,
  };
}

/** Joins consecutive attributes of one concat type (data2vp_concat); returns the next offset. */
function decodeConcat(state: DecodeState, buf: Buffer, start: number, end: number, def: AttributeDef) {
  const type = buf[start]!;
  let p = start;
  let total = 0;
  while (p < end && buf[p] === type) {
    total += buf[p + 1]! - 2;
    p += buf[p + 1]!;
  }
  const raw = Buffer.allocUnsafe(total);
  for (let q = start, at = 0; q < p; q += buf[q + 1]!) at += buf.copy(raw, at, q + 2, q + buf[q + 1]!);
  push(state, { name: def.name, code: type, raw, value: hex(raw) });
  return p;
}

/** The first attribute with this name (case-insensitive), or undefined. */
export function getAttribute(packet: RadiusPacket, name: string): RadiusAttribute | undefined {
  for (const a of packet.attributes) if (a.name === name) return a;
  const lower = name.toLowerCase();
  return packet.attributes.find((a) => a.name.toLowerCase() === lower);
}

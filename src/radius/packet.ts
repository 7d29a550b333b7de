// RADIUS packet codec (RFC 2865/2866/2868/2869/3579/5176) that reads and writes packets the way
// FreeRADIUS 3.2 does: same structural checks, same raw fallbacks, same text forms for values.
// A door: it translates bytes <-> attribute lists and checks authenticators; it decides nothing.
//
// Decisions (FreeRADIUS 3.2's src/lib/radius.c is the reference):
// - decodePacket throws RadiusDecodeError only for what rad_packet_ok() drops: bad sizes, unknown
//   code, attribute 0, attribute lengths < 2 or overrunning, Message-Authenticator not 18 octets,
//   Status-Server or EAP-Message without Message-Authenticator, EAP-Message with a password
//   attribute, more than maxAttributes (FreeRADIUS's stock max_attributes, 200).
// - Contents that do not parse never fail the packet: like data2vp(), a malformed Vendor-Specific
//   becomes the raw attribute "Attr-26", a value of the wrong size becomes "Attr-<n>" (or
//   "Attr-26.<vendor>.<n>") with octets. Zero-length attributes are dropped (except
//   Chargeable-User-Identity). Consecutive `concat` attributes (EAP-Message) are joined.
// - String text form: the text itself when it is valid UTF-8 without control characters (one
//   trailing NUL dropped, as FreeRADIUS never prints it); otherwise the escaped form radclient
//   prints between its quotes (\" \\ \r \n \t, \ooo for other bytes). `raw` always has the bytes.
// - TLV, extended (241-246) and Ascend-filter values are kept as 0x hex under their dictionary
//   name: the dictionary does not index their children.

import { isUtf8 } from "node:buffer";
import { createHash, randomFillSync, timingSafeEqual } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import {
  type AttributeDef,
  type Dictionary,
  loadDictionary,
  parseAttributeName,
  type VendorDef,
} from "../core/aaa/dictionary.ts";
import { integerValue } from "../core/aaa/values.ts";

// ---------------------------------------------------------------------------------------------
// Packet codes, types, errors

export const PacketCode = {
  AccessRequest: 1,
  AccessAccept: 2,
  AccessReject: 3,
  AccountingRequest: 4,
  AccountingResponse: 5,
  AccessChallenge: 11,
  StatusServer: 12,
  StatusClient: 13,
  DisconnectRequest: 40,
  DisconnectAck: 41,
  DisconnectNak: 42,
  CoaRequest: 43,
  CoaAck: 44,
  CoaNak: 45,
} as const;

const CODE_NAMES = new Map<number, string>([
  [1, "Access-Request"],
  [2, "Access-Accept"],
  [3, "Access-Reject"],
  [4, "Accounting-Request"],
  [5, "Accounting-Response"],
  [11, "Access-Challenge"],
  [12, "Status-Server"],
  [13, "Status-Client"],
  [40, "Disconnect-Request"],
  [41, "Disconnect-ACK"],
  [42, "Disconnect-NAK"],
  [43, "CoA-Request"],
  [44, "CoA-ACK"],
  [45, "CoA-NAK"],
]);
const CODES_BY_NAME = new Map([...CODE_NAMES].map(([code, name]) => [name.toLowerCase(), code]));

/** FreeRADIUS's name for a packet code ("Access-Request"), undefined when not a known code. */
export function packetCodeName(code: number): string | undefined {
  return CODE_NAMES.get(code);
}

/** A packet code from its number or FreeRADIUS name (case-insensitive); undefined when unknown. */
export function packetCode(codeOrName: number | string): number | undefined {
  if (typeof codeOrName === "number") return CODE_NAMES.has(codeOrName) ? codeOrName : undefined;
  return CODES_BY_NAME.get(codeOrName.toLowerCase());
}

/** Responses are signed with the Request Authenticator of the request they answer. */
export function isResponseCode(code: number): boolean {
  return code === 2 || code === 3 || code === 5 || code === 11 || (code >= 41 && code !== 43 && code <= 45);
}

/** Accounting, CoA and Disconnect requests carry MD5(packet with zero authenticator + secret). */
function isSignedRequest(code: number): boolean {
  return code === 4 || code === 40 || code === 43;
}

export interface RadiusAttribute {
  /** Dictionary name, or FreeRADIUS's raw name: Attr-<n>, Attr-26.<vendor>.<n>. */
  name: string;
  /** Attribute number; for a vendor attribute, the vendor's own number. */
  code: number;
  vendorId?: number;
  /** Tunnel tag (0-31) of has_tag attributes when one was on the wire. */
  tag?: number;
  /**
   * The value's bytes: tag removed (a tagged integer keeps 4 octets, tag octet zeroed), decrypted
   * when a secret was given, joined for concat attributes. May share memory with the packet.
   */
  raw: Buffer;
  /** FreeRADIUS's text form (see the header comment). */
  value: string;
  /** The value is still hidden (User-Password, Tunnel-Password...): no secret/authenticator given. */
  encrypted?: true;
}

export interface RadiusPacket {
  code: number;
  /** FreeRADIUS's name for the code, e.g. "Access-Request". */
  type: string;
  identifier: number;
  authenticator: Buffer;
  attributes: RadiusAttribute[];
}

/** A malformed packet: FreeRADIUS would drop it silently. `reason` is short and loggable. */
export class RadiusDecodeError extends Error {
  override readonly name = "RadiusDecodeError";
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** An attribute list that cannot be put on the wire (unknown name, bad value, too long...). */
export class RadiusEncodeError extends Error {
  override readonly name = "RadiusEncodeError";
}

const HEADER = 20;
const MAX_PACKET = 4096;
/** FreeRADIUS's stock `max_attributes` (radiusd.conf). */
export const DEFAULT_MAX_ATTRIBUTES = 200;
const ZERO16 = Buffer.alloc(16);
const EAP_MESSAGE = 79;
const MESSAGE_AUTHENTICATOR = 80;
const VENDOR_SPECIFIC = 26;
const CUI = 89;

/** A shared secret with its HMAC-MD5 pads (RFC 2104). */
interface SecretKey {
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

function secretKey(secret: string | Buffer): SecretKey {
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
function toSecret(secret: string | Buffer): Buffer {
  if (typeof secret === "string") return secretKey(secret).key;
  if (secret.length === 0) throw new TypeError("RADIUS shared secret must not be empty");
  return secret;
}

function checkAuthenticator(auth: Buffer | undefined, what: string): Buffer {
  if (auth?.length !== 16) throw new TypeError(`${what} must be 16 octets`);
  return auth;
}

// ---------------------------------------------------------------------------------------------
// Text forms of values (decoding)

const HEX_DIGITS = "0123456789abcdef";

function hex(b: Buffer): string {
  return `0x${b.toString("hex")}`;
}

/** Length of the UTF-8 character at i as FreeRADIUS's fr_utf8_char sees it; 0 = escape it. */
function utf8CharLength(d: Buffer, i: number, end: number): number {
  const c = d[i]!;
  if (c < 0x20) return 0;
  if (c <= 0x7e) return 1;
  if (c <= 0xc1) return 0;
  if (c <= 0xdf) return continues(d, i, end, 1, 0x80) ? 2 : 0;
  if (c <= 0xef) {
    const second = continues(d, i, end, 1, c === 0xe0 ? 0xa0 : 0x80, c === 0xed ? 0x9f : 0xbf);
    return second && continues(d, i, end, 2, 0x80) ? 3 : 0;
  }
  if (c <= 0xf4) {
    const second = continues(d, i, end, 1, c === 0xf0 ? 0x90 : 0x80, c === 0xf4 ? 0x8f : 0xbf);
    return second && continues(d, i, end, 2, 0x80) && continues(d, i, end, 3, 0x80) ? 4 : 0;
  }
  return 0;
}

/** Whether octet i + k exists and lies in lo..hi (a UTF-8 continuation octet by default). */
function continues(d: Buffer, i: number, end: number, k: number, lo: number, hi = 0xbf): boolean {
  return i + k < end && d[i + k]! >= lo && d[i + k]! <= hi;
}

/** FreeRADIUS's fr_prints() with a double quote, without the surrounding quotes. */
function escapeString(d: Buffer, end: number): string {
  let out = "";
  for (let i = 0; i < end; ) {
    const c = d[i]!;
    let esc: string | undefined;
    if (c === 0x22) esc = '\\"';
    else if (c === 0x5c) esc = "\\\\";
    else if (c === 0x0d) esc = "\\r";
    else if (c === 0x0a) esc = "\\n";
    else if (c === 0x09) esc = "\\t";
    if (esc) {
      out += esc;
      i++;
      continue;
    }
    const n = utf8CharLength(d, i, end);
    if (n === 0) {
      out += `\\${c.toString(8).padStart(3, "0")}`;
      i++;
    } else {
      out += n === 1 ? String.fromCharCode(c) : d.toString("utf8", i, i + n);
      i += n;
    }
  }
  return out;
}

function stringText(d: Buffer): string {
  let end = d.length;
  if (end > 0 && d[end - 1] === 0) end--;
  let ascii = true;
  for (let i = 0; i < end; i++) {
    const c = d[i]!;
    if (c < 0x20 || c === 0x7f) return escapeString(d, end);
    if (c > 0x7f) ascii = false;
  }
  if (ascii) return d.toString("latin1", 0, end);
  const body = end === d.length ? d : d.subarray(0, end);
  return isUtf8(body) ? body.toString("utf8") : escapeString(d, end);
}

function ipv4Text(d: Buffer, at: number): string {
  return `${d[at]}.${d[at + 1]}.${d[at + 2]}.${d[at + 3]}`;
}

/** glibc's inet_ntop(AF_INET6), which FreeRADIUS prints with: RFC 5952 plus ::ffff:a.b.c.d. */
function ipv6Text(d: Buffer, at: number): string {
  const words: number[] = [];
  for (let i = 0; i < 8; i++) words.push((d[at + 2 * i]! << 8) | d[at + 2 * i + 1]!);
  let bestBase = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      bestBase = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) bestBase = -1;
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (bestBase >= 0 && i >= bestBase && i < bestBase + bestLen) {
      if (i === bestBase) out += ":";
      continue;
    }
    if (i !== 0) out += ":";
    if (i === 6 && bestBase === 0 && (bestLen === 6 || (bestLen === 5 && words[5] === 0xffff))) {
      out += ipv4Text(d, at + 12);
      break;
    }
    out += words[i]!.toString(16);
  }
  if (bestBase >= 0 && bestBase + bestLen === 8) out += ":";
  return out;
}

// Number -> VALUE name per attribute. When several names share a number the last defined wins,
// as in FreeRADIUS's values_byvalue table.
const valueNames = new WeakMap<AttributeDef, Map<number, string>>();

function valueName(def: AttributeDef, n: number): string | undefined {
  if (def.values.size === 0) return undefined;
  let names = valueNames.get(def);
  if (!names) {
    names = new Map();
    for (const [name, value] of def.values) names.set(value, name);
    valueNames.set(def, names);
  }
  return names.get(n);
}

/** The text form of a value, or undefined when its size is wrong for the type (-> raw). */
function valueText(def: AttributeDef, d: Buffer, tagged: boolean): string | undefined {
  switch (def.type) {
    case "string":
      return stringText(d);
    case "integer": {
      if (d.length !== 4) return undefined;
      // A tag lives in the top octet of a tagged integer.
      const n = tagged ? d.readUInt32BE(0) & 0xffffff : d.readUInt32BE(0);
      return valueName(def, n) ?? String(n);
    }
    case "byte":
      return d.length === 1 ? (valueName(def, d[0]!) ?? String(d[0])) : undefined;
    case "short": {
      if (d.length !== 2) return undefined;
      const n = d.readUInt16BE(0);
      return valueName(def, n) ?? String(n);
    }
    case "date":
      return d.length === 4 ? String(d.readUInt32BE(0)) : undefined;
    case "signed":
      return d.length === 4 ? String(d.readInt32BE(0)) : undefined;
    case "integer64":
      return d.length === 8 ? d.readBigUInt64BE(0).toString() : undefined;
    case "ipaddr":
      return d.length === 4 ? ipv4Text(d, 0) : undefined;
    case "ipv4prefix":
      if (d.length !== 6 || (d[1]! & 0x3f) > 32) return undefined;
      return `${ipv4Text(d, 2)}/${d[1]! & 0x3f}`;
    case "ipv6addr":
      return d.length === 16 ? ipv6Text(d, 0) : undefined;
    case "ipv6prefix": {
      if (d.length < 2 || d.length > 18 || d[1]! > 128) return undefined;
      const addr = Buffer.alloc(16);
      d.copy(addr, 0, 2);
      return `${ipv6Text(addr, 0)}/${d[1]}`;
    }
    case "ifid": {
      if (d.length !== 8) return undefined;
      const w = [0, 2, 4, 6].map((i) => d.readUInt16BE(i).toString(16));
      return w.join(":");
    }
    case "ether": {
      if (d.length !== 6) return undefined;
      let out = "";
      for (let i = 0; i < 6; i++) {
        if (i > 0) out += ":";
        out += HEX_DIGITS[d[i]! >> 4]! + HEX_DIGITS[d[i]! & 15]!;
      }
      return out;
    }
    default:
      // octets, abinary, tlv and types without a text form here: hex.
      return hex(d);
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding

export interface DecodeOptions {
  /** Shared secret: decrypts User-Password, Tunnel-Password and other `encrypt=` attributes. */
  secret?: string | Buffer;
  /** For a response: the Request Authenticator of the request (Tunnel-Password, MS-MPPE keys). */
  requestAuthenticator?: Buffer;
  /** Refuse packets with more attributes (FreeRADIUS's max_attributes); default 200. */
  maxAttributes?: number;
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
}

function fail(reason: string): never {
  throw new RadiusDecodeError(reason);
}

function push(state: DecodeState, attribute: RadiusAttribute): void {
  if (state.attributes.length >= state.max) fail(`more than ${state.max} attributes`);
  state.attributes.push(attribute);
}

function rawName(code: number, vendorId: number | undefined): string {
  return vendorId === undefined ? `Attr-${code}` : `Attr-26.${vendorId}.${code}`;
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
  // A tag is there when the first octet is < 0x20, and always before a Tunnel-Password salt.
  if (def.hasTag && d.length > 1 && (d[0]! < 0x20 || def.encrypt === 2)) {
    tag = d[0]!;
    if (def.type === "string") d = d.subarray(1);
    else if (def.type === "integer" && d.length === 4) {
      d = Buffer.from(d);
      d[0] = 0;
    } else return undefined;
  }
  let encrypted = false;
  if (def.encrypt) {
    const plain = state.secret ? decrypt(state, def.encrypt, d) : undefined;
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

/** Structural checks of rad_packet_ok(); returns the packet length (octets past it are padding). */
function checkStructure(buf: Buffer, max: number): number {
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
    else if (type === MESSAGE_AUTHENTICATOR) {
      if (len !== 18) fail(`Message-Authenticator has length ${len - 2}, not 16`);
      seenMa = true;
    }
    if (++count > max) fail(`more than ${max} attributes`);
    p += len;
  }
  if ((eap || code === PacketCode.StatusServer) && !seenMa) {
    fail(`${eap ? "EAP-Message" : "Status-Server"} without Message-Authenticator`);
  }
  if (eap && password) fail("EAP-Message together with a password attribute");
  return length;
}

/**
 * Decodes a RADIUS packet. Throws RadiusDecodeError (and nothing else) for malformed input; a bad
 * option (empty secret, authenticator not 16 octets) is a TypeError.
 * Authenticators are not checked here: see verifyRequestAuthenticator, verifyMessageAuthenticator
 * and verifyResponse.
 */
export function decodePacket(input: Uint8Array, options: DecodeOptions = {}): RadiusPacket {
  if (!(input instanceof Uint8Array)) fail("not a buffer");
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const max = options.maxAttributes ?? DEFAULT_MAX_ATTRIBUTES;
  const length = checkStructure(buf, max);
  const code = buf[0]!;
  const authenticator = buf.subarray(4, HEADER);
  const secret = options.secret === undefined ? undefined : toSecret(options.secret);
  const requestAuth = options.requestAuthenticator;
  if (requestAuth) checkAuthenticator(requestAuth, "requestAuthenticator");
  const response = isResponseCode(code);
  const state: DecodeState = {
    dict: loadDictionary(),
    attributes: [],
    max,
    secret,
    passwordAuth: response ? requestAuth : code === 1 ? authenticator : undefined,
    // FreeRADIUS salts Tunnel-Password in requests with a zero vector (it has no original).
    tunnelAuth: response ? requestAuth : ZERO16,
  };
  const standard = state.dict.byCode.get(0);
  for (let p = HEADER; p < length; ) {
    const type = buf[p]!;
    const len = buf[p + 1]!;
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
  return {
    code,
    type: CODE_NAMES.get(code)!,
    identifier: buf[1]!,
    authenticator: Buffer.from(authenticator),
    attributes: state.attributes,
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

// ---------------------------------------------------------------------------------------------
// Hidden values, CHAP, authenticators

function md5(...parts: Buffer[]): Buffer {
  const h = createHash("md5");
  for (const part of parts) h.update(part);
  return h.digest();
}

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

/**
 * HMAC-MD5(secret, packet) with the Message-Authenticator value as 16 zeros (RFC 3579 §3.2) and
 * the authenticator field as `auth`.
 */
function hmacOver(buf: Buffer, length: number, maAt: number, auth: Buffer, sk: SecretKey): Buffer {
  // HMAC from two MD5s over cached pads: createHmac costs several times more per packet.
  const h = createHash("md5");
  h.update(sk.ipad);
  h.update(buf.subarray(0, 4));
  h.update(auth);
  if (maAt < 0) h.update(buf.subarray(HEADER, length));
  else {
    h.update(buf.subarray(HEADER, maAt + 2));
    h.update(ZERO16);
    h.update(buf.subarray(maAt + 18, length));
  }
  return createHash("md5").update(sk.opad).update(h.digest()).digest();
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
    if (timingSafeEqual(hmacOver(buf, length, at, auth, sk), got)) ok = true;
  }
  return ok;
}

/** MD5(Code + Identifier + Length + `auth` + Attributes + secret). */
function digestWith(buf: Buffer, length: number, auth: Buffer, secret: Buffer): Buffer {
  return md5(buf.subarray(0, 4), auth, buf.subarray(HEADER, length), secret);
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
  return timingSafeEqual(digestWith(buf, length, ZERO16, toSecret(secret)), buf.subarray(4, HEADER));
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
  if (!timingSafeEqual(digestWith(buf, length, req, sk.key), buf.subarray(4, HEADER))) return false;
  return !hasMessageAuthenticator(buf) || verifyMessageAuthenticator(buf, secret, req);
}

// ---------------------------------------------------------------------------------------------
// Encoding

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
}

/** Where an attribute goes on the wire. */
interface Target {
  name: string;
  code: number;
  /** undefined for raw attributes (Attr-<n>): octets. */
  def?: AttributeDef;
  vendorId?: number;
  typeSize: number;
  lengthSize: number;
  continuation: boolean;
  tag?: number;
}

const targets = new Map<string, Target>();
const MAX_CACHED_TARGETS = 10_000;

function encodeError(message: string): never {
  throw new RadiusEncodeError(message);
}

function vendorTarget(target: Target, vendor: VendorDef | undefined): Target {
  if (vendor) {
    target.typeSize = vendor.typeSize;
    target.lengthSize = vendor.lengthSize;
    target.continuation = vendor.continuation;
  }
  return target;
}

function rawTarget(name: string, dict: Dictionary): Target | undefined {
  let m = /^Attr-(\d{1,3})$/i.exec(name);
  if (m) {
    const code = Number(m[1]);
    if (code < 1 || code > 255) return undefined;
    return { name: `Attr-${code}`, code, typeSize: 1, lengthSize: 1, continuation: false };
  }
  m = /^(?:Attr-26\.(\d{1,10})\.(\d{1,10})|Vendor-(\d{1,10})-Attr-(\d{1,10}))$/i.exec(name);
  if (!m) return undefined;
  const vendorId = Number(m[1] ?? m[3]);
  const code = Number(m[2] ?? m[4]);
  const vendor = dict.vendorsById.get(vendorId);
  if (vendorId < 1 || vendorId > 0xffffff || code > 2 ** (8 * (vendor?.typeSize ?? 1)) - 1) return undefined;
  const target: Target = {
    name: rawName(code, vendorId),
    code,
    vendorId,
    typeSize: 1,
    lengthSize: 1,
    continuation: false,
  };
  return vendorTarget(target, vendor);
}

function resolveTarget(name: string): Target {
  const cached = targets.get(name);
  if (cached) return cached;
  const dict = loadDictionary();
  let target: Target | undefined;
  const parsed = parseAttributeName(name);
  if (parsed) {
    const { def, tag } = parsed;
    if (def.internal) encodeError(`${def.name} is a server-side attribute and never goes in a packet`);
    if (def.type === "tlv" || (def.vendorId === undefined && def.code >= 241 && def.code <= 246)) {
      encodeError(`${def.name}: TLV and extended attributes cannot be encoded`);
    }
    target = { name: def.name, code: def.code, def, typeSize: 1, lengthSize: 1, continuation: false };
    if (tag !== undefined) target.tag = tag;
    if (def.vendorId !== undefined) {
      target.vendorId = def.vendorId;
      vendorTarget(target, dict.vendorsById.get(def.vendorId));
    }
  } else target = rawTarget(name, dict);
  if (!target) encodeError(`unknown attribute ${name}`);
  if (targets.size >= MAX_CACHED_TARGETS) targets.clear();
  targets.set(name, target);
  return target;
}

interface EncodeState {
  buf: Buffer;
  off: number;
  code: number;
  secret: SecretKey;
  /** Request Authenticator field of this packet: User-Password is hidden with it. */
  ownAuth: Buffer;
  requestAuth: Buffer | undefined;
  maAt: number;
  eap: boolean;
  /** Tunnel-Password salts used so far (RFC 2868: unique within a packet). */
  salts?: Set<number>;
}

// Packets are built in one scratch buffer and copied out at their exact size. The slack lets one
// attribute (at most 255 octets) be written before the size check.
const scratch = Buffer.allocUnsafe(MAX_PACKET + 512);

// Random octets come from a pool refilled in bulk: one getrandom() per ~250 Access-Requests.
const randomPool = Buffer.allocUnsafe(4096);
let randomAt = randomPool.length;

function randomInto(target: Buffer, at: number, n: number): void {
  if (randomAt + n > randomPool.length) {
    randomFillSync(randomPool);
    randomAt = 0;
  }
  randomPool.copy(target, at, randomAt, randomAt + n);
  randomAt += n;
}

const HEX_VALUE = /^0x((?:[0-9a-f]{2})*)$/i;

function octetsFromText(text: string): Buffer {
  if (/^0x/i.test(text)) {
    const m = HEX_VALUE.exec(text);
    if (!m) encodeError(`bad hex value ${text}`);
    return Buffer.from(m[1]!, "hex");
  }
  return Buffer.from(text, "utf8"); // FreeRADIUS takes other text as the octets themselves
}

function parseIPv4(text: string, at: number, out: Buffer): boolean {
  if (!isIPv4(text)) return false;
  const parts = text.split(".");
  for (let i = 0; i < 4; i++) out[at + i] = Number(parts[i]);
  return true;
}

function parseIPv6(text: string, at: number, out: Buffer): boolean {
  if (!isIPv6(text) || text.includes("%")) return false;
  let s = text;
  const lastColon = s.lastIndexOf(":");
  if (s.includes(".", lastColon)) {
    const v4 = s
      .slice(lastColon + 1)
      .split(".")
      .map(Number);
    const w = (a: number, b: number) => ((v4[a]! << 8) | v4[b]!).toString(16);
    s = `${s.slice(0, lastColon + 1)}${w(0, 1)}:${w(2, 3)}`;
  }
  const [head = "", tail] = s.split("::");
  const headWords = head ? head.split(":") : [];
  const tailWords = tail ? tail.split(":") : [];
  const words = [...headWords, ...Array(8 - headWords.length - tailWords.length).fill("0"), ...tailWords];
  for (let i = 0; i < 8; i++) out.writeUInt16BE(Number.parseInt(words[i]!, 16), at + 2 * i);
  return true;
}

/** Clears the bits past `bits` in `len` octets at `at` (FreeRADIUS masks prefixes it parses). */
function maskPrefix(out: Buffer, at: number, len: number, bits: number): void {
  for (let i = 0; i < len; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    out[at + i]! &= (0xff << (8 - keep)) & 0xff;
  }
}

function prefixParts(text: string, max: number): [address: string, bits: number] | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return [text, max];
  const bits = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  return [text.slice(0, slash), Number(bits)];
}

const INTEGER_SIZES: Partial<Record<string, number>> = {
  byte: 1,
  short: 2,
  integer: 4,
  date: 4,
  signed: 4,
  integer64: 8,
};

function integerFrom(def: AttributeDef, value: string | number | bigint): bigint {
  if (def.type === "date") {
    const text = String(value);
    if (/^\d{1,10}$/.test(text) && Number(text) <= 0xffffffff) return BigInt(text);
    return encodeError(`${def.name}: a date must be Unix seconds, not ${text}`);
  }
  const n = integerValue(def, String(value));
  if (n === undefined) encodeError(`${def.name}: ${String(value)} is not a valid ${def.type}`);
  return n;
}

/** Writes a fixed-format value at `at`; returns its length. */
function writeTyped(def: AttributeDef, value: string | number | bigint, out: Buffer, at: number): number {
  const size = INTEGER_SIZES[def.type];
  if (size !== undefined) {
    // Numbers (the common case for replies built in code) skip the text parser.
    if (typeof value === "number" && size <= 4 && Number.isInteger(value)) {
      const signed = def.type === "signed";
      const min = signed ? -0x80000000 : 0;
      const max = signed ? 0x7fffffff : 2 ** (8 * size) - 1;
      if (value < min || value > max) encodeError(`${def.name}: ${value} is out of range for ${def.type}`);
      if (signed) out.writeInt32BE(value, at);
      else out.writeUIntBE(value, at, size);
      return size;
    }
    const n = integerFrom(def, value);
    if (size === 8) out.writeBigUInt64BE(n, at);
    else if (def.type === "signed") out.writeInt32BE(Number(n), at);
    else out.writeUIntBE(Number(n), at, size);
    return size;
  }
  const text = String(value);
  const length = writeAddressLike(def, text, out, at);
  if (length === 0) encodeError(`${def.name}: ${text} is not a valid ${def.type}`);
  return length;
}

/** Address-like types from text; 0 when the text is not valid for the type. */
function writeAddressLike(def: AttributeDef, text: string, out: Buffer, at: number): number {
  switch (def.type) {
    case "ipaddr":
      return parseIPv4(text, at, out) ? 4 : 0;
    case "ipv6addr":
      return parseIPv6(text, at, out) ? 16 : 0;
    case "ipv4prefix": {
      const parts = prefixParts(text, 32);
      if (!parts || !parseIPv4(parts[0], at + 2, out)) return 0;
      out[at] = 0;
      out[at + 1] = parts[1];
      maskPrefix(out, at + 2, 4, parts[1]);
      return 6;
    }
    case "ipv6prefix": {
      const parts = prefixParts(text, 128);
      if (!parts || !parseIPv6(parts[0], at + 2, out)) return 0;
      out[at] = 0;
      out[at + 1] = parts[1];
      maskPrefix(out, at + 2, 16, parts[1]);
      return 18; // FreeRADIUS 3 sends the full 16 address octets
    }
    case "ifid": {
      if (!/^[0-9a-f]{1,4}(:[0-9a-f]{1,4}){3}$/i.test(text)) return 0;
      const words = text.split(":");
      for (let i = 0; i < 4; i++) out.writeUInt16BE(Number.parseInt(words[i]!, 16), at + 2 * i);
      return 8;
    }
    case "ether": {
      if (!/^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/i.test(text)) return 0;
      return Buffer.from(text.replace(/[:-]/g, ""), "hex").copy(out, at);
    }
    default:
      return 0;
  }
}

const FIXED_SIZES: Partial<Record<string, number>> = {
  ...INTEGER_SIZES,
  ipaddr: 4,
  ipv6addr: 16,
  ipv4prefix: 6,
  ifid: 8,
  ether: 6,
};

/** Fixed wire size of a type, or undefined for variable-length ones. */
function fixedSize(def: AttributeDef): number | undefined {
  return FIXED_SIZES[def.type];
}

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
  if (def.encrypt) return writeHidden(state, def, value, tag, at, room);
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
  // Strings: the tag (1-31) goes in front; FreeRADIUS sends no tag octet for 0 / none.
  let lead = 0;
  if (def.hasTag && tag !== undefined && tag > 0) {
    out[at] = tag;
    lead = 1;
  }
  if (def.type === "string" && typeof value === "string") {
    const len = Buffer.byteLength(value, "utf8");
    if (len + lead > room) tooLong(target.name, room - lead);
    return lead + out.write(value, at + lead, len, "utf8");
  }
  return lead + copyValue(bytesOf(def, value), out, at + lead, room - lead, target.name);
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
    const hidden = encryptUserPassword(plain, state.secret.key, auth);
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
  const hidden = encryptTunnelPassword(plain, state.secret.key, auth, Buffer.of(salt >> 8, salt & 0xff));
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
 * when asked for (first) or given as an attribute (in place). Throws RadiusEncodeError for
 * attributes that cannot be sent, TypeError for a bad code, identifier or authenticator.
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
  const key = secretKey(secret);
  const response = isResponseCode(code);
  const requestAuth = response
    ? checkAuthenticator(options.requestAuthenticator, "requestAuthenticator")
    : undefined;
  const buf = scratch;
  buf[0] = code;
  buf[1] = id;
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
  };
  if (options.messageAuthenticator || code === PacketCode.StatusServer) writeMessageAuthenticatorSlot(state);
  for (const attribute of packet.attributes ?? []) writeAttribute(state, attribute);
  if (state.eap && state.maAt < 0) writeMessageAuthenticatorSlot(state);
  const length = state.off;
  buf.writeUInt16BE(length, 2);
  if (state.maAt >= 0) {
    let auth: Buffer = buf.subarray(4, HEADER);
    if (response)
      auth = code === 5 && options.requestCode !== PacketCode.StatusServer ? ZERO16 : requestAuth!;
    hmacOver(buf, length, state.maAt, auth, key).copy(buf, state.maAt + 2);
  }
  if (response) digestWith(buf, length, requestAuth!, key.key).copy(buf, 4);
  else if (isSignedRequest(code)) digestWith(buf, length, ZERO16, key.key).copy(buf, 4);
  const out = Buffer.allocUnsafe(length);
  buf.copy(out, 0, 0, length);
  return out;
}

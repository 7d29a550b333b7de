// RADIUS packet codes and their FreeRADIUS names, the decoded packet and attribute types, and the
// errors the codec throws. "The header comment" below is the one in ../packet.ts.

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

export const CODE_NAMES = new Map<number, string>([
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
export function isSignedRequest(code: number): boolean {
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
  /** The 16 octets of the Authenticator field (in RADIUS/1.1, Token and Reserved octets). */
  authenticator: Buffer;
  attributes: RadiusAttribute[];
  /** RADIUS/1.1 (RFC 9765 section 4.1) only: the 4-octet Token that matches a reply to its request. */
  token?: Buffer;
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

export function encodeError(message: string): never {
  throw new RadiusEncodeError(message);
}

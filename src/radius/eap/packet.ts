// EAP packet codec (RFC 3748 section 4). Requests and Responses carry a Type octet (section 4.1);
// Success and Failure are four octets (section 4.2). Anything else is malformed.

export const EapCode = { Request: 1, Response: 2, Success: 3, Failure: 4 } as const;

/** EAP method types used here (RFC 3748 section 5, IANA "Method Types"). */
export const EapType = {
  Identity: 1,
  Notification: 2,
  Nak: 3,
  Tls: 13,
  Ttls: 21,
  Peap: 25,
  MsChapV2: 26,
  /** EAP-TLV / Extensions (MS-PEAP, [MS-PEAP] section 2.2.8). */
  Tlv: 33,
} as const;

export interface EapPacket {
  code: number;
  identifier: number;
  /** Requests and Responses only. */
  type?: number;
  /** What follows the Type octet. */
  data: Buffer;
}

export class EapFormatError extends Error {
  override readonly name = "EapFormatError";
}

/** Parses one EAP packet; its Length field must equal the octets given (RFC 3748 section 4.1). */
export function decodeEap(bytes: Buffer): EapPacket {
  if (bytes.length < 4) throw new EapFormatError("EAP packet shorter than its 4-octet header");
  const code = bytes[0]!;
  const identifier = bytes[1]!;
  const length = bytes.readUInt16BE(2);
  if (length !== bytes.length) {
    throw new EapFormatError(`EAP Length says ${length} octets, the EAP-Message holds ${bytes.length}`);
  }
  if (code === EapCode.Success || code === EapCode.Failure) {
    if (length !== 4) throw new EapFormatError("EAP Success/Failure longer than 4 octets");
    return { code, identifier, data: Buffer.alloc(0) };
  }
  if (code !== EapCode.Request && code !== EapCode.Response) throw new EapFormatError(`EAP code ${code}`);
  if (length < 5) throw new EapFormatError("EAP Request/Response without a Type");
  return { code, identifier, type: bytes[4]!, data: bytes.subarray(5) };
}

export function encodeEap(packet: EapPacket): Buffer {
  if (packet.type === undefined) {
    return Buffer.from([packet.code, packet.identifier, 0, 4]);
  }
  const out = Buffer.allocUnsafe(5 + packet.data.length);
  out[0] = packet.code;
  out[1] = packet.identifier;
  out.writeUInt16BE(out.length, 2);
  out[4] = packet.type;
  packet.data.copy(out, 5);
  return out;
}

export const eapSuccess = (identifier: number) =>
  encodeEap({ code: EapCode.Success, identifier, data: Buffer.alloc(0) });
export const eapFailure = (identifier: number) =>
  encodeEap({ code: EapCode.Failure, identifier, data: Buffer.alloc(0) });

// Diameter-style AVPs carried in the EAP-TTLS tunnel (RFC 5281 section 10.1): Code (4 octets),
// Flags (V = 0x80 a Vendor-ID follows, M = 0x40 mandatory), Length (3 octets, header included,
// padding excluded), [Vendor-ID], Data, padding to a multiple of 4 octets.

export interface Avp {
  code: number;
  vendorId?: number;
  mandatory: boolean;
  data: Buffer;
}

export const AvpCode = { UserName: 1, UserPassword: 2, ReplyMessage: 18, EapMessage: 79 } as const;

const VENDOR = 0x80;
const MANDATORY = 0x40;

export class AvpError extends Error {
  override readonly name = "AvpError";
}

export function parseAvps(bytes: Buffer): Avp[] {
  const avps: Avp[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 8) throw new AvpError("AVP header cut short");
    const code = bytes.readUInt32BE(at);
    const flags = bytes[at + 4]!;
    const length = bytes.readUIntBE(at + 5, 3);
    const head = flags & VENDOR ? 12 : 8;
    if (length < head || at + length > bytes.length)
      throw new AvpError(`AVP ${code} length ${length} is wrong`);
    const avp: Avp = {
      code,
      mandatory: (flags & MANDATORY) !== 0,
      data: bytes.subarray(at + head, at + length),
    };
    if (flags & VENDOR) avp.vendorId = bytes.readUInt32BE(at + 8);
    avps.push(avp);
    at += (length + 3) & ~3;
  }
  return avps;
}

export function encodeAvp(code: number, data: Buffer, mandatory = true): Buffer {
  const length = 8 + data.length;
  const out = Buffer.alloc((length + 3) & ~3);
  out.writeUInt32BE(code, 0);
  out[4] = mandatory ? MANDATORY : 0;
  out.writeUIntBE(length, 5, 3);
  data.copy(out, 8);
  return out;
}

/** The first AVP with this code and no vendor. */
export function findAvp(avps: readonly Avp[], code: number): Buffer | undefined {
  return avps.find((a) => a.code === code && a.vendorId === undefined)?.data;
}

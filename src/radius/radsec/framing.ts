// Cuts a RadSec byte stream into RADIUS packets. Over TLS the packets follow each other with no
// framing but their own Length field (RFC 6613 section 2.1, kept by draft-ietf-radext-radiusdtls-bis
// section 3), so a TLS record may hold half a packet or several. A Length below the 20-octet header
// or above 4096 (RFC 2865 section 3) cannot be resynchronised: the connection is closed
// (RFC 6613 section 2.6.4), which is the caller's job when push() throws.

/** RFC 2865 section 3: the smallest and largest RADIUS packet. */
export const MIN_PACKET = 20;
export const MAX_PACKET = 4096;

export class FramingError extends Error {}

export class PacketFramer {
  /** Bytes of a packet not yet complete (at most MAX_PACKET - 1 held). */
  private pending: Buffer | undefined;

  /** Whether part of a packet is waiting for the rest (the slow-sender timer watches this). */
  get partial(): boolean {
    return this.pending !== undefined;
  }

  /** The complete packets in `chunk` (with what was held before); the rest is kept. */
  push(chunk: Buffer): Buffer[] {
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    const packets: Buffer[] = [];
    while (data.length > 0) {
      if (data.length < 4) break;
      const length = data.readUInt16BE(2);
      if (length < MIN_PACKET || length > MAX_PACKET) {
        throw new FramingError(`packet Length ${length} is outside ${MIN_PACKET}-${MAX_PACKET}`);
      }
      if (data.length < length) break;
      // Copied: the answer may outlive this chunk, and a view would pin the whole TLS record.
      packets.push(Buffer.from(data.subarray(0, length)));
      data = data.subarray(length);
    }
    if (data.length > 0) this.pending = Buffer.from(data);
    return packets;
  }
}

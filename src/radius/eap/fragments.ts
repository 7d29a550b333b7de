// TLS data of EAP-TLS, PEAP and EAP-TTLS in fragments (RFC 5216 section 2.1.5, reused by RFC 5281
// section 9.2.2 and [MS-PEAP] section 2.2.2): a Flags octet (L = a 4-octet TLS Message Length
// follows, M = more fragments follow, S = start; PEAP and TTLS keep their version in the low
// three bits), then the data. Each fragment but the last is acknowledged by an empty packet.

export const Flags = { Length: 0x80, More: 0x40, Start: 0x20 } as const;

/** The largest reassembled TLS message accepted (issue 14: 64 KiB); beyond, the conversation ends. */
export const MAX_TLS_MESSAGE = 64 * 1024;

export class FragmentError extends Error {
  override readonly name = "FragmentError";
}

export interface TlsFragment {
  flags: number;
  /** The TLS Message Length when the L flag is set. */
  totalLength?: number;
  data: Buffer;
}

/** Splits an EAP-TLS style Type-Data into flags, length and data (RFC 5216 section 3.2). */
export function parseFragment(typeData: Buffer): TlsFragment {
  if (typeData.length < 1) throw new FragmentError("no Flags octet");
  const flags = typeData[0]!;
  if (flags & Flags.Length) {
    if (typeData.length < 5) throw new FragmentError("L flag without the 4-octet TLS Message Length");
    return { flags, totalLength: typeData.readUInt32BE(1), data: typeData.subarray(5) };
  }
  return { flags, data: typeData.subarray(1) };
}

/**
 * Joins the supplicant's fragments; throws FragmentError on anything inconsistent or too large.
 * A message of several fragments is copied into one buffer of its TLS Message Length as they
 * come: what is held is exactly that buffer (the EAP memory budgets charge it), never the
 * packets' own buffers or one object per fragment.
 */
export class Reassembler {
  private message: Buffer | undefined;
  private size = 0;

  /** Adds one fragment; returns the whole message once the last one arrived, else undefined. */
  add(fragment: TlsFragment): Buffer | undefined {
    const total = fragment.totalLength;
    if (total !== undefined && total > MAX_TLS_MESSAGE) {
      throw new FragmentError(`TLS Message Length ${total} is over ${MAX_TLS_MESSAGE}`);
    }
    if (!this.message) return this.first(fragment);
    const expected = this.message.length;
    if (total !== undefined && total !== expected) {
      throw new FragmentError("TLS Message Length changed between fragments");
    }
    if (this.size + fragment.data.length > expected) {
      throw new FragmentError(`fragments add up past ${expected} octets`);
    }
    this.size += fragment.data.copy(this.message, this.size);
    if (fragment.flags & Flags.More) return undefined;
    if (this.size !== expected) {
      throw new FragmentError(`TLS Message Length says ${expected}, fragments hold ${this.size}`);
    }
    const whole = this.message;
    this.reset();
    return whole;
  }

  private first(fragment: TlsFragment): Buffer | undefined {
    const { totalLength: total, data } = fragment;
    if (data.length > (total ?? MAX_TLS_MESSAGE)) {
      throw new FragmentError(`fragments add up past ${total ?? MAX_TLS_MESSAGE} octets`);
    }
    if (!(fragment.flags & Flags.More)) {
      if (total !== undefined && data.length !== total) {
        throw new FragmentError(`TLS Message Length says ${total}, fragments hold ${data.length}`);
      }
      return data;
    }
    // RFC 5216 section 2.1.5: the first of several fragments MUST carry the L flag.
    if (total === undefined) throw new FragmentError("first fragment of several without the L flag");
    this.message = Buffer.alloc(total);
    this.size = data.copy(this.message);
    return undefined;
  }

  get pending(): boolean {
    return this.message !== undefined;
  }

  /** Bytes held for a message still arriving. */
  get heldBytes(): number {
    return this.message?.length ?? 0;
  }

  reset(): void {
    this.message = undefined;
    this.size = 0;
  }
}

const NOTHING = Buffer.alloc(0);

/** The server's outgoing TLS data, handed out one fragment per request. */
export class Fragmenter {
  private data: Buffer = NOTHING;
  private offset = 0;

  constructor(private readonly size: number) {}

  load(data: Buffer): void {
    this.data = data;
    this.offset = 0;
  }

  get pending(): boolean {
    return this.offset < this.data.length;
  }

  /** The next fragment's Type-Data: flags (with `version` in the low bits), length on the first, data. */
  next(version = 0): Buffer {
    const total = this.data.length;
    const first = this.offset === 0;
    const end = Math.min(total, this.offset + this.size);
    const more = end < total;
    // L on the first fragment of several (RFC 5216 section 2.1.5); FreeRADIUS and hostapd do the same.
    const withLength = first && more;
    const head = withLength ? 5 : 1;
    const out = Buffer.allocUnsafe(head + end - this.offset);
    out[0] = (withLength ? Flags.Length : 0) | (more ? Flags.More : 0) | version;
    if (withLength) out.writeUInt32BE(total, 1);
    this.data.copy(out, head, this.offset, end);
    this.offset = end;
    // The last fragment is out: the data is not held any longer.
    if (!more) this.load(NOTHING);
    return out;
  }

  /** Bytes held for fragments still to send. */
  get heldBytes(): number {
    return this.data.length;
  }
}

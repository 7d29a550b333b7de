// The answers the UDP door keeps for retransmissions (RFC 5080 section 2.2.2; FreeRADIUS keeps them
// for cleanup_delay): a request with the source address, port, identifier and authenticator of one
// already answered gets the same bytes again, and one still being decided is dropped.
//
// Why not a Map of objects: under load the door answers every round trip of every EAP login, and
// each answer is kept for the whole TTL. As JS objects (an entry, its key string, two Buffers) every
// one of them outlived two scavenges and was promoted: 3.6 KB per PEAP login, most of what the
// process promoted, so V8 marked the old generation again every few seconds. Here an answer is
// copied into a 1 MiB chunk outside the JS heap and found through integer keys and offsets, so
// nothing kept per answer lives on the JS heap. Only requests in progress (milliseconds) are objects.
//
// Entry layout in a chunk (little-endian): peer id u32, key u32, expiry f64 (ms since epoch),
// the request's authenticator (16 octets), the answer's length u16, the answer.

const CHUNK_BYTES = 1 << 20;
const PEER_AT = 0;
const KEY_AT = 4;
const EXPIRES_AT = 8;
const AUTHENTICATOR_AT = 16;
const LENGTH_AT = 32;
const ENTRY_HEADER = 34;
/** RFC 2865 section 3: a RADIUS packet is at most 4096 octets. */
const MAX_ANSWER = 4096;

/**
 * What a request is, as far as the cache knows: "new" (not seen, or its answer expired: decide it;
 * it is now marked in progress), "in-progress" (a copy of it is being decided: drop this one), or
 * the answer it already got (a view into the cache), to send again.
 */
export type Seen = "new" | "in-progress" | Buffer;

interface Peer {
  address: string;
  id: number;
  /** key -> where its answer is (chunk slot * CHUNK_BYTES + offset: a small integer). */
  answered: Map<number, number>;
  /** key -> the authenticator of the request being decided. */
  inProgress: Map<number, Buffer>;
}

interface Chunk {
  bytes: Buffer;
  /** Octets written. */
  used: number;
  /** The latest expiry of its entries: the chunk can go once it has passed. */
  lastExpires: number;
}

/** The key of a request within its source address: which port it came to, its source port, its identifier. */
export function requestKey(accounting: boolean, port: number, identifier: number): number {
  return ((accounting ? 1 : 0) << 24) | ((port & 0xffff) << 8) | (identifier & 0xff);
}

export class DuplicateCache {
  private readonly peers = new Map<string, Peer>();
  private readonly peersById = new Map<number, Peer>();
  private nextPeerId = 1;
  /** Chunks by slot; `order` lists the occupied slots, oldest first (the last one is written to). */
  private readonly slots: (Chunk | undefined)[];
  private readonly order: number[] = [];
  /** One dropped chunk kept for the next, so that steady traffic does not allocate. */
  private spare: Buffer | undefined;

  constructor(
    private readonly ttlMs: number,
    /** At most this many chunks (MiB): past it the oldest answers go before their time. */
    maxChunks = 64,
  ) {
    this.slots = new Array(maxChunks).fill(undefined);
  }

  /** Answers held, in octets of chunks (for tests and metrics). */
  get heldBytes(): number {
    return this.order.length * CHUNK_BYTES;
  }

  /** Classifies a request; "new" marks it in progress. `authenticator` may be a view of the packet. */
  check(address: string, key: number, authenticator: Buffer, now: number): Seen {
    const peer = this.peers.get(address);
    if (peer) {
      if (peer.inProgress.get(key)?.equals(authenticator)) return "in-progress";
      const at = peer.answered.get(key);
      const answer = at === undefined ? undefined : this.answerAt(at, authenticator, now);
      if (answer) return answer;
    }
    this.peer(address).inProgress.set(key, Buffer.from(authenticator));
    return "new";
  }

  /** The request was answered with `answer`: kept for the TTL. */
  answered(address: string, key: number, authenticator: Buffer, answer: Buffer, now: number): void {
    const peer = this.peer(address);
    this.settle(peer, key, authenticator);
    if (answer.length > MAX_ANSWER) return;
    const expires = now + this.ttlMs;
    const { chunk, slot } = this.room(ENTRY_HEADER + answer.length, now);
    const offset = chunk.used;
    const bytes = chunk.bytes;
    bytes.writeUInt32LE(peer.id, offset + PEER_AT);
    bytes.writeUInt32LE(key, offset + KEY_AT);
    bytes.writeDoubleLE(expires, offset + EXPIRES_AT);
    authenticator.copy(bytes, offset + AUTHENTICATOR_AT, 0, 16);
    bytes.writeUInt16LE(answer.length, offset + LENGTH_AT);
    answer.copy(bytes, offset + ENTRY_HEADER);
    chunk.used += ENTRY_HEADER + answer.length;
    chunk.lastExpires = expires;
    peer.answered.set(key, slot * CHUNK_BYTES + offset);
  }

  /** The request got no answer (dropped, failed): a retransmission is decided again. */
  abandoned(address: string, key: number, authenticator: Buffer): void {
    const peer = this.peers.get(address);
    if (!peer) return;
    this.settle(peer, key, authenticator);
    this.forgetIfEmpty(peer);
  }

  /** Drops the chunks whose answers have all expired. */
  sweep(now: number): void {
    while (this.order.length > 0) {
      const chunk = this.slots[this.order[0]!]!;
      if (chunk.lastExpires > now) break;
      this.dropOldest();
    }
  }

  /** The answer kept at `at` when it answered this authenticator and has not expired. */
  private answerAt(at: number, authenticator: Buffer, now: number): Buffer | undefined {
    const offset = at % CHUNK_BYTES;
    const bytes = this.slots[Math.floor(at / CHUNK_BYTES)]!.bytes;
    if (bytes.readDoubleLE(offset + EXPIRES_AT) <= now) return undefined;
    const start = offset + AUTHENTICATOR_AT;
    if (bytes.compare(authenticator, 0, 16, start, start + 16) !== 0) return undefined;
    const length = bytes.readUInt16LE(offset + LENGTH_AT);
    return bytes.subarray(offset + ENTRY_HEADER, offset + ENTRY_HEADER + length);
  }

  /** Ends the in-progress mark of this request (not of a newer one with the same key). */
  private settle(peer: Peer, key: number, authenticator: Buffer): void {
    if (peer.inProgress.get(key)?.equals(authenticator)) peer.inProgress.delete(key);
  }

  private peer(address: string): Peer {
    let peer = this.peers.get(address);
    if (!peer) {
      peer = { address, id: this.nextPeerId, answered: new Map(), inProgress: new Map() };
      this.nextPeerId = (this.nextPeerId % 0xffffffff) + 1;
      this.peers.set(address, peer);
      this.peersById.set(peer.id, peer);
    }
    return peer;
  }

  private forgetIfEmpty(peer: Peer): void {
    if (peer.answered.size > 0 || peer.inProgress.size > 0) return;
    this.peers.delete(peer.address);
    this.peersById.delete(peer.id);
  }

  /** The chunk to write `length` octets to (a new one when the current is full). */
  private room(length: number, now: number): { chunk: Chunk; slot: number } {
    const last = this.order.at(-1);
    if (last !== undefined) {
      const chunk = this.slots[last]!;
      if (chunk.used + length <= CHUNK_BYTES) return { chunk, slot: last };
    }
    this.sweep(now);
    if (this.order.length === this.slots.length) this.dropOldest();
    const slot = this.slots.indexOf(undefined);
    const chunk: Chunk = {
      bytes: this.spare ?? Buffer.allocUnsafeSlow(CHUNK_BYTES),
      used: 0,
      lastExpires: 0,
    };
    this.spare = undefined;
    this.slots[slot] = chunk;
    this.order.push(slot);
    return { chunk, slot };
  }

  /** Forgets every answer in the oldest chunk (those not answered again since) and frees it. */
  private dropOldest(): void {
    const slot = this.order.shift()!;
    const chunk = this.slots[slot]!;
    this.slots[slot] = undefined;
    const bytes = chunk.bytes;
    const touched = new Set<Peer>();
    for (let offset = 0; offset < chunk.used; ) {
      const peer = this.peersById.get(bytes.readUInt32LE(offset + PEER_AT));
      const key = bytes.readUInt32LE(offset + KEY_AT);
      if (peer && peer.answered.get(key) === slot * CHUNK_BYTES + offset) {
        peer.answered.delete(key);
        touched.add(peer);
      }
      offset += ENTRY_HEADER + bytes.readUInt16LE(offset + LENGTH_AT);
    }
    for (const peer of touched) this.forgetIfEmpty(peer);
    this.spare = bytes;
  }
}

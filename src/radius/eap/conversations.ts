// EAP conversations between round trips, found by the RADIUS State attribute (RFC 2865 section
// 5.24, RFC 3579 section 2.6.1). Bounded by an idle timeout and, per network and in total, by a
// count (issue 14 point 3) and by the bytes they hold (issue 22 point 7: a half-open PEAP
// conversation holds about 55-69 KiB, so counts alone let 20,000 of them take 1.3 GB).
// Past a network's own bound, its least recently used conversation is dropped. Past a global bound,
// conversations are dropped only from networks holding more than their fair share (the bound over
// the networks holding conversations): so a flood costs the flooding networks their oldest
// half-open conversations, and a network within its share never loses one to another's flood.
import { randomOctets } from "../../core/shared/random-pool.ts";
import type { EapLimits } from "./types.ts";

export interface Bound {
  /** The State value, hex: the map key. */
  key: string;
  networkId: number;
  address: string;
  /** When the conversation is dropped unless touched (ms since epoch). */
  expires: number;
  /** A packet of this conversation is being worked on: a parallel one is dropped. */
  busy: boolean;
  /** Bytes charged for it at its last round trip (kept by Conversations; 0 to begin with). */
  charged: number;
  /** What it holds between round trips, in bytes (estimated where it cannot be counted). */
  heldBytes(): number;
  /** Frees what the conversation holds (a TLS connection). */
  close(): void;
}

/** One network's conversations, least recently used first, and the bytes charged for them. */
interface Share<C> {
  conversations: Map<string, C>;
  bytes: number;
}

export class Conversations<C extends Bound> {
  private readonly all = new Map<string, C>();
  private readonly byNetwork = new Map<number, Share<C>>();
  private readonly sweeper: NodeJS.Timeout;
  private held = 0;
  /** Conversations dropped for a cap or budget since start. */
  evicted = 0;

  constructor(private readonly limits: EapLimits) {
    const every = Math.max(250, Math.min(5000, (limits.idleTimeoutSeconds * 1000) / 4));
    this.sweeper = setInterval(() => this.sweep(Date.now()), every).unref();
  }

  get size(): number {
    return this.all.size;
  }

  /** Bytes charged for every open conversation. */
  get bytes(): number {
    return this.held;
  }

  countOf(networkId: number): number {
    return this.byNetwork.get(networkId)?.conversations.size ?? 0;
  }

  bytesOf(networkId: number): number {
    return this.byNetwork.get(networkId)?.bytes ?? 0;
  }

  /** A fresh unguessable State value (16 random octets). */
  static newState(): Buffer {
    return randomOctets(16);
  }

  add(conversation: C): void {
    conversation.charged = 0;
    this.link(conversation);
  }

  /**
   * The conversation a State names, when it was started by this network from this address;
   * "foreign" when it belongs to another network or address (left untouched).
   */
  find(key: string, networkId: number, address: string): C | "foreign" | undefined {
    const found = this.all.get(key);
    if (!found) return undefined;
    if (found.expires <= Date.now() && !found.busy) {
      this.remove(found);
      return undefined;
    }
    if (found.networkId !== networkId || found.address !== address) return "foreign";
    return found;
  }

  /**
   * Moves a conversation under a new State (each Access-Challenge carries a new one), refreshes
   * it and charges it what it holds now; other conversations may be dropped to stay in bounds.
   * One removed while its packet was worked on stays removed (its new State is unknown).
   */
  rekey(conversation: C, key: string): void {
    if (this.all.get(conversation.key) !== conversation) return;
    this.unlink(conversation);
    conversation.key = key;
    this.link(conversation);
  }

  remove(conversation: C): void {
    this.unlink(conversation);
    conversation.close();
  }

  private link(conversation: C): void {
    conversation.expires = Date.now() + this.limits.idleTimeoutSeconds * 1000;
    let share = this.byNetwork.get(conversation.networkId);
    if (!share) {
      share = { conversations: new Map(), bytes: 0 };
      this.byNetwork.set(conversation.networkId, share);
    }
    this.all.set(conversation.key, conversation);
    share.conversations.set(conversation.key, conversation);
    conversation.charged = conversation.heldBytes();
    share.bytes += conversation.charged;
    this.held += conversation.charged;
    this.enforce(share, conversation);
  }

  private unlink(conversation: C): void {
    if (this.all.get(conversation.key) !== conversation) return;
    this.all.delete(conversation.key);
    const share = this.byNetwork.get(conversation.networkId)!;
    share.conversations.delete(conversation.key);
    share.bytes -= conversation.charged;
    this.held -= conversation.charged;
    conversation.charged = 0;
    if (share.conversations.size === 0) this.byNetwork.delete(conversation.networkId);
  }

  /** Drops conversations until every bound holds again; `served` (just charged) stays. */
  private enforce(share: Share<C>, served: C): void {
    const limits = this.limits;
    while (share.conversations.size > limits.perNetwork || share.bytes > limits.perNetworkBytes) {
      if (!this.evictOldest(share, served)) break;
    }
    while (this.all.size > limits.total || this.held > limits.totalBytes) {
      if (!this.evictOldest(this.overShare(share), served)) break;
    }
  }

  /**
   * The network to take from when a global bound is passed: the one that grew, when it holds
   * more than its fair share, else the one holding the most (which then holds more than its
   * share: the most is at least the mean, and the mean is over the share).
   */
  private overShare(grown: Share<C>): Share<C> {
    const byCount = this.all.size > this.limits.total;
    const weight = (s: Share<C>) => (byCount ? s.conversations.size : s.bytes);
    const fair = (byCount ? this.limits.total : this.limits.totalBytes) / this.byNetwork.size;
    if (weight(grown) > fair) return grown;
    let heaviest = grown;
    for (const share of this.byNetwork.values()) if (weight(share) > weight(heaviest)) heaviest = share;
    return heaviest;
  }

  /** Drops the network's least recently used conversation but `served` and busy ones; false: none. */
  private evictOldest(share: Share<C>, served: C): boolean {
    for (const conversation of share.conversations.values()) {
      if (conversation === served || conversation.busy) continue;
      this.evicted++;
      this.remove(conversation);
      return true;
    }
    return false;
  }

  /** Drops idle conversations; the maps are in last-touched order, so it stops at the first live one. */
  sweep(now: number): void {
    for (const conversation of this.all.values()) {
      if (conversation.expires > now) break;
      if (conversation.busy) continue;
      this.remove(conversation);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const conversation of [...this.all.values()]) this.remove(conversation);
  }
}

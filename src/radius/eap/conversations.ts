// EAP conversations between round trips, found by the RADIUS State attribute (RFC 2865 section
// 5.24, RFC 3579 section 2.6.1). Bounded three ways (issue 14 point 3): an idle timeout, a cap per
// network and a cap in total. Past a cap the least recently used conversation (of that network,
// or of all) is dropped, so a flood from one network costs that network its oldest half-open
// conversations and never another network's.
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
  /** Frees what the conversation holds (a TLS connection). */
  close(): void;
}

export class Conversations<C extends Bound> {
  private readonly all = new Map<string, C>();
  private readonly byNetwork = new Map<number, Map<string, C>>();
  private readonly sweeper: NodeJS.Timeout;
  /** Conversations dropped for a cap since start (logged by the caller). */
  evicted = 0;

  constructor(private readonly limits: EapLimits) {
    const every = Math.max(250, Math.min(5000, (limits.idleTimeoutSeconds * 1000) / 4));
    this.sweeper = setInterval(() => this.sweep(Date.now()), every).unref();
  }

  get size(): number {
    return this.all.size;
  }

  countOf(networkId: number): number {
    return this.byNetwork.get(networkId)?.size ?? 0;
  }

  /** A fresh unguessable State value (16 random octets). */
  static newState(): Buffer {
    return randomOctets(16);
  }

  add(conversation: C): void {
    let mine = this.byNetwork.get(conversation.networkId);
    if (!mine) {
      mine = new Map();
      this.byNetwork.set(conversation.networkId, mine);
    }
    while (mine.size >= this.limits.perNetwork) this.evictFirst(mine);
    while (this.all.size >= this.limits.total) this.evictFirst(this.all);
    conversation.expires = Date.now() + this.limits.idleTimeoutSeconds * 1000;
    this.all.set(conversation.key, conversation);
    mine.set(conversation.key, conversation);
  }

  /**
   * The conversation a State names, when it was started by this network from this address;
   * "foreign" when it belongs to another network or address (left untouched).
   */
  find(key: string, networkId: number, address: string): C | "foreign" | undefined {
    const found = this.all.get(key);
    if (!found) return undefined;
    if (found.expires <= Date.now()) {
      this.remove(found);
      return undefined;
    }
    if (found.networkId !== networkId || found.address !== address) return "foreign";
    return found;
  }

  /** Moves a conversation under a new State (each Access-Challenge carries a new one) and refreshes it. */
  rekey(conversation: C, key: string): void {
    this.unlink(conversation);
    conversation.key = key;
    conversation.expires = Date.now() + this.limits.idleTimeoutSeconds * 1000;
    this.all.set(key, conversation);
    const mine = this.byNetwork.get(conversation.networkId) ?? new Map<string, C>();
    this.byNetwork.set(conversation.networkId, mine);
    mine.set(key, conversation);
  }

  remove(conversation: C): void {
    this.unlink(conversation);
    conversation.close();
  }

  private unlink(conversation: C): void {
    if (this.all.get(conversation.key) === conversation) this.all.delete(conversation.key);
    const mine = this.byNetwork.get(conversation.networkId);
    if (mine?.get(conversation.key) === conversation) {
      mine.delete(conversation.key);
      if (mine.size === 0) this.byNetwork.delete(conversation.networkId);
    }
  }

  private evictFirst(map: Map<string, C>): void {
    const first = map.values().next().value as C | undefined;
    if (!first) return;
    this.evicted++;
    this.remove(first);
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

// What keeps the RadSec listener up under a flood: caps on open connections (in all and per
// address) and on TLS handshakes started per second (in all and per address), checked on the raw
// TCP connection before any TLS work is done. A NAS past a cap is closed at once; the others go on.

export interface GateLimits {
  /** Open connections in all. */
  maxConnections: number;
  /** Open connections from one address (sites behind one NAT share it). */
  maxConnectionsPerAddress: number;
  /** Handshakes started per second in all. */
  handshakesPerSecond: number;
  /** Handshakes started per second from one address. */
  handshakesPerSecondPerAddress: number;
}

export const DEFAULT_GATE_LIMITS: GateLimits = {
  maxConnections: 2048,
  maxConnectionsPerAddress: 64,
  handshakesPerSecond: 200,
  handshakesPerSecondPerAddress: 20,
};

/** Why a connection was turned away (a bounded set: a metrics label). */
export type GateRefusal =
  | "too_many_connections"
  | "too_many_connections_from_address"
  | "handshake_rate"
  | "handshake_rate_from_address";

/** A fixed one-second window: simple, and enough to bound the CPU a flood can take. */
class Window {
  private second = 0;
  private count = 0;
  /** Whether this window's second is over (its count no longer matters). */
  stale(now: number): boolean {
    return Math.floor(now / 1000) > this.second;
  }

  take(now: number, limit: number): boolean {
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.count = 0;
    }
    if (this.count >= limit) return false;
    this.count++;
    return true;
  }
}

export class ConnectionGate {
  private open = 0;
  private readonly perAddress = new Map<string, { open: number; window: Window }>();
  private readonly all = new Window();

  constructor(private readonly limits: GateLimits) {}

  /** Admits a new connection (counted until release()), or says why not. */
  admit(address: string, now = Date.now()): GateRefusal | null {
    let entry = this.perAddress.get(address);
    if (!entry) {
      // Kept while refused too, so a refused address's rate is still counted; sweep() drops it.
      entry = { open: 0, window: new Window() };
      this.perAddress.set(address, entry);
    }
    if (this.open >= this.limits.maxConnections) return "too_many_connections";
    if (entry.open >= this.limits.maxConnectionsPerAddress) return "too_many_connections_from_address";
    if (!entry.window.take(now, this.limits.handshakesPerSecondPerAddress)) {
      return "handshake_rate_from_address";
    }
    if (!this.all.take(now, this.limits.handshakesPerSecond)) return "handshake_rate";
    entry.open++;
    this.open++;
    return null;
  }

  release(address: string): void {
    const entry = this.perAddress.get(address);
    if (!entry) return;
    this.open--;
    entry.open--;
  }

  /** Forgets addresses with nothing open whose second is over (called every few seconds). */
  sweep(now = Date.now()): void {
    for (const [address, entry] of this.perAddress) {
      if (entry.open === 0 && entry.window.stale(now)) this.perAddress.delete(address);
    }
  }

  get connections(): number {
    return this.open;
  }
}

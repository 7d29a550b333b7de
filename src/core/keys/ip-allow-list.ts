// IP allow-lists of API keys: IPv4 and IPv6 networks, read and matched by core/shared/ip.ts.
import {
  type Cidr,
  formatCidr,
  inNetwork,
  parseIp,
  parseNetwork,
  parseCidr as readCidr,
} from "../shared/ip.ts";

/**
 * Validates one allow-list entry, "address" or "address/prefix"; returns the canonical
 * "network/prefix" (host bits cleared, IPv6 as RFC 5952 writes it) or throws with a reason.
 */
export function parseCidr(text: string): string {
  return formatCidr(parseNetwork(text.trim()));
}

export class IpAllowList {
  private readonly networks: Cidr[] = [];
  readonly empty: boolean;

  /** Stored entries; one that no longer reads as a CIDR matches nothing (the list stays closed). */
  constructor(cidrs: readonly string[]) {
    this.empty = cidrs.length === 0;
    for (const cidr of cidrs) {
      try {
        this.networks.push(readCidr(cidr));
      } catch {
        // skipped: see above
      }
    }
  }

  /** An empty list allows every address. IPv4-mapped IPv6 addresses are matched as IPv4. */
  allows(ip: string): boolean {
    if (this.empty) return true;
    const address = parseIp(ip);
    return address !== null && this.networks.some((network) => inNetwork(address, network));
  }
}

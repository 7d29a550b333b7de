// IP allow-lists of API keys: IPv4 and IPv6 CIDRs, matched with node's BlockList.
import { BlockList, isIPv4, isIPv6 } from "node:net";

/** Validates one "address" or "address/prefix"; returns the canonical text or throws with a reason. */
export function parseCidr(text: string): string {
  const [address = "", prefix, extra] = text.trim().split("/");
  if (extra !== undefined) throw new Error(`"${text}" is not an address or CIDR`);
  const family = isIPv4(address) ? 4 : isIPv6(address) ? 6 : 0;
  if (family === 0) throw new Error(`"${text}" is not an IPv4 or IPv6 address or CIDR`);
  const max = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${address}/${max}`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    throw new Error(`"${text}" has an invalid prefix length (0-${max})`);
  }
  return `${address}/${Number(prefix)}`;
}

export class IpAllowList {
  private readonly blocks = new BlockList();
  readonly empty: boolean;

  constructor(cidrs: readonly string[]) {
    this.empty = cidrs.length === 0;
    for (const cidr of cidrs) {
      const [address = "", prefix = ""] = cidr.split("/");
      this.blocks.addSubnet(address, Number(prefix), isIPv4(address) ? "ipv4" : "ipv6");
    }
  }

  /** An empty list allows every address. IPv4-mapped IPv6 addresses are matched as IPv4. */
  allows(ip: string): boolean {
    if (this.empty) return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    const address = mapped?.[1] ?? ip;
    if (isIPv4(address)) return this.blocks.check(address, "ipv4");
    if (isIPv6(address)) return this.blocks.check(address, "ipv6");
    return false;
  }
}

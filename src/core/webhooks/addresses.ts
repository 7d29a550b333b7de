// Which addresses a webhook may connect to. Deliveries go to the public internet only: never to
// Wisp's own host, its network, the cloud metadata service or anything else a URL could aim at
// to reach what only the server can reach (SSRF). WEBHOOK_ALLOW_PRIVATE=1 lifts the rule.
import { BlockList, isIPv4, isIPv6 } from "node:net";

type Category =
  | "unspecified"
  | "loopback"
  | "private"
  | "CGNAT"
  | "link-local"
  | "metadata"
  | "multicast"
  | "reserved";

const V4: [string, number, Category][] = [
  ["169.254.169.254", 32, "metadata"],
  ["168.63.129.16", 32, "metadata"], // Azure's host endpoint
  ["0.0.0.0", 8, "unspecified"],
  ["127.0.0.0", 8, "loopback"],
  ["10.0.0.0", 8, "private"],
  ["172.16.0.0", 12, "private"],
  ["192.168.0.0", 16, "private"],
  ["100.64.0.0", 10, "CGNAT"],
  ["169.254.0.0", 16, "link-local"],
  ["224.0.0.0", 4, "multicast"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["240.0.0.0", 4, "reserved"],
];

const V6: [string, number, Category][] = [
  ["fd00:ec2::254", 128, "metadata"],
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["fc00::", 7, "private"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private"],
  ["ff00::", 8, "multicast"],
  ["::", 96, "reserved"], // IPv4-compatible (deprecated)
  ["100::", 64, "reserved"],
  ["2001:db8::", 32, "reserved"],
  ["64:ff9b:1::", 48, "private"], // local-use NAT64
];

function listsOf(entries: [string, number, Category][], family: "ipv4" | "ipv6"): [Category, BlockList][] {
  return entries.map(([network, prefix, category]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return [category, list];
  });
}

const v4Lists = listsOf(V4, "ipv4");
const article = (category: Category) => (category === "unspecified" ? "an" : "a");
const v6Lists = listsOf(V6, "ipv6");

/** The 16 bytes of an IPv6 address (which isIPv6 accepted). */
function ipv6Bytes(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.flatMap((g) => {
    const n = Number.parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

/** The IPv4 address carried inside an IPv6 one (mapped, NAT64, 6to4), if any. */
function embeddedIPv4(address: string): string | null {
  const b = ipv6Bytes(address);
  const at = (i: number) => b.slice(i, i + 4).join(".");
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return at(12); // ::ffff:a.b.c.d
  const nat64 = b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b;
  if (nat64 && zero(4, 12)) return at(12); // 64:ff9b::/96
  if (b[0] === 0x20 && b[1] === 0x02) return at(2); // 2002::/16, 6to4
  return null;
}

/**
 * Why an address may not be connected to ("a loopback address"), or null when it may. Names are
 * not accepted here: resolve first, then check every address.
 */
export function refusedAddress(address: string): string | null {
  const ip = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (isIPv4(ip)) {
    const found = v4Lists.find(([, list]) => list.check(ip, "ipv4"));
    return found ? `${ip} is ${article(found[0])} ${found[0]} address` : null;
  }
  if (isIPv6(ip)) {
    const inner = embeddedIPv4(ip);
    if (inner) {
      const why = refusedAddress(inner);
      return why ? `${ip} carries ${why}` : null;
    }
    const found = v6Lists.find(([, list]) => list.check(ip, "ipv6"));
    return found ? `${ip} is ${article(found[0])} ${found[0]} address` : null;
  }
  return `${address} is not an IP address`;
}

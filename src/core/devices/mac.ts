// MAC addresses of devices, in whatever notation gateways, switches and operators write them, and
// the one form Wisp stores and shows (lower-case, colon-separated, as reports and events do).
//
// What counts as a MAC is FreeRADIUS 3.2's own rule (raddb/policy.d/canonicalization,
// mac-addr-regexp, used by rewrite_calling_station_id): six pairs of hex digits, any case, each
// pair followed by at most one character that is not a hex digit. So `aabbccddeeff`,
// `AA-BB-CC-DD-EE-FF`, `aa:bb:cc:dd:ee:ff`, Cisco's `aabb.ccdd.eeff` and HP's `aabbcc-ddeeff`
// are one address, and a request FreeRADIUS would rewrite is the request Wisp matches
// (test/radius/mab-parity.test.ts checks both servers on the same packets).

const FREERADIUS_MAC =
  /^([0-9a-f]{2})[^0-9a-f]?([0-9a-f]{2})[^0-9a-f]?([0-9a-f]{2})[^0-9a-f]?([0-9a-f]{2})[^0-9a-f]?([0-9a-f]{2})[^0-9a-f]?([0-9a-f]{2})$/i;

/** The canonical form (`aa:bb:cc:dd:ee:ff`) of a MAC in any notation FreeRADIUS takes; null otherwise. */
export function canonicalMac(text: string | undefined | null): string | null {
  if (!text || text.length > 17) return null;
  const match = FREERADIUS_MAC.exec(text);
  if (!match) return null;
  return match.slice(1, 7).join(":").toLowerCase();
}

/** FreeRADIUS's rewrite of a station id: `AA-BB-CC-DD-EE-FF` (RFC 3580 section 3.21). */
export function rfc3580Mac(mac: string): string {
  return mac.toUpperCase().replaceAll(":", "-");
}

function firstOctet(mac: string): number {
  return Number.parseInt(mac.slice(0, 2), 16);
}

/** IEEE 802: the I/G bit of the first octet marks a group (multicast or broadcast) address. */
export function isMulticast(mac: string): boolean {
  return (firstOctet(mac) & 0x01) !== 0;
}

/**
 * IEEE 802: the U/L bit marks a locally administered address: what phones and laptops use for
 * "private" or randomised addresses (iOS 14+, Android 10+, Windows 10+), one per network or per day.
 */
export function isRandomised(mac: string): boolean {
  return (firstOctet(mac) & 0x02) !== 0;
}

export const MAC_RULE = "must be a MAC address like aa:bb:cc:dd:ee:ff, AA-BB-CC-DD-EE-FF or aabb.ccdd.eeff";

/** Why the text is no device's MAC (an operator's or a CSV's), or null; a device has one station. */
export function macProblem(text: string): string | null {
  const mac = canonicalMac(text.trim());
  if (mac === null) return MAC_RULE;
  if (mac === "00:00:00:00:00:00") return "must not be all zeros";
  if (isMulticast(mac)) return "must be a unicast address (this one is multicast or broadcast)";
  return null;
}

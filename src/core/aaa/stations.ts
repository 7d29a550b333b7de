// Station ids (RFC 3580): Called-Station-Id is the access point's MAC, often followed by ":SSID";
// Calling-Station-Id is the client's MAC. Devices write MACs in many ways; Wisp emits one form.

const HEX12 = /^[0-9a-f]{12}$/;

/** "AA-BB-CC-DD-EE-FF", "aa:bb:cc:dd:ee:ff", "aabb.ccdd.eeff", "AABBCCDDEEFF" -> "aa:bb:cc:dd:ee:ff". */
/** Six two-digit groups with one separator: the form nearly every device sends, taken without splitting. */
const SEPARATED = /^[0-9a-fA-F]{2}([-:])[0-9a-fA-F]{2}(?:\1[0-9a-fA-F]{2}){4}$/;

export function normalizeMac(text: string | undefined): string | null {
  if (!text) return null;
  if (text.length === 17 && SEPARATED.test(text)) return text.toLowerCase().replaceAll("-", ":");
  const trimmed = text.trim().toLowerCase();
  const groups = trimmed.split(/[-:.]/);
  let hex: string;
  if (groups.length === 6 && groups.every((g) => /^[0-9a-f]{1,2}$/.test(g))) {
    hex = groups.map((g) => g.padStart(2, "0")).join("");
  } else if (groups.length === 3 && groups.every((g) => /^[0-9a-f]{4}$/.test(g))) {
    hex = groups.join("");
  } else {
    hex = trimmed;
  }
  if (!HEX12.test(hex)) return null;
  return hex.match(/../g)!.join(":");
}

/** Splits a Called-Station-Id into the access point's MAC and the SSID, when it has them. */
export function parseCalledStation(text: string | undefined): { apMac: string | null; ssid: string | null } {
  if (!text) return { apMac: null, ssid: null };
  const whole = normalizeMac(text);
  if (whole) return { apMac: whole, ssid: null };
  // The MAC itself may contain colons: try every split point, the longest MAC first.
  for (let i = text.length - 1; i > 0; i--) {
    if (text[i] !== ":") continue;
    const mac = normalizeMac(text.slice(0, i));
    if (mac) return { apMac: mac, ssid: text.slice(i + 1) || null };
  }
  return { apMac: null, ssid: null };
}

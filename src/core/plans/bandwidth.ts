// A plan's bandwidth in the attributes each gateway vendor documents, chosen by the network's
// vendor setting. Rates are kept in kbit/s; each vendor's unit and direction are converted here.
// Every attribute is in Wisp's dictionary (node-radius-utils' FreeRADIUS tree, or
// dictionary.wisp-vendors for the Cisco WLC ones); test/aaa/plan-bandwidth.test.ts checks the octets.
import type { Pair } from "../aaa/pairs.ts";
import type { GatewayVendor } from "../networks/rules.ts";

export interface Bandwidth {
  /** kbit/s towards the client; null: no limit. */
  download_kbps: number | null;
  /** kbit/s from the client; null: no limit. */
  upload_kbps: number | null;
  /** A role / filter name configured on the gateway (Aruba, Meraki); '' none. */
  role: string;
}

/** RADIUS `integer` is 32 bits (RFC 2865 section 5): a faster rate is sent as the largest value. */
const UINT32_MAX = 2 ** 32 - 1;
const pair = (attribute: string, value: string | number): Pair => ({
  attribute,
  op: "=",
  value: String(value),
});

/**
 * WISPr (Wi-Fi Alliance WISPr 1.0 best current practices, vendor 14122, FreeRADIUS
 * dictionary.wispr): WISPr-Bandwidth-Max-Up (7) and -Max-Down (8), integer, bit/s.
 */
function wispr(b: Bandwidth): Pair[] {
  const out: Pair[] = [];
  if (b.upload_kbps !== null)
    out.push(pair("WISPr-Bandwidth-Max-Up", Math.min(b.upload_kbps * 1000, UINT32_MAX)));
  if (b.download_kbps !== null)
    out.push(pair("WISPr-Bandwidth-Max-Down", Math.min(b.download_kbps * 1000, UINT32_MAX)));
  return out;
}

/**
 * MikroTik RouterOS (vendor 14988, dictionary.mikrotik): Mikrotik-Rate-Limit (8), a string
 * "rx-rate[/tx-rate] ..." seen from the router, so rx is the client's upload and tx its download
 * (RouterOS manual, RADIUS client, "Rate-Limit"). Rates take a k suffix (1,000); 0 is no limit.
 */
function mikrotik(b: Bandwidth): Pair[] {
  if (b.download_kbps === null && b.upload_kbps === null) return [];
  const rate = (kbps: number | null) => (kbps === null ? "0" : `${kbps}k`);
  return [pair("Mikrotik-Rate-Limit", `${rate(b.upload_kbps)}/${rate(b.download_kbps)}`)];
}

/**
 * CoovaChilli / ChilliSpot (vendor 14559, dictionary.chillispot): ChilliSpot-Bandwidth-Max-Up (4)
 * and -Max-Down (5), integer, kbit/s (CoovaChilli's RADIUS attribute list).
 */
function chillispot(b: Bandwidth): Pair[] {
  const out: Pair[] = [];
  if (b.upload_kbps !== null) out.push(pair("ChilliSpot-Bandwidth-Max-Up", b.upload_kbps));
  if (b.download_kbps !== null) out.push(pair("ChilliSpot-Bandwidth-Max-Down", b.download_kbps));
  return out;
}

/**
 * Cisco wireless LAN controllers (Airespace, vendor 14179, FreeRADIUS 3.2 dictionary.airespace):
 * the per-user bandwidth contracts Airespace-Data-Bandwidth-Average-Contract (7, downstream) and
 * -Average-Contract-Upstream (13), integer, kbit/s, applied when the WLAN allows AAA override.
 */
function cisco(b: Bandwidth): Pair[] {
  const out: Pair[] = [];
  if (b.download_kbps !== null) out.push(pair("Airespace-Data-Bandwidth-Average-Contract", b.download_kbps));
  if (b.upload_kbps !== null)
    out.push(pair("Airespace-Data-Bandwidth-Average-Contract-Upstream", b.upload_kbps));
  return out;
}

/**
 * The reply items carrying the bandwidth for a network's vendor.
 * - Aruba (vendor 14823, dictionary.aruba) has no per-user rate attribute: bandwidth contracts hang
 *   on user roles, so a plan with a role sends Aruba-User-Role (1) naming it.
 * - Meraki has no rate attribute either (dictionary.meraki holds names only): its group policies,
 *   which carry bandwidth limits, are chosen by Filter-Id (RFC 2865 section 5.11), one of the four
 *   attributes Meraki documents for that ("RADIUS attribute specifying group policy name").
 * Without a role, both fall back to WISPr. Ubiquiti UniFi documents no bandwidth reply attribute
 * for RADIUS (its hotspot list handles Session-Timeout): WISPr, as generic.
 */
export function bandwidthReply(vendor: GatewayVendor, b: Bandwidth): Pair[] {
  switch (vendor) {
    case "mikrotik":
      return mikrotik(b);
    case "chillispot":
      return chillispot(b);
    case "cisco":
      return cisco(b);
    case "aruba":
      return b.role ? [pair("Aruba-User-Role", b.role)] : wispr(b);
    case "meraki":
      return b.role ? [pair("Filter-Id", b.role)] : wispr(b);
    default:
      return wispr(b);
  }
}

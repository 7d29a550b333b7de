// A policy's outcome as RADIUS reply attributes, and how they combine with the reply items the
// login already has (the user's and groups' radreply rows, quota and expiration caps).
//
// The combination is FreeRADIUS's post-auth `update reply { Attr := value }`: each attribute the
// policy (or its plan) sets replaces every reply item of the same name, whatever its tag; the other
// items stay. One exception: Session-Timeout keeps the smaller of the two, so a policy never
// lengthens a cap that Expiration, Max-All-Session or a time quota put there (decide.ts).
import type { Pair } from "../aaa/pairs.ts";
import type { PolicyOutcome } from "./rules.ts";

/**
 * RFC 3580 section 3.31 (IEEE 802.1X VLAN assignment): Tunnel-Type = VLAN (13), Tunnel-Medium-Type
 * = IEEE-802 (6), Tunnel-Private-Group-Id = the VLAN id as text; RFC 2868 section 3 groups the
 * three attributes of one tunnel by a tag (0x01-0x1F). Tag 1, as FreeRADIUS users write
 * `Tunnel-Type:1 := VLAN` and as the three then travel with the same first octet.
 */
export const VLAN_TAG = 1;

const TUNNEL_ATTRIBUTES = ["tunnel-type", "tunnel-medium-type", "tunnel-private-group-id"];

/** The attributes of an accept outcome, plan first (the policy's own attributes override it). */
export function outcomePairs(outcome: PolicyOutcome, planPairs: readonly Pair[] = []): Pair[] {
  const own: Pair[] = [];
  const set = (attribute: string, value: string) => own.push({ attribute, op: ":=", value });
  if (outcome.vlan !== undefined) {
    set(`Tunnel-Type:${VLAN_TAG}`, "VLAN");
    set(`Tunnel-Medium-Type:${VLAN_TAG}`, "IEEE-802");
    set(`Tunnel-Private-Group-Id:${VLAN_TAG}`, String(outcome.vlan));
  }
  // RFC 2865 section 5.11; the vendors' dictionaries (FreeRADIUS share/dictionary.aruba attribute 1,
  // dictionary.airespace attribute 6, dictionary.cisco attribute 1).
  if (outcome.filter_id !== undefined) set("Filter-Id", outcome.filter_id);
  if (outcome.aruba_user_role !== undefined) set("Aruba-User-Role", outcome.aruba_user_role);
  if (outcome.airespace_acl_name !== undefined) set("Airespace-ACL-Name", outcome.airespace_acl_name);
  for (const pair of outcome.cisco_avpairs ?? []) set("Cisco-AVPair", pair);
  // RFC 2865 sections 5.27 and 5.28.
  if (outcome.session_timeout !== undefined) set("Session-Timeout", String(outcome.session_timeout));
  if (outcome.idle_timeout !== undefined) set("Idle-Timeout", String(outcome.idle_timeout));
  return combine(
    planPairs.map((p) => ({ ...p, op: ":=" })),
    own,
  );
}

/** The attribute's name without its tag, lower-case: the key replacement works by. */
const baseName = (attribute: string) => attribute.replace(/:\d+$/, "").toLowerCase();

/** `reply` with `overrides` applied (see the header): replaced by name, Session-Timeout the smaller. */
export function combine(reply: readonly Pair[], overrides: readonly Pair[]): Pair[] {
  if (overrides.length === 0) return [...reply];
  const replaced = new Set(overrides.map((p) => baseName(p.attribute)));
  // One tunnel's attributes go together: a VLAN replaces every Tunnel-* of the tunnel group.
  if (TUNNEL_ATTRIBUTES.some((a) => replaced.has(a))) for (const a of TUNNEL_ATTRIBUTES) replaced.add(a);
  const current = reply.find((p) => baseName(p.attribute) === "session-timeout");
  const out = reply.filter((p) => !replaced.has(baseName(p.attribute)));
  for (const pair of overrides) {
    if (baseName(pair.attribute) === "session-timeout" && current) {
      const a = Number(current.value);
      const b = Number(pair.value);
      out.push(Number.isFinite(a) && a <= b ? current : { ...pair, op: "=" });
      continue;
    }
    out.push({ ...pair, op: "=" });
  }
  return out;
}

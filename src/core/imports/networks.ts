// The source's nas rows as Wisp networks: an address or CIDR (never a host name), a secret both
// RADIUS servers read alike, within the width limits, and apart from other accounts' networks
// (the same rule as every door: claimAddress).
import { timingSafeEqual } from "node:crypto";
import { canonicalNasIp, widthProblem } from "../networks/address.ts";
import {
  checkSecret,
  MAX_DESCRIPTION,
  MAX_NETWORK_NAME,
  type NetworkPrefixLimits,
} from "../networks/rules.ts";
import { hasControlCharacters } from "../shared/text.ts";
import { rowName } from "./check.ts";
import type { SourceRow } from "./source-db.ts";

export interface PlannedNetwork {
  nasIp: string;
  name: string;
  secret: string;
  description: string;
  notes: string[];
}

const text = (value: unknown): string => (value === null || value === undefined ? "" : String(value));

/** A nas row checked: the network it becomes, or why it cannot be one. */
export function checkNas(
  row: SourceRow,
  index: number,
  limits: NetworkPrefixLimits,
): PlannedNetwork | string[] {
  const where = rowName("nas", row, index);
  const reasons: string[] = [];
  const nasname = text(row.nasname).trim();
  let nasIp = "";
  try {
    nasIp = canonicalNasIp(nasname);
    const wide = widthProblem(nasIp, limits);
    if (wide) reasons.push(`${where}: nasname ${wide}`);
  } catch {
    reasons.push(
      `${where}: nasname "${nasname.slice(0, 128)}" is not an IP address or CIDR (Wisp networks are addresses, not host names)`,
    );
  }
  const secret = text(row.secret);
  const badSecret = checkSecret(secret);
  if (badSecret)
    reasons.push(`${where}: the secret ${badSecret}; the devices need a new one (wisp networks create)`);
  if (reasons.length > 0) return reasons;
  const notes: string[] = [];
  let name = (text(row.shortname).trim() || nasname).slice(0, MAX_NETWORK_NAME);
  if (hasControlCharacters(name)) name = nasname;
  let description = text(row.description);
  if (description.length > MAX_DESCRIPTION || hasControlCharacters(description)) {
    notes.push(
      `${where}: the description is longer than ${MAX_DESCRIPTION} characters or has control characters; left empty`,
    );
    description = "";
  }
  const server = text(row.server).trim();
  if (server !== "") {
    notes.push(
      `${where}: virtual server "${server.slice(0, 64)}" is not carried over (Wisp answers every network alike)`,
    );
  }
  return { nasIp, name, secret, description, notes };
}

/** Whether two secrets are the same, in constant time. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

// Accounting as FreeRADIUS's rlm_sql does it (queries.conf): Start inserts a session row,
// Interim-Update and Stop update it (inserting it when the Start was lost), Accounting-On/Off
// close every open session of the NAS. Pure: turns a request into the row changes to make.
import { createHash } from "node:crypto";
import { firstValue, type Pair } from "./pairs.ts";

export type AcctStatus = "start" | "interim-update" | "stop" | "accounting-on" | "accounting-off";

export interface SessionValues {
  acctsessionid: string;
  /** The session's key in radacct: see acctUniqueId. */
  acctuniqueid: string;
  /** The key sessions had before it included the account (FreeRADIUS's own hash): see acctUniqueId. */
  formerAcctuniqueid: string;
  username: string;
  realm: string;
  nasipaddress: string;
  nasportid: string | null;
  nasporttype: string | null;
  acctauthentic: string | null;
  connectinfo: string | null;
  calledstationid: string;
  callingstationid: string;
  servicetype: string | null;
  framedprotocol: string | null;
  framedipaddress: string;
  framedipv6address: string;
  framedipv6prefix: string;
  framedinterfaceid: string;
  delegatedipv6prefix: string;
  /** Acct-Session-Time, seconds. */
  sessionTime: number;
  inputOctets: number;
  outputOctets: number;
  terminateCause: string;
  /** Event-Timestamp, or the time the packet arrived: Unix seconds. */
  eventTime: number;
}

const STATUS: Record<string, AcctStatus> = {
  start: "start",
  "1": "start",
  "interim-update": "interim-update",
  alive: "interim-update",
  "3": "interim-update",
  stop: "stop",
  "2": "stop",
  "accounting-on": "accounting-on",
  "7": "accounting-on",
  "accounting-off": "accounting-off",
  "8": "accounting-off",
};

export function acctStatus(request: readonly Pair[]): AcctStatus | null {
  const value = firstValue(request, "Acct-Status-Type")?.toLowerCase();
  return value === undefined ? null : (STATUS[value] ?? null);
}

function integer(request: readonly Pair[], attribute: string): number {
  const value = firstValue(request, attribute);
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : 0;
}

/** Octets with their gigawords: Acct-Input-Gigawords * 2^32 + Acct-Input-Octets. */
function octets(request: readonly Pair[], direction: "Input" | "Output"): number {
  return (
    integer(request, `Acct-${direction}-Gigawords`) * 2 ** 32 + integer(request, `Acct-${direction}-Octets`)
  );
}

const md5 = (text: string) => createHash("md5").update(text).digest("hex");

/**
 * FreeRADIUS's acct_unique policy (policy.d/accounting, without a Class from insert_acct_class):
 * MD5 over the attributes that identify one session on its NAS.
 */
export function freeradiusAcctUniqueId(request: readonly Pair[]): string {
  const text = (name: string) => firstValue(request, name) ?? "";
  const nas = text("NAS-IPv6-Address") || text("NAS-IP-Address");
  return md5(
    [
      text("User-Name"),
      text("Acct-Session-Id"),
      nas,
      text("NAS-Identifier"),
      text("NAS-Port-Id"),
      text("NAS-Port"),
    ].join(","),
  );
}

/**
 * The session's key in radacct (acctuniqueid, unique across the installation): FreeRADIUS's hash
 * hashed again with the account, "md5(<acct_unique>,<account id>)". The attributes alone do not
 * tell accounts apart (two accounts' access points can send the same private NAS-IP-Address,
 * NAS-Identifier and session ids), and the key must stay unique on its own: FreeRADIUS's queries
 * find sessions by it alone (its PostgreSQL ones with ON CONFLICT (AcctUniqueId)).
 * deploy/freeradius/wisp-site computes the same value, so both servers agree.
 */
export function acctUniqueId(request: readonly Pair[], accountId: number): string {
  return md5(`${freeradiusAcctUniqueId(request)},${accountId}`);
}

export function sessionValues(
  request: readonly Pair[],
  accountId: number,
  sourceAddress: string,
  now: number,
): SessionValues {
  const text = (name: string) => firstValue(request, name) ?? "";
  const optional = (name: string) => firstValue(request, name) ?? null;
  const timestamp = integer(request, "Event-Timestamp");
  return {
    acctsessionid: text("Acct-Session-Id"),
    acctuniqueid: acctUniqueId(request, accountId),
    formerAcctuniqueid: freeradiusAcctUniqueId(request),
    username: text("User-Name"),
    realm: text("Realm"),
    nasipaddress: text("NAS-IP-Address") || sourceAddress,
    nasportid: optional("NAS-Port-Id") ?? optional("NAS-Port"),
    nasporttype: optional("NAS-Port-Type"),
    acctauthentic: optional("Acct-Authentic"),
    connectinfo: optional("Connect-Info"),
    calledstationid: text("Called-Station-Id"),
    callingstationid: text("Calling-Station-Id"),
    servicetype: optional("Service-Type"),
    framedprotocol: optional("Framed-Protocol"),
    framedipaddress: text("Framed-IP-Address"),
    framedipv6address: text("Framed-IPv6-Address"),
    framedipv6prefix: text("Framed-IPv6-Prefix"),
    framedinterfaceid: text("Framed-Interface-Id"),
    delegatedipv6prefix: text("Delegated-IPv6-Prefix"),
    sessionTime: integer(request, "Acct-Session-Time"),
    inputOctets: octets(request, "Input"),
    outputOctets: octets(request, "Output"),
    terminateCause: text("Acct-Terminate-Cause"),
    eventTime: timestamp > 0 ? timestamp : now,
  };
}

// Where the RADIUS dictionaries come from, and the FreeRADIUS internal attributes they lack.
//
// node-radius-utils ships the FreeRADIUS dictionary tree from the 4.x era: its
// dictionary.freeradius.internal only holds Packet-Type (1000), Response-Packet-Type (1001) and
// Packet-Authentication-Vector (1002), and none of the check/control items (Cleartext-Password,
// Auth-Type, Expiration, Simultaneous-Use...). That file also clashes with the 3.2 numbering
// (Auth-Type is 1000 in 3.2), so the loader skips it and uses the table below instead.

import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { AttributeType } from "./dictionary.ts";

/** Directory holding the FreeRADIUS dictionary files shipped by node-radius-utils. */
export function dictionaryDirectory(): string {
  const pkg = createRequire(import.meta.url).resolve("node-radius-utils/package.json");
  return join(dirname(pkg), "dictionaries");
}

/** Wisp's own attributes (data quotas), beside this module; deploy/freeradius/configure.sh installs it too. */
export const WISP_DICTIONARY_FILE = join(import.meta.dirname, "dictionary.wisp");

/** Vendor attributes of FreeRADIUS 3.2 missing from node-radius-utils' tree (Wisp only, see the file). */
export const WISP_VENDORS_DICTIONARY_FILE = join(import.meta.dirname, "dictionary.wisp-vendors");

/** Name of the main dictionary file; everything else is reached through its $INCLUDEs. */
export const MAIN_DICTIONARY_FILE = "dictionary";

/** The shipped file replaced by FREERADIUS_INTERNAL_ATTRIBUTES (see the header comment). */
export const REPLACED_INTERNAL_FILE = "dictionary.freeradius.internal";

export interface InternalAttributeSpec {
  name: string;
  code: number;
  type: AttributeType;
  values?: readonly (readonly [string, number])[];
}

const NO_YES = [
  ["No", 0],
  ["Yes", 1],
] as const;

// RFC 2865 packet codes, as VALUEs of Packet-Type and Response-Packet-Type.
const PACKET_TYPES = [
  ["Access-Request", 1],
  ["Access-Accept", 2],
  ["Access-Reject", 3],
  ["Accounting-Request", 4],
  ["Accounting-Response", 5],
  ["Access-Challenge", 11],
  ["Status-Server", 12],
  ["Status-Client", 13],
  ["Disconnect-Request", 40],
  ["Disconnect-ACK", 41],
  ["Disconnect-NAK", 42],
  ["CoA-Request", 43],
  ["CoA-ACK", 44],
  ["CoA-NAK", 45],
] as const;

/**
 * The commonly used check/control items of FreeRADIUS 3.2, with the numbers and types of its
 * share/dictionary.freeradius.internal (attributes 500-503 may go in a reply list, 1000+ may not).
 * None of them is ever sent in a packet.
 */
export const FREERADIUS_INTERNAL_ATTRIBUTES: readonly InternalAttributeSpec[] = [
  { name: "Fall-Through", code: 500, type: "integer", values: NO_YES },
  { name: "Relax-Filter", code: 501, type: "integer", values: NO_YES },
  { name: "Exec-Program", code: 502, type: "string" },
  { name: "Exec-Program-Wait", code: 503, type: "string" },
  {
    name: "Auth-Type",
    code: 1000,
    type: "integer",
    // Accept and Reject come from the 3.2 dictionary. 3.2 creates the others at start-up from the
    // `authenticate { Auth-Type X {...} }` sections; their numbers here are the fixed ones of 2.x.
    values: [
      ["Reject", 4],
      ["Accept", 254],
      ["EAP", 6],
      ["PAP", 1024],
      ["CHAP", 1025],
      ["MS-CHAP", 1028],
    ],
  },
  { name: "Prefix", code: 1003, type: "string" },
  { name: "Suffix", code: 1004, type: "string" },
  { name: "Group", code: 1005, type: "string" },
  { name: "Crypt-Password", code: 1006, type: "string" },
  { name: "Add-Prefix", code: 1008, type: "string" },
  { name: "Add-Suffix", code: 1009, type: "string" },
  { name: "Expiration", code: 1010, type: "date" },
  { name: "Autz-Type", code: 1011, type: "integer", values: [["Local", 1]] },
  { name: "Acct-Type", code: 1012, type: "integer", values: [["Local", 1]] },
  { name: "Session-Type", code: 1013, type: "integer", values: [["Local", 1]] },
  {
    name: "Post-Auth-Type",
    code: 1014,
    type: "integer",
    values: [
      ["Local", 1],
      ["Reject", 2],
      ["Challenge", 3],
    ],
  },
  {
    name: "EAP-Type",
    code: 1018,
    type: "integer",
    values: [
      ["None", 0],
      ["Identity", 1],
      ["Notification", 2],
      ["NAK", 3],
      ["MD5-Challenge", 4],
      ["MD5", 4],
      ["OTP", 5],
      ["GTC", 6],
      ["TLS", 13],
      ["LEAP", 17],
      ["SIM", 18],
      ["TTLS", 21],
      ["AKA", 23],
      ["PEAP", 25],
      ["MSCHAPv2", 26],
      ["FAST", 43],
      ["AKA-Prime", 50],
      ["PWD", 52],
      ["TEAP", 55],
    ],
  },
  { name: "Client-Shortname", code: 1024, type: "string" },
  { name: "User-Category", code: 1029, type: "string" },
  { name: "Group-Name", code: 1030, type: "string" },
  { name: "Huntgroup-Name", code: 1031, type: "string" },
  { name: "Simultaneous-Use", code: 1034, type: "integer" },
  { name: "Strip-User-Name", code: 1035, type: "integer", values: NO_YES },
  { name: "Hint", code: 1040, type: "string" },
  { name: "Pam-Auth", code: 1041, type: "string" },
  { name: "Login-Time", code: 1042, type: "string" },
  { name: "Stripped-User-Name", code: 1043, type: "string" },
  { name: "Current-Time", code: 1044, type: "string" },
  { name: "Realm", code: 1045, type: "string" },
  { name: "Packet-Type", code: 1047, type: "integer", values: PACKET_TYPES },
  { name: "Proxy-To-Realm", code: 1048, type: "string" },
  { name: "Replicate-To-Realm", code: 1049, type: "string" },
  { name: "Acct-Unique-Session-Id", code: 1051, type: "string" },
  { name: "Client-IP-Address", code: 1052, type: "ipaddr" },
  { name: "LDAP-UserDN", code: 1053, type: "string" },
  { name: "NS-MTA-MD5-Password", code: 1054, type: "string" },
  { name: "SQL-User-Name", code: 1055, type: "string" },
  { name: "LM-Password", code: 1057, type: "octets" },
  { name: "NT-Password", code: 1058, type: "octets" },
  { name: "User-Profile", code: 1062, type: "string" },
  { name: "Pool-Name", code: 1073, type: "string" },
  { name: "Module-Success-Message", code: 1075, type: "string" },
  { name: "Module-Failure-Message", code: 1076, type: "string" },
  {
    name: "Response-Packet-Type",
    code: 1080,
    type: "integer",
    values: [...PACKET_TYPES, ["Do-Not-Respond", 256]],
  },
  { name: "Digest-HA1", code: 1081, type: "string" },
  { name: "MS-CHAP-Use-NTLM-Auth", code: 1082, type: "integer", values: NO_YES },
  { name: "Packet-Src-IP-Address", code: 1084, type: "ipaddr" },
  { name: "Packet-Dst-IP-Address", code: 1085, type: "ipaddr" },
  { name: "Packet-Src-Port", code: 1086, type: "integer" },
  { name: "Packet-Dst-Port", code: 1087, type: "integer" },
  { name: "SHA2-Password", code: 1092, type: "octets" },
  { name: "SHA-Password", code: 1093, type: "octets" },
  { name: "SHA1-Password", code: 1093, type: "octets" },
  { name: "SSHA-Password", code: 1094, type: "octets" },
  { name: "SSHA1-Password", code: 1094, type: "octets" },
  { name: "MD5-Password", code: 1095, type: "octets" },
  { name: "SMD5-Password", code: 1096, type: "octets" },
  { name: "Virtual-Server", code: 1099, type: "string" },
  { name: "Cleartext-Password", code: 1100, type: "string" },
  { name: "Password-With-Header", code: 1101, type: "string" },
  { name: "MS-CHAP-Password", code: 1133, type: "string" },
  { name: "Stripped-User-Domain", code: 1138, type: "string" },
  { name: "Called-Station-SSID", code: 1139, type: "string" },
  { name: "SSHA2-224-Password", code: 1177, type: "octets" },
  { name: "SSHA2-256-Password", code: 1178, type: "octets" },
  { name: "SSHA2-384-Password", code: 1179, type: "octets" },
  { name: "SSHA2-512-Password", code: 1180, type: "octets" },
  { name: "PBKDF2-Password", code: 1181, type: "octets" },
  // In the 3.2 dictionary, but rlm_pap 3.2 checks none of them (SHA-3 only inside PBKDF2-Password).
  { name: "SSHA3-224-Password", code: 1182, type: "octets" },
  { name: "SSHA3-256-Password", code: 1183, type: "octets" },
  { name: "SSHA3-384-Password", code: 1184, type: "octets" },
  { name: "SSHA3-512-Password", code: 1185, type: "octets" },
  // Not in any 3.2 dictionary file: rlm_sqlcounter creates its limit (check) and counter attributes
  // as integer64 at start-up, numbered at run time. The names are those of the stock
  // mods-available/sqlcounter; the numbers are Wisp's, from the 3000-3999 site-local range.
  { name: "Max-Daily-Session", code: 3000, type: "integer64" },
  { name: "Max-Monthly-Session", code: 3001, type: "integer64" },
  { name: "Max-All-Session", code: 3002, type: "integer64" },
  { name: "Expire-After", code: 3003, type: "integer64" },
  { name: "Daily-Session-Time", code: 3004, type: "integer64" },
  { name: "Monthly-Session-Time", code: 3005, type: "integer64" },
  { name: "Max-All-Session-Time", code: 3006, type: "integer64" },
  { name: "Expire-After-Initial-Login", code: 3007, type: "integer64" },
  // rlm_sql registers SQL-Group (membership test in check items) at start-up, also unnumbered.
  { name: "SQL-Group", code: 3008, type: "string" },
];

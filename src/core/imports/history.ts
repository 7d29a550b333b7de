// History rows (radacct sessions, radpostauth attempts) from the source, checked and put in the
// shape of Wisp's tables: column widths of Wisp's schema (PostgreSQL enforces them), addresses that
// are addresses (PostgreSQL's inet), times as each database stores them, and Wisp's own columns
// (user, network, MACs, SSID) filled in as its RADIUS server fills them.
import type { Insertable } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { RadacctTable, RadpostauthTable } from "../../db/schema.ts";
import { normalizeMac, parseCalledStation } from "../aaa/stations.ts";
import { parseIp, parseNetwork } from "../shared/ip.ts";
import type { SourceRow } from "./source-db.ts";
import { RADACCT_NUMBER_COLUMNS, RADACCT_TEXT_COLUMNS, RADACCT_TIME_COLUMNS } from "./source-repo.ts";

/** Widths of Wisp's radacct text columns (migration 002). */
const RADACCT_WIDTH: Record<(typeof RADACCT_TEXT_COLUMNS)[number], number> = {
  acctsessionid: 64,
  acctuniqueid: 32,
  username: 64,
  realm: 64,
  nasipaddress: 45,
  nasportid: 32,
  nasporttype: 32,
  acctauthentic: 32,
  connectinfo_start: 128,
  connectinfo_stop: 128,
  calledstationid: 50,
  callingstationid: 50,
  acctterminatecause: 32,
  servicetype: 32,
  framedprotocol: 32,
  framedipaddress: 45,
  framedipv6address: 45,
  framedipv6prefix: 45,
  framedinterfaceid: 44,
  delegatedipv6prefix: 45,
  class: 64,
};
const ADDRESSES = new Set(["nasipaddress", "framedipaddress", "framedipv6address"]);
const PREFIXES = new Set(["framedipv6prefix", "delegatedipv6prefix"]);
/** NOT NULL DEFAULT '' on SQLite (FreeRADIUS's SQLite schema); nullable on PostgreSQL. */
const SQLITE_BLANK = new Set([
  "acctsessionid",
  "acctuniqueid",
  "username",
  "nasipaddress",
  "calledstationid",
  "callingstationid",
  "acctterminatecause",
  "framedipaddress",
  "framedipv6address",
  "framedipv6prefix",
  "framedinterfaceid",
  "delegatedipv6prefix",
]);

const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);

/** PostgreSQL's inet reads back as "10.0.0.1/32": the address alone for a single host. */
function addressText(value: string): string {
  return value.replace(/\/(32|128)$/, "");
}

function addressProblem(column: string, value: string): string | null {
  if (value === "") return null;
  if (ADDRESSES.has(column))
    return parseIp(value) ? null : `${column} "${value.slice(0, 50)}" is not an IP address`;
  try {
    parseNetwork(value);
    return null;
  } catch {
    return `${column} "${value.slice(0, 50)}" is not an IPv6 prefix`;
  }
}

/** Unix seconds from the source, or null (NULL, zero dates and nonsense alike). */
function seconds(value: unknown): number | null {
  if (value === null || value === undefined || value === "") return null;
  const n = Math.floor(Number(value));
  return Number.isFinite(n) && n > 0 ? n : null;
}

function time(dialect: DialectName, value: number | null): number | Date | null {
  if (value === null) return null;
  return dialect === "sqlite" ? value : new Date(value * 1000);
}

export interface HistoryContext {
  dialect: DialectName;
  accountId: number;
  userIds: Map<string, number>;
  networkIds: Map<string, number>;
}

function radacctText(row: SourceRow, dialect: DialectName, out: Record<string, unknown>): string | null {
  for (const column of RADACCT_TEXT_COLUMNS) {
    let value = text(row[column]);
    if (value !== null && (ADDRESSES.has(column) || PREFIXES.has(column))) value = addressText(value);
    if (value !== null && value.length > RADACCT_WIDTH[column]) {
      return `${column} is longer than ${RADACCT_WIDTH[column]} characters`;
    }
    const bad =
      value === null
        ? null
        : ADDRESSES.has(column) || PREFIXES.has(column)
          ? addressProblem(column, value)
          : null;
    if (bad) return bad;
    if (dialect === "postgres" && value === "" && (ADDRESSES.has(column) || PREFIXES.has(column)))
      value = null;
    if (dialect === "sqlite" && value === null && SQLITE_BLANK.has(column)) value = "";
    out[column] = value;
  }
  return null;
}

/** A radacct row as Wisp stores it, or why it cannot be. */
export function sessionRow(row: SourceRow, context: HistoryContext): Insertable<RadacctTable> | string {
  const out: Record<string, unknown> = {};
  const bad = radacctText(row, context.dialect, out);
  if (bad) return bad;
  if (!out.acctuniqueid) return "acctuniqueid is empty";
  if (!out.nasipaddress) return "nasipaddress is empty";
  for (const column of RADACCT_NUMBER_COLUMNS) {
    const value = row[column];
    if (value === null || value === undefined || value === "") {
      out[column] = null;
      continue;
    }
    const n = Number(value);
    if (!Number.isSafeInteger(n)) return `${column} ${String(value).slice(0, 30)} is not a whole number`;
    out[column] = n;
  }
  for (const column of RADACCT_TIME_COLUMNS) out[column] = time(context.dialect, seconds(row[column]));
  const username = (out.username as string | null) ?? "";
  const station = parseCalledStation((out.calledstationid as string | null) ?? undefined);
  return {
    ...(out as unknown as Insertable<RadacctTable>),
    account_id: context.accountId,
    user_id: context.userIds.get(username) ?? null,
    network_id: context.networkIds.get(out.nasipaddress as string) ?? null,
    client_mac: normalizeMac((out.callingstationid as string | null) ?? undefined),
    ap_mac: station.apMac,
    ssid: station.ssid?.slice(0, 64) ?? null,
  };
}

const POSTAUTH_WIDTH = { username: 64, reply: 32, calledstationid: 50, callingstationid: 50, class: 64 };

/** A radpostauth row as Wisp stores it (never the password tried), or why it cannot be. */
export function attemptRow(row: SourceRow, context: HistoryContext): Insertable<RadpostauthTable> | string {
  const values: Record<string, string | null> = {};
  for (const [column, width] of Object.entries(POSTAUTH_WIDTH)) {
    const value = text(row[column]);
    if (value !== null && value.length > width) return `${column} is longer than ${width} characters`;
    values[column] = value;
  }
  const at = seconds(row.authdate);
  if (at === null) return "authdate is empty or not a time";
  const blank = (v: string | null) => (context.dialect === "sqlite" ? (v ?? "") : v);
  const username = values.username ?? "";
  const station = parseCalledStation(values.calledstationid ?? undefined);
  return {
    username,
    pass: "",
    reply: blank(values.reply ?? null),
    calledstationid: blank(values.calledstationid ?? null),
    callingstationid: blank(values.callingstationid ?? null),
    authdate:
      context.dialect === "sqlite"
        ? new Date(at * 1000).toISOString().slice(0, 19).replace("T", " ")
        : new Date(at * 1000),
    class: values.class ?? null,
    account_id: context.accountId,
    user_id: context.userIds.get(username) ?? null,
    client_mac: normalizeMac(values.callingstationid ?? undefined),
    ap_mac: station.apMac,
    ssid: station.ssid?.slice(0, 64) ?? null,
  };
}

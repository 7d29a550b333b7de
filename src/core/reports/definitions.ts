// The three reports: their ids, titles and columns, in the order the JSON rows and CSV files have them.
import { sortValues } from "../shared/sort.ts";

export const REPORT_IDS = [110, 115, 120] as const;
export type ReportId = (typeof REPORT_IDS)[number];

/** 110: one row per authentication attempt, by its time. */
export interface AuthRequestRow {
  time: string;
  username: string;
  user_id: number | null;
  result: string;
  reason: string | null;
  client_mac: string | null;
  ap_mac: string | null;
  ssid: string | null;
  nas_ip: string | null;
  nas_identifier: string | null;
  network_id: number | null;
  /** PAP, CHAP, MSCHAPv2, PEAP, TTLS, TLS; null for attempts recorded before (migration 018). */
  method: string | null;
  /** EAP: the outer identity when it differs from the user's name. */
  outer_identity: string | null;
  /** The name of the account's device with the client's MAC, when there is one (issue 24). */
  device_name: string | null;
  /** The policy that decided the attempt (migration 030): null with a name is the default rule. */
  policy_id: number | null;
  /** Its name then; null: no policy was evaluated (the credential check refused first). */
  policy_name: string | null;
}

/** 115: one row per user created in the window, with totals over all of the user's sessions. */
export interface UserDataRow {
  user_id: number;
  username: string;
  email: string;
  fullname: string;
  status: string;
  created: string;
  last_seen: string | null;
  sessions: number;
  session_time: number;
  input_bytes: number;
  output_bytes: number;
}

/** 120: one row per session, by its start. */
export interface SessionRow {
  session_id: number;
  username: string;
  user_id: number | null;
  start: string;
  stop: string | null;
  duration: number | null;
  input_bytes: number | null;
  output_bytes: number | null;
  client_mac: string | null;
  ap_mac: string | null;
  ssid: string | null;
  nas_ip: string | null;
  framed_ip: string | null;
  terminate_cause: string | null;
}

export interface ReportRows {
  110: AuthRequestRow;
  115: UserDataRow;
  120: SessionRow;
}

export type AnyReportRow = ReportRows[ReportId];

export const REPORT_TITLES: Record<ReportId, string> = {
  110: "Authentication requests",
  115: "User data",
  120: "Session data",
};

export const REPORT_COLUMNS = {
  110: [
    "time",
    "username",
    "user_id",
    "result",
    "reason",
    "client_mac",
    "ap_mac",
    "ssid",
    "nas_ip",
    "nas_identifier",
    "network_id",
    "method",
    "outer_identity",
    "device_name",
    "policy_id",
    "policy_name",
  ],
  115: [
    "user_id",
    "username",
    "email",
    "fullname",
    "status",
    "created",
    "last_seen",
    "sessions",
    "session_time",
    "input_bytes",
    "output_bytes",
  ],
  120: [
    "session_id",
    "username",
    "user_id",
    "start",
    "stop",
    "duration",
    "input_bytes",
    "output_bytes",
    "client_mac",
    "ap_mac",
    "ssid",
    "nas_ip",
    "framed_ip",
    "terminate_cause",
  ],
} as const satisfies { [R in ReportId]: readonly (keyof ReportRows[R])[] };

/**
 * What each report's pages may be sorted by: `sort=<field>` ascending, `sort=-<field>` descending.
 * The first field, descending, is the default (newest first), and the order of files.
 */
export const REPORT_SORT_FIELDS = {
  110: ["time", "username", "result"],
  115: ["created", "username", "email", "status"],
  120: ["start", "stop", "duration", "username", "input_bytes", "output_bytes"],
} as const satisfies { [R in ReportId]: readonly (typeof REPORT_COLUMNS)[R][number][] };

export type ReportSortField<R extends ReportId = ReportId> = (typeof REPORT_SORT_FIELDS)[R][number];

export interface ReportSort<R extends ReportId = ReportId> {
  field: ReportSortField<R>;
  descending: boolean;
}

/** Every value `sort` accepts, as every list has them (core/shared/sort.ts). */
export function reportSortValues(report: ReportId): string[] {
  return sortValues<string>(REPORT_SORT_FIELDS[report]);
}

export function isReportId(value: number): value is ReportId {
  return (REPORT_IDS as readonly number[]).includes(value);
}

/** Synchronous reports cover at most this many seconds; larger windows go to a file. */
export const SYNC_WINDOW_SECONDS = 4 * 3600;
/** How long a finished report file is kept. */
export const RESULT_TTL_SECONDS = 24 * 3600;

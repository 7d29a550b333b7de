// What a valid plan looks like. Figures are whole numbers; null means no limit of that kind.
import { MAX_QUOTA_OCTETS, MAX_QUOTA_SECONDS } from "../aaa/quotas.ts";

export const MAX_PLAN_NAME = 64;
export const MAX_PLAN_DESCRIPTION = 200;
export const MAX_PLAN_ROLE = 64;
/** 100 Gbit/s, in kbit/s: anything faster is a typing error. */
export const MAX_BANDWIDTH_KBPS = 100_000_000;
/** Octets in plus out, 2^53 - 1 (quotas.ts): the largest figure JSON and JavaScript keep exact. */
export const MAX_DATA_QUOTA = MAX_QUOTA_OCTETS;
/** Seconds: ten years (quotas.ts). */
export const MAX_TIME_QUOTA = MAX_QUOTA_SECONDS;
export const MAX_VALIDITY = MAX_QUOTA_SECONDS;
/** Sessions open at once (Simultaneous-Use). */
export const MAX_DEVICES = 10_000;

/**
 * What a quota counts over: the day or the month (local time, as rlm_sqlcounter resets), or the
 * plan's validity: every session of the user, which with validity from first use is the sessions
 * since the first one (rlm_sqlcounter's noresetcounter, Max-All-Session).
 */
export const PLAN_PERIODS = ["day", "month", "validity"] as const;
export type PlanPeriod = (typeof PLAN_PERIODS)[number];

/** A role or filter name as gateways accept them: letters, digits and - _ . : */
export const ROLE_PATTERN = "^[A-Za-z0-9_.:-]*$";
export const ROLE_RULE = `must be at most ${MAX_PLAN_ROLE} letters, digits or - _ . :`;

export const PLAN_SORT_FIELDS = ["id", "name", "created", "updated"] as const;
export type PlanSortField = (typeof PLAN_SORT_FIELDS)[number];

/** The figures of a plan, as stored and as the API shows them. */
export interface PlanLimits {
  name: string;
  download_kbps: number | null;
  upload_kbps: number | null;
  data_quota: number | null;
  data_period: PlanPeriod | null;
  time_quota: number | null;
  time_period: PlanPeriod | null;
  validity: number | null;
  devices: number | null;
  role: string;
}

function period(value: string | null): PlanPeriod | null {
  return (PLAN_PERIODS as readonly string[]).includes(value ?? "") ? (value as PlanPeriod) : null;
}

const figure = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

/** A stored plan row's figures (PostgreSQL returns bigint columns as text). */
export function planLimitsOf(row: {
  name: string;
  download_kbps: unknown;
  upload_kbps: unknown;
  data_quota: unknown;
  data_period: string | null;
  time_quota: unknown;
  time_period: string | null;
  validity: unknown;
  devices: unknown;
  role: string;
}): PlanLimits {
  return {
    name: row.name,
    download_kbps: figure(row.download_kbps),
    upload_kbps: figure(row.upload_kbps),
    data_quota: figure(row.data_quota),
    data_period: period(row.data_period),
    time_quota: figure(row.time_quota),
    time_period: period(row.time_period),
    validity: figure(row.validity),
    devices: figure(row.devices),
    role: row.role ?? "",
  };
}

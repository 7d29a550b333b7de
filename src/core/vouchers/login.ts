// Logging in with a voucher: the code is both username and password, ignoring case. Validity
// starts at the first login; usage_limit counts distinct client devices (MACs); each session is
// capped by session_timeout and by the voucher's expiry. Stock FreeRADIUS cannot express these
// rules (deploy/freeradius/README.md says so); this is where they live.
import type { Kysely } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { applyCounters, type Credentials, simultaneousUseProblem } from "../aaa/decide.ts";
import { ntPasswordHash } from "../aaa/nt-hash.ts";
import type { Pair } from "../aaa/pairs.ts";
import { dataReply } from "../aaa/quotas.ts";
import { sessionCounters, sumOctets } from "../aaa/repo.ts";
import type { VoucherCheck, VoucherLogin } from "../aaa/service.ts";
import { recordAudit } from "../audit/record.ts";
import { insertEvents } from "../events/repo.ts";
import type { GatewayVendor } from "../networks/rules.ts";
import { planControl, planReply } from "../plans/attributes.ts";
import type { PlanLimits } from "../plans/rules.ts";
import { sameOctets } from "../shared/secrets.ts";
import { isoNow } from "../shared/time.ts";
import { VoucherLoginRepo } from "./login-repo.ts";
import type { VoucherRow } from "./repo.ts";
import { MAX_CODE } from "./rules.ts";
import { effectiveStatus } from "./service.ts";

const CODE = new RegExp(`^[A-Za-z0-9]{1,${MAX_CODE}}$`);
/** Logins without a Calling-Station-Id all count as this one device. */
const UNKNOWN_DEVICE = "unknown";

/**
 * The password octets against the code (A-Z 0-9), ignoring the case of ASCII letters only: Unicode
 * case mapping would let other characters pass ("ſ".toUpperCase() is "S", "ı" gives "I").
 */
function sameCode(given: Buffer, code: string): boolean {
  const upper = Buffer.from(given);
  for (let i = 0; i < upper.length; i++) if (upper[i]! >= 0x61 && upper[i]! <= 0x7a) upper[i]! -= 0x20;
  return sameOctets(upper, Buffer.from(code));
}

function passwordMatches(credentials: Credentials, code: string): boolean {
  if (credentials.password !== undefined) return sameCode(credentials.password, code);
  // CHAP and MS-CHAPv2 hide what was typed: try the code as stored and in lower case.
  if (credentials.chap) return credentials.chap(code) || credentials.chap(code.toLowerCase());
  const mschapv2 = credentials.mschapv2;
  if (mschapv2) return mschapv2(ntPasswordHash(code)) || mschapv2(ntPasswordHash(code.toLowerCase()));
  return false;
}

/** What the rules say about one login with a voucher, before anything is written. */
export type VoucherVerdict =
  | {
      accepted: false;
      reason: string /** The stored status lags the clock: store `expired`. */;
      lapsed: boolean;
    }
  | {
      accepted: true;
      first: boolean;
      expiresAt: number;
      /** The device is new to the voucher and takes a slot. */
      newDevice: boolean;
      devicesUsed: number;
      nextStatus: string;
    };

/**
 * The voucher rules, once: the code as password, disabled/expired, and the device slots. Used by
 * the RADIUS login (which then writes the outcome) and by the captive portal's pre-check (which
 * writes nothing: the gateway's RADIUS request does).
 */
export function judgeVoucher(
  row: VoucherRow,
  credentials: Credentials,
  deviceKnown: boolean,
  now: number,
): VoucherVerdict {
  const reject = (reason: string, lapsed = false) => ({ accepted: false as const, reason, lapsed });
  if (!passwordMatches(credentials, row.code)) return reject("wrong password");
  const at = isoNow(new Date(now * 1000));
  const status = effectiveStatus(row, at);
  if (status === "disabled") return reject("voucher disabled");
  if (status === "expired") return reject("voucher expired", row.status !== "expired");
  const first = row.status === "unused";
  const expiresAt = first ? now + row.validity : Math.floor(Date.parse(row.expires ?? at) / 1000);
  let devicesUsed = row.devices_used;
  let nextStatus = first ? "active" : row.status;
  if (!deviceKnown) {
    if (row.usage_limit > 0 && devicesUsed >= row.usage_limit) {
      return reject("voucher already used on its maximum number of devices");
    }
    devicesUsed++;
    if (row.usage_limit > 0 && devicesUsed >= row.usage_limit) nextStatus = "exhausted";
  }
  return { accepted: true, first, expiresAt, newDevice: !deviceKnown, devicesUsed, nextStatus };
}

export function createVoucherCheck(db: Kysely<Schema>, dialect: DialectName): VoucherCheck {
  const repo = new VoucherLoginRepo(dialect);
  return async ({ accountId, code: username, credentials, clientMac, now }) => {
    if (!CODE.test(username)) return null;
    const row = await repo.findForCheck(db, accountId, username.toUpperCase());
    if (!row) return null;
    const known = await repo.knowsDevice(db, accountId, row.id, clientMac ?? UNKNOWN_DEVICE);
    const verdict = judgeVoucher(row, credentials, known, now);
    return {
      voucherId: row.id,
      accepted: verdict.accepted,
      reason: verdict.accepted ? null : verdict.reason,
    };
  };
}

/**
 * A batch's plan on a voucher login: its quotas, validity and devices counted over the voucher's
 * sessions (its code in any case), with the same rules as a user's (decide.ts); its bandwidth in
 * the network vendor's attributes. The reply, or why the login is refused.
 */
async function applyPlan(
  db: Kysely<Schema>,
  dialect: DialectName,
  input: { accountId: number; spellings: string[]; now: number; vendor: GatewayVendor },
  plan: PlanLimits,
  reply: Pair[],
): Promise<{ accepted: true; reply: Pair[] } | { accepted: false; reason: string }> {
  const control = planControl(plan);
  const counters = sessionCounters(db, dialect, input.accountId, input.spellings);
  const counted = await applyCounters(control, reply, counters, input.now);
  if (!counted.accepted) return counted;
  const busy = await simultaneousUseProblem(control, counters);
  if (busy !== null) return { accepted: false, reason: busy };
  return { accepted: true, reply: [...counted.reply, ...planReply(plan, input.vendor)] };
}

export function createVoucherLogin(dialect: DialectName): VoucherLogin {
  const repo = new VoucherLoginRepo(dialect);
  return async ({ accountId, code: username, credentials, clientMac, now, vendor, run }) => {
    if (!CODE.test(username)) return null;
    const code = username.toUpperCase();
    return run(async (trx) => {
      const row = await repo.findForLogin(trx, accountId, code);
      if (!row) return null;
      const mac = clientMac ?? UNKNOWN_DEVICE;
      const verdict = judgeVoucher(
        row,
        credentials,
        await repo.knowsDevice(trx, accountId, row.id, mac),
        now,
      );
      // data_limit: octets in plus out over every session of the voucher (its code as username).
      const spellings = [...new Set([code, username, code.toLowerCase()])];
      let dataLeft: number | undefined;
      if (verdict.accepted && row.data_limit !== null && row.data_limit !== undefined) {
        dataLeft = Number(row.data_limit) - (await sumOctets(trx, dialect, accountId, spellings, 0));
        if (dataLeft <= 0) {
          return { voucherId: row.id, accepted: false, reply: [], reason: "quota exhausted: voucher data" };
        }
      }
      if (!verdict.accepted) {
        if (verdict.lapsed) await repo.update(trx, accountId, row.id, { status: "expired" });
        return { voucherId: row.id, accepted: false, reply: [], reason: verdict.reason };
      }
      const { first, expiresAt } = verdict;
      const sessionTimeout = Math.min(row.session_timeout ?? Number.POSITIVE_INFINITY, expiresAt - now);
      let reply: Pair[] = [{ attribute: "Session-Timeout", op: "=", value: String(sessionTimeout) }];
      // The batch's plan, checked before anything is written: a refusal leaves the voucher unused.
      const plan = await repo.batchPlan(trx, accountId, row.batch_id);
      if (plan) {
        const planned = await applyPlan(
          trx,
          dialect,
          { accountId, spellings, now, vendor: vendor ?? "generic" },
          plan,
          reply,
        );
        if (!planned.accepted)
          return { voucherId: row.id, accepted: false, reply: [], reason: planned.reason };
        reply = planned.reply;
      }
      const at = isoNow(new Date(now * 1000));
      if (verdict.newDevice) await repo.addDevice(trx, accountId, row.id, mac, at);
      const expires = isoNow(new Date(expiresAt * 1000));
      await repo.update(trx, accountId, row.id, {
        status: verdict.nextStatus,
        devices_used: verdict.devicesUsed,
        ...(first ? { first_used: at, expires } : {}),
      });
      if (first) {
        const data = { voucher_id: row.id, code, batch_id: row.batch_id, expires, client_mac: clientMac };
        await insertEvents(trx, [{ accountId, kind: "voucher.activated", data }], at);
        await recordAudit(trx, {
          accountId,
          resource: "voucher",
          id: row.id,
          action: "activate",
          after: data,
        });
      }
      return {
        voucherId: row.id,
        accepted: true,
        reply: dataLeft === undefined ? reply : dataReply(reply, dataLeft),
        reason: null,
      };
    });
  };
}

// A guest's sign-in on a portal page, checked with the RADIUS rules before the guest is handed to the
// gateway (AaaService.precheck: the same decision, nothing recorded, no voucher activated). What the
// guest is told is decided here: a code's problem may be named (the code is the secret), but a
// username's never is (an unknown user and a wrong password read the same).
import { createHash, randomBytes } from "node:crypto";
import type { AaaService } from "../aaa/service.ts";
import { hasControlCharacters } from "../shared/text.ts";
import type { UsersService } from "../users/service.ts";
import type { VouchersService } from "../vouchers/service.ts";
import type { PortalMethod } from "./rules.ts";
import type { GuestPortal, PortalsService } from "./service.ts";

export type SignInProblem =
  | "invalid_code"
  | "code_expired"
  | "code_used_up"
  | "wrong_credentials"
  | "already_online"
  | "method_off";

export type SignInResult =
  | { ok: true; username: string; password: string }
  | { ok: false; problem: SignInProblem };

export interface SignInInput {
  method: PortalMethod;
  /** voucher: the code as typed (spaces and dashes are ignored). */
  code?: string;
  username?: string;
  password?: string;
  clientMac: string | null;
}

const VOUCHER_PROBLEMS: Record<string, SignInProblem> = {
  "voucher expired": "code_expired",
  "voucher already used on its maximum number of devices": "code_used_up",
};

export async function checkSignIn(
  aaa: AaaService,
  portal: GuestPortal,
  input: SignInInput,
  now?: number,
): Promise<SignInResult> {
  if (!portal.methods.includes(input.method)) return { ok: false, problem: "method_off" };
  if (input.method === "voucher") {
    // The code is both username and password (src/core/vouchers/login.ts).
    const code = (input.code ?? "").replace(/[\s-]/g, "");
    if (!/^[A-Za-z0-9]{1,16}$/.test(code)) return { ok: false, problem: "invalid_code" };
    const verdict = await aaa.precheck(
      portal.accountId,
      { username: code, password: code, clientMac: input.clientMac },
      now,
    );
    if (verdict.accepted && verdict.voucher) return { ok: true, username: code, password: code };
    const problem = verdict.voucher ? VOUCHER_PROBLEMS[verdict.reason ?? ""] : undefined;
    return { ok: false, problem: problem ?? "invalid_code" };
  }
  const username = (input.username ?? "").trim();
  const password = input.password ?? "";
  if (username === "" || password === "" || username.length > 64 || password.length > 128) {
    return { ok: false, problem: "wrong_credentials" };
  }
  const verdict = await aaa.precheck(
    portal.accountId,
    { username, password, clientMac: input.clientMac },
    now,
  );
  if (verdict.accepted && !verdict.voucher) return { ok: true, username, password };
  // Only a reason reached after the password matched may be told apart (decide.ts checks
  // Simultaneous-Use last); everything else reads the same, whether or not the user exists.
  if (verdict.reason === "already logged in") return { ok: false, problem: "already_online" };
  return { ok: false, problem: "wrong_credentials" };
}

// Click-through and registration: Wisp issues the credential itself. Both need the terms accepted.

export type GuestProblem = "terms_required" | "bad_name" | "bad_email" | "bad_phone" | "guest_refused";

export type GuestResult =
  | { ok: true; username: string; password: string }
  | { ok: false; problem: GuestProblem | "method_off" };

export interface GuestDeps {
  aaa: AaaService;
  vouchers: VouchersService;
  users: UsersService;
  portals: PortalsService;
}

/**
 * Click-through: a one-time voucher (one device, the portal's validity from first use and session
 * limit), handed to the gateway as username and password. A voucher rather than a user because the
 * vouchers core already has exactly these rules (validity from first use, per-device limit,
 * Session-Timeout) and reports; it is created only after the terms are accepted.
 */
export async function clickThrough(
  deps: GuestDeps,
  portal: GuestPortal,
  input: { termsAccepted: boolean },
): Promise<GuestResult> {
  if (!portal.methods.includes("clickthrough")) return { ok: false, problem: "method_off" };
  if (!input.termsAccepted) return { ok: false, problem: "terms_required" };
  const voucher = await deps.vouchers.create(portal.accountId, {
    validity: portal.clickthrough.validity,
    usage_limit: 1,
    session_timeout: portal.clickthrough.sessionTimeout,
  });
  return { ok: true, username: voucher.code, password: voucher.code };
}

export const MAX_GUEST_NAME = 100;
export const MAX_GUEST_EMAIL = 254;
/** A plain address: RFC 5322 atext (and dots) before the @, a DNS name with a dot after it. */
const GUEST_EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const GUEST_PHONE = /^\+?[0-9 ().-]{5,24}$/;

/** The portal's username for an email: the same guest comes back to the same user. */
export function guestUsername(portalId: number, email: string): string {
  const digest = createHash("sha256").update(`${portalId}\n${email}`).digest("hex").slice(0, 16);
  return `guest-${portalId}-${digest}`;
}

export type GuestFields = { name: string; email: string; phone: string };

/** The registration form's fields, trimmed and checked; the email lower-cased. */
export function checkGuestFields(input: {
  name: string;
  email: string;
  phone: string;
  termsAccepted: boolean;
}): { ok: true; guest: GuestFields } | { ok: false; problem: GuestProblem } {
  const name = input.name.trim();
  const email = input.email.trim().toLowerCase();
  const phone = input.phone.trim();
  if (name === "" || name.length > MAX_GUEST_NAME || hasControlCharacters(name) || /[<>]/.test(name)) {
    return { ok: false, problem: "bad_name" };
  }
  if (email.length > MAX_GUEST_EMAIL || !GUEST_EMAIL.test(email)) return { ok: false, problem: "bad_email" };
  if (phone !== "" && !GUEST_PHONE.test(phone)) return { ok: false, problem: "bad_phone" };
  if (!input.termsAccepted) return { ok: false, problem: "terms_required" };
  return { ok: true, guest: { name, email, phone } };
}

/**
 * Registration: a user in the portal's guest group with a generated password (handed to the
 * gateway, never shown) expiring after the portal's registration validity. One email registers one
 * guest per portal: registering again renews that guest (new password, new expiry) rather than
 * creating another, and the page reads the same either way, so it tells no one whether an email
 * was known. A portal that verifies guests (core/guests) issues them through issueGuest once verified.
 */
export async function registerGuest(
  deps: GuestDeps,
  portal: GuestPortal,
  input: { name: string; email: string; phone: string; termsAccepted: boolean; clientMac: string | null },
  now = Math.floor(Date.now() / 1000),
): Promise<GuestResult> {
  if (!portal.methods.includes("registration")) return { ok: false, problem: "method_off" };
  const checked = checkGuestFields(input);
  if (!checked.ok) return checked;
  return issueGuest(deps, portal, checked.guest, {
    expiration: now + portal.registration.validity,
    clientMac: input.clientMac,
    now,
  });
}

/** Creates or renews the guest's user (a new password) and checks it with the RADIUS rules. */
export async function issueGuest(
  deps: GuestDeps,
  portal: GuestPortal,
  guest: GuestFields,
  options: { expiration: number; clientMac: string | null; now: number; event?: Record<string, unknown> },
): Promise<GuestResult> {
  const groupname = await deps.portals.guestGroupName(portal);
  if (!groupname) return { ok: false, problem: "method_off" };
  const username = guestUsername(portal.id, guest.email);
  const password = randomBytes(12).toString("base64url");
  await deps.users.registerGuest(portal.accountId, {
    username,
    email: guest.email,
    fullname: guest.name,
    password,
    groupname,
    expiration: options.expiration,
    event: { portal_id: portal.id, phone: guest.phone, ...options.event },
    origin: {
      method: typeof options.event?.verification === "string" ? options.event.verification : "registration",
      portalId: portal.id,
      clientMac: options.clientMac,
    },
  });
  // The same rules as RADIUS: a guest the operator disabled, or one online on too many devices,
  // is refused here (the same words for both).
  const verdict = await deps.aaa.precheck(
    portal.accountId,
    { username, password, clientMac: options.clientMac },
    options.now,
  );
  if (!verdict.accepted) return { ok: false, problem: "guest_refused" };
  return { ok: true, username, password };
}

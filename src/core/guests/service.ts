// Verified guests (issue 27): a registration on a portal that verifies becomes a verification in
// progress, reached by the guest through a page of its own (/portal/<id>/guest/<token>); it is
// settled by a code typed there (email or SMS), an emailed link, or a sponsor's decision, and only
// then is the guest's user made and handed to the gateway. Nothing is granted before that but the
// optional short pre-verification login that lets the guest reach their mailbox.
import type { AaaService } from "../aaa/service.ts";
import type { NewJob } from "../jobs/queue.ts";
import type { GuestPortal, PortalsService } from "../portals/service.ts";
import { checkGuestFields, type GuestProblem, type GuestResult, issueGuest } from "../portals/signin.ts";
import type { SessionsService } from "../sessions/create.ts";
import type { UsersService } from "../users/service.ts";
import type { VouchersService } from "../vouchers/service.ts";
import {
  codeDigest,
  newToken,
  recipientDigest,
  sameDigest,
  TOKEN_PATTERN,
  tokenDigest,
  typedCode,
} from "./codes.ts";
import { type DeliveryDeps, DeliveryError, deliver } from "./deliver.ts";
import { cooldownWait, sendWait } from "./limits.ts";
import type { GuestsRepo, VerificationRow } from "./repo.ts";
import { isEmail, PREVERIFY_PER_DEVICE_DAY, REQUEST_LIFETIME, type VerificationKind } from "./rules.ts";

export const DELIVER_JOB = "guest.deliver";
/** Seconds before each retry of a message that did not go out; then it is given up. */
export const DELIVERY_RETRIES = [30, 120, 600, 1_800];

export type StartProblem =
  | GuestProblem
  | "method_off"
  | "phone_country"
  | "sponsor_missing"
  | "sponsor_not_allowed";
export type Limited = { ok: false; problem: "limited"; retryAfter: number };
export type StartResult =
  | { ok: true; token: string; delivered: boolean }
  | { ok: false; problem: StartProblem }
  | Limited;

export interface StartInput {
  name: string;
  email: string;
  phone: string;
  sponsorEmail: string;
  termsAccepted: boolean;
  clientMac: string | null;
  /** The client's address group (IPv6 by /64), as the portal's attempt limits count it. */
  address: string;
  /** The gateway's query string, to hand the guest off when verified. */
  gateway: string;
  lang: string;
}

export type CodeResult =
  | { ok: true }
  | { ok: false; problem: "not_found" | "locked" | "code_expired" }
  | { ok: false; problem: "wrong_code"; attemptsLeft: number };

export type DecisionProblem = "not_found" | "used" | "expired" | "bad_duration" | "portal_off";

export interface GuestsDeps {
  repo: GuestsRepo;
  delivery: DeliveryDeps;
  portals: PortalsService;
  users: UsersService;
  aaa: AaaService;
  vouchers: VouchersService;
  sessions: SessionsService;
  enqueue(jobs: NewJob[]): Promise<unknown>;
  /** GUEST_SENDS_PER_ACCOUNT_HOUR. */
  accountSendsPerHour: number;
}

export function kindOf(portal: GuestPortal): VerificationKind | null {
  const v = portal.verification;
  if (v.email === "code") return "email_code";
  if (v.email === "link") return "email_link";
  if (v.sms) return "sms";
  if (v.sponsor) return "sponsor";
  return null;
}

/** Whether a sponsor's address is one the portal lists or of one of its sponsor domains. */
export function allowedSponsor(portal: GuestPortal, email: string): boolean {
  const domain = email.slice(email.lastIndexOf("@") + 1);
  return (
    portal.verification.sponsorEmails.includes(email) || portal.verification.sponsorDomains.includes(domain)
  );
}

const secondsNow = () => Math.floor(Date.now() / 1000);

/** A decided request as its audit row shows it: who asked, for whom, for how long, decided by whom. */
function decisionOf(row: VerificationRow) {
  return {
    portal_id: row.portal_id,
    status: row.status,
    name: row.name,
    email: row.email,
    sponsor_email: row.sponsor_email,
    duration: row.duration,
    decided_by: row.decided_by,
  };
}

export class GuestsService {
  constructor(private readonly deps: GuestsDeps) {}

  private get repo(): GuestsRepo {
    return this.deps.repo;
  }

  /** The guest's recipient: the number for SMS, the sponsor's address, else the guest's address. */
  private async checkStart(portal: GuestPortal, kind: VerificationKind, input: StartInput) {
    const checked = checkGuestFields(input);
    if (!checked.ok) return checked;
    const guest = checked.guest;
    if (kind === "sms") {
      if (guest.phone === "") return { ok: false as const, problem: "bad_phone" as const };
      // libphonenumber-js with its full metadata (250 KB of code): loaded with the first SMS
      // verification, not at start.
      const { normalisePhone } = await import("./phone.ts");
      const phone = normalisePhone(guest.phone, portal.verification.smsCountries);
      if (!phone.ok) return phone;
      guest.phone = phone.e164;
    }
    let sponsor = "";
    if (kind === "sponsor") {
      sponsor = input.sponsorEmail.trim().toLowerCase();
      if (sponsor === "") return { ok: false as const, problem: "sponsor_missing" as const };
      if (!isEmail(sponsor) || !allowedSponsor(portal, sponsor))
        return { ok: false as const, problem: "sponsor_not_allowed" as const };
    }
    const recipient = kind === "sms" ? guest.phone : kind === "sponsor" ? sponsor : guest.email;
    return { ok: true as const, guest, sponsor, recipient };
  }

  /** A registration on a verifying portal: the request is stored, its message sent (or queued). */
  async start(portal: GuestPortal, input: StartInput, now = secondsNow()): Promise<StartResult> {
    const kind = kindOf(portal);
    if (!kind || !portal.methods.includes("registration")) return { ok: false, problem: "method_off" };
    const checked = await this.checkStart(portal, kind, input);
    if (!checked.ok) return checked;
    const recipient = recipientDigest(checked.recipient);
    const keys = { recipient, clientMac: input.clientMac, address: input.address };
    const wait = await sendWait(
      this.repo,
      portal.accountId,
      portal.verification.limits,
      this.deps.accountSendsPerHour,
      keys,
      now,
    );
    if (wait > 0) return { ok: false, problem: "limited", retryAfter: wait };
    const token = newToken();
    const row = await this.repo.transaction(async (repo) => {
      const inserted = await repo.insert({
        account_id: portal.accountId,
        portal_id: portal.id,
        kind,
        status: "pending",
        page_hash: tokenDigest(token),
        name: checked.guest.name,
        email: checked.guest.email,
        phone: checked.guest.phone,
        sponsor_email: checked.sponsor,
        client_mac: input.clientMac,
        address: input.address,
        gateway: input.gateway,
        lang: input.lang,
        created: now,
        expires: now + REQUEST_LIFETIME,
      });
      await this.recordSend(repo, inserted, recipient, now);
      if (kind === "sponsor") await repo.recordEvents([this.event(inserted, "guest.sponsor_requested")]);
      return inserted;
    });
    const delivered = await this.deliverOrQueue(portal, row, now, token);
    return { ok: true, token, delivered };
  }

  private async recordSend(repo: GuestsRepo, row: VerificationRow, recipient: string, now: number) {
    await repo.recordSend(
      {
        account_id: row.account_id,
        portal_id: row.portal_id,
        channel: row.kind === "sms" ? "sms" : "email",
        recipient,
        client_mac: row.client_mac,
        address: row.address,
        created: now,
      },
      now,
    );
  }

  private async deliverOrQueue(portal: GuestPortal, row: VerificationRow, now: number, token?: string) {
    try {
      await deliver(this.deps.delivery, this.repo, portal, row, now, token);
      return true;
    } catch (error) {
      if (!(error instanceof DeliveryError)) throw error;
      await this.deps.enqueue([
        {
          kind: DELIVER_JOB,
          accountId: row.account_id,
          payload: { verification: row.id, portal: portal.id },
          runAt: Date.now() + DELIVERY_RETRIES[0]! * 1000,
        },
      ]);
      return false;
    }
  }

  private event(
    row: VerificationRow,
    kind: "guest.verified" | "guest.sponsor_requested" | "guest.approved" | "guest.denied",
  ) {
    return {
      accountId: row.account_id,
      kind,
      data: {
        portal_id: row.portal_id,
        verification_id: row.id,
        method: row.kind,
        name: row.name,
        email: row.email,
        ...(row.phone ? { phone: row.phone } : {}),
        ...(row.sponsor_email ? { sponsor_email: row.sponsor_email } : {}),
        ...(row.duration !== null ? { duration: row.duration } : {}),
        ...(row.decided_by ? { decided_by: row.decided_by } : {}),
        client_mac: row.client_mac,
      },
    };
  }

  /** The guest's request by its page token, while it is readable. */
  async request(
    portal: GuestPortal,
    token: string,
    now = secondsNow(),
  ): Promise<VerificationRow | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    const row = await this.repo.findByPage(portal.accountId, portal.id, tokenDigest(token));
    return row && row.expires > now ? row : undefined;
  }

  /** Seconds before the guest may ask for the message again (cooldown and caps); 0: now. */
  async resendWait(portal: GuestPortal, row: VerificationRow, now = secondsNow()): Promise<number> {
    const limits = portal.verification.limits;
    const cooldown = cooldownWait(row.last_sent, limits.resend_cooldown, now);
    const recipient = recipientDigest(
      row.kind === "sms" ? row.phone : row.kind === "sponsor" ? row.sponsor_email : row.email,
    );
    const keys = { recipient, clientMac: row.client_mac, address: row.address };
    const caps = await sendWait(
      this.repo,
      portal.accountId,
      limits,
      this.deps.accountSendsPerHour,
      keys,
      now,
    );
    return Math.max(cooldown, caps);
  }

  /** Sends a fresh code or link (a locked code is replaced); the caps and cooldown apply. */
  async resend(
    portal: GuestPortal,
    token: string,
    now = secondsNow(),
  ): Promise<{ ok: true; delivered: boolean } | { ok: false; problem: "not_found" } | Limited> {
    const row = await this.request(portal, token, now);
    if (!row || (row.status !== "pending" && row.status !== "locked"))
      return { ok: false, problem: "not_found" };
    const wait = await this.resendWait(portal, row, now);
    if (wait > 0) return { ok: false, problem: "limited", retryAfter: wait };
    const recipient = recipientDigest(
      row.kind === "sms" ? row.phone : row.kind === "sponsor" ? row.sponsor_email : row.email,
    );
    await this.recordSend(this.repo, row, recipient, now);
    return { ok: true, delivered: await this.deliverOrQueue(portal, row, now) };
  }

  /**
   * A code typed on the guest's page. The attempt is counted before the code is compared (so
   * parallel guesses cannot pass the limit); the last allowed wrong one locks the code.
   */
  async checkCode(
    portal: GuestPortal,
    token: string,
    typed: string,
    now = secondsNow(),
  ): Promise<CodeResult> {
    const row = await this.request(portal, token, now);
    if (!row || (row.kind !== "email_code" && row.kind !== "sms")) return { ok: false, problem: "not_found" };
    if (row.status === "verified") return { ok: true };
    if (row.status === "locked") return { ok: false, problem: "locked" };
    if (row.status !== "pending") return { ok: false, problem: "not_found" };
    const max = portal.verification.limits.code_attempts;
    const counted = await this.repo.countAttempt(portal.accountId, row.id, max);
    if (!counted) {
      await this.repo.update(portal.accountId, row.id, { status: "locked" });
      return { ok: false, problem: "locked" };
    }
    if ((counted.secret_expires ?? 0) <= now) return { ok: false, problem: "code_expired" };
    const code = typedCode(typed);
    const digest = code === null ? "" : codeDigest(this.deps.delivery.codeKey, row.id, code);
    if (code !== null && sameDigest(digest, counted.secret_hash)) {
      return (await this.verify(counted, now)) ? { ok: true } : { ok: false, problem: "not_found" };
    }
    if (counted.attempts >= max) {
      await this.repo.update(portal.accountId, row.id, { status: "locked" });
      return { ok: false, problem: "locked" };
    }
    return { ok: false, problem: "wrong_code", attemptsLeft: max - counted.attempts };
  }

  /** Settles a pending row as verified (once: the secret is spent), with guest.verified. */
  private async verify(row: VerificationRow, now: number): Promise<boolean> {
    return this.repo.transaction(async (repo) => {
      const done = await repo.settle(
        row.account_id,
        row.id,
        { status: "pending", secret_hash: row.secret_hash },
        { status: "verified", secret_hash: null, decided_at: now },
      );
      if (done) await repo.recordEvents([this.event(done, "guest.verified")]);
      return done !== undefined;
    });
  }

  /** An emailed link's token, opened and confirmed (a POST: mail scanners that fetch links do not spend it). */
  async confirmLink(
    portal: GuestPortal,
    token: string,
    now = secondsNow(),
  ): Promise<{ ok: true } | { ok: false; problem: "not_found" | "used" | "expired" }> {
    const row = await this.byLinkToken(portal, token);
    if (row?.kind !== "email_link") return { ok: false, problem: "not_found" };
    if (row.status !== "pending") return { ok: false, problem: "used" };
    if ((row.secret_expires ?? 0) <= now) return { ok: false, problem: "expired" };
    return (await this.verify(row, now)) ? { ok: true } : { ok: false, problem: "used" };
  }

  /** The row a link token names; the token's digest is looked up (an unknown or forged one finds nothing). */
  async byLinkToken(portal: GuestPortal, token: string): Promise<VerificationRow | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    return this.repo.findBySecret(portal.accountId, portal.id, tokenDigest(token));
  }

  /** A sponsor's request by the token of the approve/deny links; why not when it cannot be decided. */
  async sponsorRequest(
    portal: GuestPortal,
    token: string,
    now = secondsNow(),
  ): Promise<{ ok: true; row: VerificationRow } | { ok: false; problem: "not_found" | "expired" }> {
    const row = await this.byLinkToken(portal, token);
    if (row?.kind !== "sponsor" || row.status !== "pending") return { ok: false, problem: "not_found" };
    if ((row.secret_expires ?? 0) <= now) return { ok: false, problem: "expired" };
    return { ok: true, row };
  }

  /**
   * A sponsor's (or a console admin's) decision. The duration must be one of the portal's choices;
   * it is kept with the request and binds the guest's account (its Expiration) when they connect.
   */
  async decide(
    portal: GuestPortal,
    row: VerificationRow,
    decision: { approve: boolean; duration: number; by: string },
    now = secondsNow(),
  ): Promise<{ ok: true; row: VerificationRow } | { ok: false; problem: DecisionProblem }> {
    if (row.kind !== "sponsor") return { ok: false, problem: "not_found" };
    if (row.status !== "pending") return { ok: false, problem: "used" };
    if ((row.secret_expires ?? 0) <= now || row.expires <= now) return { ok: false, problem: "expired" };
    if (decision.approve && !portal.verification.sponsorDurations.includes(decision.duration))
      return { ok: false, problem: "bad_duration" };
    return this.repo.transaction(async (repo) => {
      const done = await repo.settle(
        row.account_id,
        row.id,
        { status: "pending", secret_hash: row.secret_hash },
        {
          status: decision.approve ? "verified" : "denied",
          secret_hash: null,
          duration: decision.approve ? decision.duration : null,
          decided_by: decision.by.slice(0, 254),
          decided_at: now,
        },
      );
      if (!done) return { ok: false as const, problem: "used" as const };
      await repo.recordEvents([this.event(done, decision.approve ? "guest.approved" : "guest.denied")]);
      // Who let a guest in (or kept one out): a sponsor through the portal, an admin in the console.
      await repo.audit({
        accountId: done.account_id,
        resource: "guest_verification",
        id: done.id,
        action: decision.approve ? "approve" : "deny",
        before: { status: row.status },
        after: decisionOf(done),
      });
      return { ok: true as const, row: done };
    });
  }

  /** A console admin's decision on a request of their account. */
  async decideById(
    accountId: number,
    id: number,
    decision: { approve: boolean; duration: number; by: string },
    now = secondsNow(),
  ): Promise<{ ok: true; row: VerificationRow } | { ok: false; problem: DecisionProblem }> {
    const row = await this.repo.findById(accountId, id);
    if (!row) return { ok: false, problem: "not_found" };
    const portal = await this.deps.portals.forGuests(row.portal_id);
    if (!portal || portal.accountId !== accountId) return { ok: false, problem: "portal_off" };
    return this.decide(portal, row, decision, now);
  }

  /**
   * The verified guest's login: their user is made (or renewed with a new password) with the
   * Expiration the verification allows: the sponsor's duration from the approval, or the portal's
   * registration validity from the verification. The pre-verification login ends here.
   */
  async connect(
    portal: GuestPortal,
    token: string,
    clientMac: string | null,
    now = secondsNow(),
  ): Promise<GuestResult | { ok: false; problem: "not_verified" | "expired" }> {
    const row = await this.request(portal, token, now);
    if (row?.status !== "verified" || row.decided_at === null) return { ok: false, problem: "not_verified" };
    const expiration =
      row.decided_at + (row.kind === "sponsor" ? (row.duration ?? 0) : portal.registration.validity);
    if (expiration <= now) return { ok: false, problem: "expired" };
    await this.endPreverify(row);
    return issueGuest(
      this.deps,
      portal,
      { name: row.name, email: row.email, phone: row.phone },
      {
        expiration,
        clientMac: clientMac ?? row.client_mac,
        now,
        event: { verification: row.kind, ...(row.sponsor_email ? { sponsor_email: row.sponsor_email } : {}) },
      },
    );
  }

  /** Disables the pre-verification voucher and asks the gateway to end its session (RFC 5176, if it can). */
  private async endPreverify(row: VerificationRow): Promise<void> {
    if (!row.preverify_code) return;
    const voucher = await this.deps.vouchers.findByCode(row.account_id, row.preverify_code);
    if (voucher && voucher.status !== "disabled")
      await this.deps.vouchers.setEnabled(row.account_id, voucher.id, false);
    await this.deps.sessions.disconnectUsernames(row.account_id, [row.preverify_code], "guest verified");
  }

  /**
   * The short login before verification: a one-device voucher valid for the portal's minutes from
   * first use (Session-Timeout the same), once per device per day.
   */
  async preverify(
    portal: GuestPortal,
    token: string,
    clientMac: string | null,
    now = secondsNow(),
  ): Promise<
    { ok: true; username: string; password: string } | { ok: false; problem: "not_allowed" } | Limited
  > {
    const row = await this.request(portal, token, now);
    const pending = row && (row.status === "pending" || row.status === "locked");
    const mac = clientMac ?? row?.client_mac ?? null;
    if (!row || !pending || !portal.verification.preverify || !row.kind.startsWith("email") || !mac)
      return { ok: false, problem: "not_allowed" };
    const scope = { channel: "preverify", client_mac: mac };
    const used = await this.repo.countSends(portal.accountId, scope, now - 86_400);
    if (used.count >= PREVERIFY_PER_DEVICE_DAY)
      return { ok: false, problem: "limited", retryAfter: Math.max(1, (used.oldest ?? now) + 86_400 - now) };
    const seconds = portal.verification.limits.preverify_minutes * 60;
    const voucher = await this.deps.vouchers.create(portal.accountId, {
      validity: seconds,
      usage_limit: 1,
      session_timeout: seconds,
    });
    await this.repo.transaction(async (repo) => {
      await repo.recordSend(
        {
          account_id: row.account_id,
          portal_id: row.portal_id,
          channel: "preverify",
          recipient: recipientDigest(mac),
          client_mac: mac,
          address: row.address,
          created: now,
        },
        now,
      );
      await repo.update(row.account_id, row.id, { preverify_code: voucher.code });
    });
    return { ok: true, username: voucher.code, password: voucher.code };
  }

  /** The worker's retry of a message that did not go out; a fresh secret each time. */
  async retryDelivery(
    accountId: number,
    id: number,
    portalId: number,
    attempt: number,
  ): Promise<"sent" | "done" | number> {
    const row = await this.repo.findById(accountId, id);
    const portal = await this.deps.portals.forGuests(portalId);
    const now = secondsNow();
    if (!row || !portal || (row.status !== "pending" && row.status !== "locked") || row.expires <= now)
      return "done";
    try {
      await deliver(this.deps.delivery, this.repo, portal, row, now);
      return "sent";
    } catch (error) {
      if (!(error instanceof DeliveryError)) throw error;
      const delay = DELIVERY_RETRIES[attempt];
      if (delay === undefined) {
        await this.repo.update(accountId, id, { delivery: "failed" });
        return "done";
      }
      return Date.now() + delay * 1000;
    }
  }

  /** Requests of the account in progress (the console's pending guests). */
  listOpen(accountId: number, limit = 200): Promise<VerificationRow[]> {
    return this.repo.listOpen(accountId, secondsNow(), limit);
  }
}

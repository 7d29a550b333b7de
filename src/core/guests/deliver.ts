// One delivery of a verification's secret: a fresh code or token replaces the last one (only its
// digest is stored, before anything is sent), then the message goes out by mail or SMS. A delivery
// that fails throws DeliveryError; the caller queues a retry (jobs/guest-jobs.ts), which delivers a
// fresh secret again.
import type { PortalLanguage } from "../portals/rules.ts";
import type { GuestPortal } from "../portals/service.ts";
import type { WebhookSender } from "../webhooks/sender.ts";
import { codeDigest, newCode, newToken, tokenDigest } from "./codes.ts";
import { composeHtml, composeText, type MailBody, type MailSender } from "./mail.ts";
import { fill, MAIL_WORDS } from "./messages.ts";
import type { GuestsRepo, VerificationRow } from "./repo.ts";
import { sendSms } from "./sms.ts";

export class DeliveryError extends Error {}

export interface DeliveryDeps {
  mailer: MailSender;
  http: WebhookSender;
  /** The key codes' digests are made with. */
  codeKey: Buffer;
  publicUrl: string;
}

/** A secret stored as its digest, with the text that carries it to the guest or sponsor. */
interface Secret {
  digest: string;
  expires: number;
  code?: string;
  token?: string;
}

function freshSecret(deps: DeliveryDeps, portal: GuestPortal, row: VerificationRow, now: number): Secret {
  const limits = portal.verification.limits;
  if (row.kind === "email_code" || row.kind === "sms") {
    const code = newCode();
    return { digest: codeDigest(deps.codeKey, row.id, code), expires: now + limits.code_ttl, code };
  }
  const token = newToken();
  const ttl = row.kind === "sponsor" ? limits.sponsor_window : limits.code_ttl;
  return { digest: tokenDigest(token), expires: now + ttl, token };
}

function brandOf(portal: GuestPortal, lang: PortalLanguage) {
  return {
    title: portal.title,
    colorPrimary: portal.colorPrimary,
    colorBackground: portal.colorBackground,
    lang,
  };
}

async function mail(
  deps: DeliveryDeps,
  portal: GuestPortal,
  row: VerificationRow,
  to: string,
  subject: string,
  body: MailBody,
) {
  const lang = row.lang as PortalLanguage;
  await deps.mailer.send({
    to,
    subject,
    text: composeText(body),
    html: composeHtml(brandOf(portal, lang), body),
  });
}

/** The message of each kind, in the guest's language. */
async function send(
  deps: DeliveryDeps,
  portal: GuestPortal,
  row: VerificationRow,
  secret: Secret,
  now: number,
  pageToken?: string,
) {
  const w = MAIL_WORDS[row.lang as PortalLanguage] ?? MAIL_WORDS.en;
  const base = `${deps.publicUrl}/portal/${portal.id}`;
  const values = {
    name: row.name,
    portal: portal.title,
    email: row.email,
    phone: row.phone ? `, ${row.phone}` : "",
    sponsor: row.sponsor_email,
    code: secret.code ?? "",
    minutes: Math.round((secret.expires - now) / 60),
  };
  const text = (template: string) => fill(template, values);
  if (row.kind === "sms") {
    await sendSms(deps.http, portal.verification.smsGateway, row.phone, text(w.smsCode));
  } else if (row.kind === "email_code") {
    await mail(deps, portal, row, row.email, text(w.codeSubject), {
      paragraphs: [text(w.codeIntro)],
      code: secret.code ?? "",
      footer: `${text(w.codeExpires)} ${w.ignore}`,
    });
  } else if (row.kind === "email_link") {
    await mail(deps, portal, row, row.email, text(w.linkSubject), {
      paragraphs: [text(w.linkIntro)],
      links: [{ text: w.linkButton, url: `${base}/confirm/${secret.token}` }],
      footer: `${text(w.codeExpires)} ${w.ignore}`,
    });
  } else {
    const decide = `${base}/sponsor/${secret.token}`;
    await mail(deps, portal, row, row.sponsor_email, text(w.sponsorSubject), {
      paragraphs: [text(w.sponsorIntro)],
      links: [
        { text: w.sponsorApprove, url: `${decide}?decision=approve` },
        { text: w.sponsorDeny, url: `${decide}?decision=deny` },
      ],
      footer: `${text(w.sponsorExpires)} ${w.ignore}`,
    });
    // The guest's own way back to their request (they may leave the page); only when it is made.
    if (pageToken) {
      await mail(deps, portal, row, row.email, text(w.waitingSubject), {
        paragraphs: [text(w.waitingIntro)],
        links: [{ text: w.waitingButton, url: `${base}/guest/${pageToken}` }],
        footer: w.ignore,
      });
    }
  }
}

/** Stores a fresh secret for the row and sends it; DeliveryError when the message did not go out. */
export async function deliver(
  deps: DeliveryDeps,
  repo: GuestsRepo,
  portal: GuestPortal,
  row: VerificationRow,
  now: number,
  pageToken?: string,
): Promise<VerificationRow> {
  const secret = freshSecret(deps, portal, row, now);
  const updated = await repo.update(row.account_id, row.id, {
    secret_hash: secret.digest,
    secret_expires: secret.expires,
    attempts: 0,
    sends: row.sends + 1,
    last_sent: now,
    delivery: "sent",
    ...(row.status === "locked" ? { status: "pending" } : {}),
  });
  try {
    await send(deps, portal, updated ?? row, secret, now, pageToken);
  } catch (error) {
    await repo.update(row.account_id, row.id, { delivery: "queued" });
    throw new DeliveryError((error as Error).message);
  }
  return updated ?? row;
}

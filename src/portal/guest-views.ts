// The verified-guest pages (issue 27): the guest's own request page (type the code, ask again, the
// short login to read the email, wait for the sponsor), the emailed link's confirmation and the
// sponsor's decision. No JavaScript needed: waiting pages refresh themselves (meta refresh), and
// the verified page's Connect form is submitted by handoff.js when scripts run.
import type { VerificationRow } from "../core/guests/repo.ts";
import type { PortalLanguage } from "../core/portals/rules.ts";
import type { GuestPortal } from "../core/portals/service.ts";
import { type Html, html } from "./html.ts";
import { duration, fill, GUEST_WORDS, wait } from "./i18n-guests.ts";
import { type Assets, layout } from "./views.ts";

/** Seconds between two looks of a waiting page at its request. */
export const WAITING_REFRESH_SECONDS = 5;

export interface RequestView {
  portal: GuestPortal;
  lang: PortalLanguage;
  assets: Assets;
  csrf: string;
  /** The request page's own path: /portal/<id>/guest/<token>. */
  path: string;
  row: VerificationRow;
  error?: string | undefined;
  /** Seconds before the guest may ask for the message again. */
  resendIn: number;
  /** Minutes of the pre-verification login, when the guest may still have it. */
  preverifyMinutes: number | null;
}

function hidden(view: { csrf: string; lang: PortalLanguage }): Html {
  return html`<input type="hidden" name="_csrf" value="${view.csrf}"><input type="hidden" name="lang" value="${view.lang}">`;
}

function codeSection(view: RequestView): Html {
  const g = GUEST_WORDS[view.lang];
  const { row } = view;
  const sent = row.kind === "sms" ? g.codeSentSms : row.kind === "email_code" ? g.codeSentEmail : g.linkSent;
  const to = row.kind === "sms" ? row.phone : row.email;
  const form =
    (row.kind === "sms" || row.kind === "email_code") && row.status === "pending"
      ? html`<form method="post" action="${view.path}/code">${hidden(view)}
<label for="code">${g.codeLabel}</label>
<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 -]{6,9}" maxlength="9" required>
<button type="submit">${g.codeButton}</button></form>`
      : "";
  return html`<p id="sent">${fill(sent, { to })}</p>
${row.delivery === "queued" ? html`<p class="note" id="delivery">${g.deliveryQueued}</p>` : ""}
${row.delivery === "failed" ? html`<p class="error" id="delivery">${g.deliveryFailed}</p>` : ""}
${form}`;
}

function resendSection(view: RequestView): Html {
  const g = GUEST_WORDS[view.lang];
  const later =
    view.resendIn > 0
      ? html`<p class="hint" id="resend-in">${fill(g.resendIn, { time: wait(g, view.resendIn) })}</p>`
      : "";
  return html`<form method="post" action="${view.path}/resend">${hidden(view)}
<button type="submit" class="secondary" id="resend">${g.resendButton}</button></form>${later}`;
}

function preverifySection(view: RequestView): Html {
  if (view.preverifyMinutes === null) return html``;
  const g = GUEST_WORDS[view.lang];
  return html`<section aria-labelledby="h-preverify"><p id="h-preverify">${g.preverifyText}</p>
<form method="post" action="${view.path}/preverify">${hidden(view)}
<button type="submit" class="secondary" id="preverify">${fill(g.preverifyButton, { minutes: view.preverifyMinutes })}</button></form></section>`;
}

/** The guest's request page in each of its states. */
export function requestPage(view: RequestView): string {
  const g = GUEST_WORDS[view.lang];
  const { row } = view;
  const error = view.error ? html`<p class="error" role="alert" id="error">${view.error}</p>` : "";
  const frame = { lang: view.lang, portal: view.portal, assets: view.assets, title: view.portal.title };
  if (row.status === "verified") {
    const body = html`<section><h2>${g.verifiedTitle}</h2><p>${g.verifiedText}</p>
<form id="handoff" method="post" action="${view.path}/connect">${hidden(view)}
<button type="submit">${g.connectButton}</button></form></section>`;
    return layout({ ...frame, script: true }, body);
  }
  if (row.status === "denied") {
    return layout(frame, html`<section><h2 id="state">${g.deniedTitle}</h2><p>${g.deniedText}</p></section>`);
  }
  if (row.kind === "sponsor") {
    const body = html`<section><h2 id="state">${g.waitingTitle}</h2>${error}
<p>${fill(g.waitingText, { sponsor: row.sponsor_email })}</p>
${row.delivery !== "sent" ? html`<p class="note" id="delivery">${row.delivery === "failed" ? g.deliveryFailed : g.deliveryQueued}</p>` : ""}
</section>`;
    return layout({ ...frame, refresh: view.path, refreshAfter: WAITING_REFRESH_SECONDS }, body);
  }
  const locked = row.status === "locked" ? html`<p class="error" id="locked">${g.codeLocked}</p>` : "";
  const body = html`<section><h2 id="state">${g.checkTitle}</h2>${error}${locked}
${codeSection(view)}${resendSection(view)}</section>
${preverifySection(view)}`;
  // A link is confirmed elsewhere (the mail app's browser): this page looks again by itself.
  const waiting = row.kind === "email_link" && !view.error;
  return layout(
    waiting ? { ...frame, refresh: view.path, refreshAfter: WAITING_REFRESH_SECONDS } : frame,
    body,
  );
}

/** A page with a heading and a message, in the portal's frame. */
export function notePage(
  portal: GuestPortal,
  lang: PortalLanguage,
  assets: Assets,
  title: string,
  text: string,
): string {
  return layout(
    { lang, portal, assets, title },
    html`<section><h2 id="state">${title}</h2><p id="note">${text}</p></section>`,
  );
}

/** The emailed link: a button (a POST), so mail scanners that open links do not spend it. */
export function confirmPage(
  portal: GuestPortal,
  lang: PortalLanguage,
  assets: Assets,
  csrf: string,
  path: string,
  email: string,
): string {
  const g = GUEST_WORDS[lang];
  const body = html`<section><h2>${g.confirmTitle}</h2><p>${fill(g.confirmText, { email })}</p>
<form method="post" action="${path}">${hidden({ csrf, lang })}<button type="submit" id="confirm">${g.confirmButton}</button></form></section>`;
  return layout({ lang, portal, assets, title: g.confirmTitle }, body);
}

export interface SponsorView {
  portal: GuestPortal;
  lang: PortalLanguage;
  assets: Assets;
  csrf: string;
  path: string;
  row: VerificationRow;
  /** approve or deny, from the link followed: that button comes first. */
  suggested: "approve" | "deny";
  error?: string | undefined;
}

/** The sponsor's decision page: who asks, the duration to grant, approve and deny. */
export function sponsorPage(view: SponsorView): string {
  const g = GUEST_WORDS[view.lang];
  const { row } = view;
  const durations = view.portal.verification.sponsorDurations;
  const approve = html`<button type="submit" name="decision" value="approve" id="approve">${g.approveButton}</button>`;
  const deny = html`<button type="submit" name="decision" value="deny" class="secondary" id="deny">${g.denyButton}</button>`;
  const body = html`<section><h2>${g.sponsorTitle}</h2>
${view.error ? html`<p class="error" role="alert" id="error">${view.error}</p>` : ""}
<p id="request">${fill(g.sponsorText, { name: row.name, email: row.email, phone: row.phone ? `, ${row.phone}` : "", portal: view.portal.title })}</p>
<form method="post" action="${view.path}">${hidden(view)}
<label for="duration">${g.durationLabel}</label>
<select id="duration" name="duration">${durations.map(
    (d, i) => html`<option value="${d}"${i === 0 ? html` selected` : ""}>${duration(g, d)}</option>`,
  )}</select>
${view.suggested === "deny" ? html`${deny} ${approve}` : html`${approve} ${deny}`}
</form></section>`;
  return layout({ lang: view.lang, portal: view.portal, assets: view.assets, title: g.sponsorTitle }, body);
}

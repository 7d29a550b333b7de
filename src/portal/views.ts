// The guest pages: sign-in, hand-off to the gateway, "you are online", and the friendly errors.
// Phone-first, no JavaScript needed, one small stylesheet from /portal/static; only the portal's
// own branding, every operator and gateway string escaped (html.ts).
import { PORTAL_DEFAULTS, type PortalLanguage } from "../core/portals/rules.ts";
import type { GuestPortal } from "../core/portals/service.ts";
import { textOn } from "./colors.ts";
import type { Handoff } from "./gateway.ts";
import { type Html, html, paragraphs } from "./html.ts";
import { CATALOGUE, type Messages } from "./i18n.ts";
import { GUEST_WORDS } from "./i18n-guests.ts";
import { IDP_WORDS } from "./i18n-idp.ts";

export interface Assets {
  css: string;
  js: string;
}

export interface Frame {
  lang: PortalLanguage;
  title: string;
  portal?: GuestPortal | undefined;
  assets: Assets;
  /** Language switch links, when the page has them. */
  switchTo?: ((lang: PortalLanguage) => string | Html) | undefined;
  script?: boolean;
  /** The portal's logo address, when it has one. */
  logo?: string | undefined;
  /** Follow this URL (meta refresh: no script, and no form-action check), after refreshAfter seconds (default at once). */
  refresh?: string;
  refreshAfter?: number;
}

export function layout(frame: Frame, body: Html): string {
  const primary = frame.portal?.colorPrimary ?? PORTAL_DEFAULTS.color_primary;
  const background = frame.portal?.colorBackground ?? PORTAL_DEFAULTS.color_background;
  const t = CATALOGUE[frame.lang];
  const languages = frame.switchTo
    ? html`<nav aria-label="${t.languageSwitch}">${(Object.keys(CATALOGUE) as PortalLanguage[]).map((code) =>
        code === frame.lang
          ? html`<a href="${frame.switchTo!(code)}" lang="${code}" aria-current="true">${CATALOGUE[code].languageName}</a>`
          : html`<a href="${frame.switchTo!(code)}" lang="${code}" hreflang="${code}">${CATALOGUE[code].languageName}</a>`,
      )}</nav>`
    : "";
  // The operator's colours come as a tiny stylesheet of their own (inline styles would need
  // 'unsafe-inline' in the CSP).
  const colors = `p=${primary.slice(1)}&b=${background.slice(1)}`;
  return html`<!doctype html>
<html lang="${frame.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
${frame.refresh ? html`<meta http-equiv="refresh" content="${`${frame.refreshAfter ?? 0};url=${frame.refresh}`}">` : ""}
<title>${frame.title}</title>
<link rel="stylesheet" href="${frame.assets.css}">
<link rel="stylesheet" href="/portal/static/colors.css?${colors}">
${frame.script ? html`<script src="${frame.assets.js}" defer></script>` : ""}
</head>
<body>
<header>${frame.logo ? html`<img class="logo" src="${frame.logo}" alt="">` : ""}<h1>${frame.portal?.title ?? frame.title}</h1></header>
<main>
${body}
</main>
${languages}
</body>
</html>
`.value;
}

/** The per-portal colours as a stylesheet (no inline styles: the CSP forbids them). */
export function colorsCss(primary: string, background: string): string {
  return (
    `:root{--primary:${primary};--primary-text:${textOn(primary)};` +
    `--bg:${background};--bg-text:${textOn(background)}}\n`
  );
}

export interface SignInPage {
  portal: GuestPortal;
  lang: PortalLanguage;
  assets: Assets;
  action: string;
  /** The token, or (plugin.ts's cached page) a slot filled per guest; likewise the gateway. */
  csrf: string | Html;
  /** The gateway's query string, carried through the form. */
  gateway: string | Html;
  error?: string | undefined;
  /** What the guest typed, kept on an error (never the password). */
  username?: string;
  /** What a registering guest typed, kept on an error. */
  guest?: { name: string; email: string; phone: string; sponsor?: string };
  switchTo: (lang: PortalLanguage) => string | Html;
  /** The logo's address, when the portal has one. */
  logo?: string | undefined;
  /** The guest's device uses a randomised (locally administered) MAC address on this network. */
  randomMac?: boolean | undefined;
  /** The idp method's buttons: the portal's enabled identity providers. */
  providers?: { id: number; name: string }[];
}

/**
 * "Remember this device" for each form: a box to tick (the portal asks; or the address is
 * randomised and the operator allows it, never silently), a note (always), or nothing.
 */
function rememberParts(page: SignInPage, t: Messages) {
  const { choice, days, randomMacs } = page.portal.remember;
  const none = { box: (_id: string) => html``, notice: html`` };
  if (choice === "never") return none;
  const text = (message: string) => message.replace("{days}", String(days));
  const box = (id: string) =>
    html`<p class="check"><input type="checkbox" id="${id}" name="remember" value="yes"><label for="${id}">${text(t.rememberDevice)}</label></p>`;
  if (page.randomMac) {
    const howTo = t.randomMacHowTo.split("\n").map((line) => html`<li>${line}</li>`);
    const allowed = randomMacs === "allow";
    const notice = html`<section class="notice" id="random-mac" aria-labelledby="h-random"><h2 id="h-random">${t.randomMacTitle}</h2>
<p>${allowed ? t.randomMacAllowed : t.randomMacRefused}</p><ul>${howTo}</ul></section>`;
    return { box: allowed ? box : none.box, notice };
  }
  if (choice === "ask") return { box, notice: html`` };
  return { box: none.box, notice: html`<p class="note" id="remember-note">${text(t.rememberAlways)}</p>` };
}

/** A button per identity provider; each form starts that provider's sign-in (plugin.ts). */
function idpSection(page: SignInPage, hidden: Html): Html | "" {
  if (!page.portal.methods.includes("idp") || !page.providers?.length) return "";
  const w = IDP_WORDS[page.lang];
  return html`<section aria-labelledby="h-idp"><h2 id="h-idp">${w.heading}</h2>
${page.providers.map(
  (p) => html`<form method="post" action="${`/portal/${page.portal.id}/idp/${p.id}`}">${hidden}
<button type="submit" class="idp" id="idp-${p.id}">${w.button.replace("{name}", p.name)}</button></form>`,
)}</section>`;
}

export function signInPage(page: SignInPage): string {
  const t: Messages = CATALOGUE[page.lang];
  const { portal } = page;
  const hidden = html`<input type="hidden" name="_csrf" value="${page.csrf}"><input type="hidden" name="gw" value="${page.gateway}"><input type="hidden" name="lang" value="${page.lang}">`;
  const remember = rememberParts(page, t);
  const voucher = portal.methods.includes("voucher")
    ? html`<section aria-labelledby="h-voucher"><h2 id="h-voucher">${t.voucherHeading}</h2>
<form method="post" action="${page.action}">${hidden}<input type="hidden" name="method" value="voucher">
<label for="code">${t.voucherLabel}</label>
<input type="text" id="code" name="code" autocomplete="off" autocapitalize="characters" spellcheck="false" required maxlength="40" aria-describedby="code-hint">
<p class="hint" id="code-hint">${t.voucherHint}</p>
${remember.box("remember-voucher")}
<button type="submit">${t.voucherButton}</button></form></section>`
    : "";
  const password = portal.methods.includes("password")
    ? html`<section aria-labelledby="h-password"><h2 id="h-password">${t.passwordHeading}</h2>
<form method="post" action="${page.action}">${hidden}<input type="hidden" name="method" value="password">
<label for="username">${t.usernameLabel}</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64" value="${page.username ?? ""}">
<label for="password">${t.passwordLabel}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required maxlength="128">
${remember.box("remember-password")}
<button type="submit">${t.passwordButton}</button></form></section>`
    : "";
  // Click-through and registration: Wisp issues the credential once the terms are accepted (a
  // required checkbox; the server checks it too). The terms themselves are shown below the forms.
  const accept = (id: string) =>
    html`<p class="check"><input type="checkbox" id="${id}" name="terms" value="yes" required><label for="${id}">${t.acceptTerms}</label></p>`;
  const click = portal.methods.includes("clickthrough")
    ? html`<section aria-labelledby="h-click"><h2 id="h-click">${t.clickHeading}</h2>
<form method="post" action="${page.action}">${hidden}<input type="hidden" name="method" value="clickthrough">
${accept("terms-click")}
${remember.box("remember-click")}
<button type="submit">${t.clickButton}</button></form></section>`
    : "";
  const guest = page.guest ?? { name: "", email: "", phone: "" };
  const g = GUEST_WORDS[page.lang];
  const verify = portal.verification;
  // SMS verification needs the phone; a sponsor's approval needs the host's address.
  const phoneField = verify.sms
    ? html`<label for="reg-phone">${t.phoneLabel}</label>
<input type="tel" id="reg-phone" name="phone" autocomplete="tel" required maxlength="24" value="${guest.phone}" aria-describedby="reg-phone-hint">
<p class="hint" id="reg-phone-hint">${g.phoneHint}</p>`
    : html`<label for="reg-phone">${t.phoneLabel} <span class="hint">${t.optional}</span></label>
<input type="tel" id="reg-phone" name="phone" autocomplete="tel" maxlength="24" value="${guest.phone}">`;
  const sponsorField = verify.sponsor
    ? html`<label for="reg-sponsor">${g.sponsorLabel}</label>
<input type="email" id="reg-sponsor" name="sponsor" autocapitalize="none" spellcheck="false" required maxlength="254" value="${guest.sponsor ?? ""}" aria-describedby="reg-sponsor-hint">
<p class="hint" id="reg-sponsor-hint">${g.sponsorHint}</p>`
    : "";
  const register = portal.methods.includes("registration")
    ? html`<section aria-labelledby="h-register"><h2 id="h-register">${t.registerHeading}</h2>
<form method="post" action="${page.action}">${hidden}<input type="hidden" name="method" value="registration">
<label for="reg-name">${t.nameLabel}</label>
<input type="text" id="reg-name" name="name" autocomplete="name" required maxlength="100" value="${guest.name}">
<label for="reg-email">${t.emailLabel}</label>
<input type="email" id="reg-email" name="email" autocomplete="email" autocapitalize="none" spellcheck="false" required maxlength="254" value="${guest.email}">
${phoneField}
${sponsorField}
${accept("terms-register")}
${remember.box("remember-register")}
<button type="submit">${t.registerButton}</button></form></section>`
    : "";
  const terms = portal.terms
    ? html`<section aria-labelledby="h-terms"><h2 id="h-terms">${t.termsHeading}</h2><div class="terms">${paragraphs(portal.terms)}</div></section>
<p class="note">${t.termsNote}</p>`
    : "";
  const body = html`${page.error ? html`<p class="error" role="alert" id="error">${page.error}</p>` : ""}
${portal.welcomeText ? html`<div class="welcome">${paragraphs(portal.welcomeText)}</div>` : ""}
${remember.notice}
${idpSection(page, hidden)}${voucher}${password}${click}${register}${terms}`;
  return layout(
    {
      lang: page.lang,
      title: portal.title,
      portal,
      assets: page.assets,
      switchTo: page.switchTo,
      logo: page.logo,
    },
    body,
  );
}

/**
 * The step that carries the credentials to the gateway: a form auto-submitted by handoff.js, or a
 * link followed by meta refresh; either also works by hand, without JavaScript.
 */
export function handoffPage(
  portal: GuestPortal,
  lang: PortalLanguage,
  assets: Assets,
  next: Handoff,
): string {
  const t = CATALOGUE[lang];
  const body =
    next.kind === "form"
      ? html`<section><h2>${t.handoffTitle}</h2><p>${t.handoffText}</p>
<form id="handoff" method="post" action="${next.action}">
${next.fields.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit">${t.handoffButton}</button></form></section>`
      : html`<section><h2>${t.handoffTitle}</h2><p>${t.handoffText}</p>
<p><a id="handoff-link" href="${next.url}">${t.handoffButton}</a></p></section>`;
  return layout(
    {
      lang,
      title: t.handoffTitle,
      portal,
      assets,
      script: next.kind === "form",
      ...(next.kind === "link" ? { refresh: next.url } : {}),
    },
    body,
  );
}

/** A page with a heading and one message (online, refused, 404, too many attempts). */
export function messagePage(
  lang: PortalLanguage,
  assets: Assets,
  title: string,
  message: string,
  options: {
    portal?: GuestPortal | undefined;
    link?: string | null;
    switchTo?: (lang: PortalLanguage) => string;
  } = {},
): string {
  const t = CATALOGUE[lang];
  const body = html`<section><h2>${title}</h2><p>${message}</p>
${options.link ? html`<p><a href="${options.link}">${t.continueLink}</a></p>` : ""}</section>`;
  return layout({ lang, title, portal: options.portal, assets, switchTo: options.switchTo }, body);
}

/** A device as the "my devices" page lists it. */
export interface OwnDevice {
  id: number;
  mac: string;
  name: string;
  lastSeen: string | null;
}

export interface MyDevicesView {
  portal: GuestPortal;
  lang: PortalLanguage;
  assets: Assets;
  /** /portal/<id>/devices */
  action: string;
  csrf: string;
  switchTo: (lang: PortalLanguage) => string;
  error?: string | undefined;
  /** Signed in: the user's devices and limit; otherwise the sign-in form. */
  owner?: { username: string; devices: OwnDevice[]; limit: number } | undefined;
  /** What the guest typed, kept on an error. */
  typed?: { username?: string; mac?: string; name?: string } | undefined;
}

/** "My devices": the sign-in form, or the signed-in user's devices with add, rename and remove. */
export function myDevicesPage(view: MyDevicesView): string {
  const t = CATALOGUE[view.lang];
  const csrf = html`<input type="hidden" name="_csrf" value="${view.csrf}"><input type="hidden" name="lang" value="${view.lang}">`;
  const typed = view.typed ?? {};
  const error = view.error ? html`<p class="error" role="alert" id="error">${view.error}</p>` : "";
  const owner = view.owner;
  let body: Html;
  if (!owner) {
    body = html`${error}<section aria-labelledby="h-sign-in"><h2 id="h-sign-in">${t.myDevicesSignIn}</h2>
<form method="post" action="${view.action}/login">${csrf}
<label for="username">${t.usernameLabel}</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64" value="${typed.username ?? ""}">
<label for="password">${t.passwordLabel}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required maxlength="128">
<button type="submit">${t.passwordButton}</button></form></section>`;
  } else {
    const count = t.myDevicesCount
      .replace("{count}", String(owner.devices.length))
      .replace("{limit}", String(owner.limit));
    const rows = owner.devices.map(
      (
        d,
      ) => html`<li class="device" id="device-${d.id}"><p><code>${d.mac}</code> · ${t.lastSeen}: ${d.lastSeen ?? t.never}</p>
<form method="post" action="${view.action}/rename">${csrf}<input type="hidden" name="device" value="${d.id}">
<label for="name-${d.id}">${t.deviceNameLabel}</label><input type="text" id="name-${d.id}" name="name" maxlength="100" value="${d.name}">
<button type="submit">${t.renameButton}</button></form>
<form method="post" action="${view.action}/remove">${csrf}<input type="hidden" name="device" value="${d.id}"><button type="submit" class="secondary" id="remove-${d.id}">${t.removeButton}</button></form></li>`,
    );
    body = html`${error}<section aria-labelledby="h-devices"><h2 id="h-devices">${owner.username}</h2>
<p>${t.myDevicesIntro}</p><p id="device-count">${count}</p>
${owner.devices.length === 0 ? html`<p>${t.myDevicesNone}</p>` : html`<ul class="devices">${rows}</ul>`}</section>
${
  owner.devices.length < owner.limit
    ? html`<section aria-labelledby="h-add"><h2 id="h-add">${t.addDeviceHeading}</h2>
<form method="post" action="${view.action}/add">${csrf}
<label for="mac">${t.macLabel}</label>
<input type="text" id="mac" name="mac" autocomplete="off" autocapitalize="characters" spellcheck="false" required maxlength="40" aria-describedby="mac-hint" value="${typed.mac ?? ""}">
<p class="hint" id="mac-hint">${t.macHint}</p>
<label for="device-name">${t.deviceNameLabel} <span class="hint">${t.optional}</span></label>
<input type="text" id="device-name" name="name" maxlength="100" value="${typed.name ?? ""}">
<button type="submit">${t.addDeviceButton}</button></form></section>`
    : ""
}
<form method="post" action="${view.action}/logout">${csrf}<button type="submit" class="secondary">${t.signOutButton}</button></form>`;
  }
  return layout(
    {
      lang: view.lang,
      title: t.myDevicesTitle,
      portal: view.portal,
      assets: view.assets,
      switchTo: view.switchTo,
    },
    body,
  );
}

/** On the way to the IdP: followed at once by meta refresh (no form-action check), or by hand. */
export function goingPage(
  portal: GuestPortal,
  lang: PortalLanguage,
  assets: Assets,
  name: string,
  url: string,
) {
  const w = IDP_WORDS[lang];
  const body = html`<section><h2>${w.goingTitle}</h2><p>${w.goingText.replace("{name}", name)}</p>
<p><a id="idp-link" href="${url}">${w.goingLink.replace("{name}", name)}</a></p></section>`;
  return layout({ lang, title: w.goingTitle, portal, assets, refresh: url }, body);
}

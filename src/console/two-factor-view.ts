// What the console's two-factor pages share: the TOTP secret as a QR code (an inline SVG made on
// the server: nothing leaves for a QR service, and the CSP's img-src needs no data: URLs) and as
// grouped text, the passkey options a page hands its script, and the recovery codes shown once.
import type { ConsoleSession } from "../core/admins/service.ts";
import type { Core } from "../core/index.ts";

export interface TotpSetupView {
  /** The base32 secret in groups of four, for typing into an app. */
  secret: string;
  uri: string;
  /** <svg>…</svg>, made by the qrcode library from the URI alone. */
  qr: string;
}

export async function totpSetupView(enrolment: { secret: string; uri: string }): Promise<TotpSetupView> {
  // Loaded with the first set-up page, not at start (qrcode and pngjs: 140 KB of code, idle memory).
  const { default: QRCode } = await import("qrcode");
  const qr = await QRCode.toString(enrolment.uri, {
    type: "svg",
    errorCorrectionLevel: "M",
    margin: 2,
    width: 220,
  });
  return { secret: enrolment.secret.match(/.{1,4}/g)!.join(" "), uri: enrolment.uri, qr };
}

/** Options for the page's script (a JSON <script> block, which the CSP lets be: it never runs). */
export function optionsJson(options: unknown): string {
  // "<" escaped so the JSON cannot close its <script> element.
  return JSON.stringify(options).replace(/</g, "\\u003c");
}

const RECOVERY_SUBJECT = "recovery-codes";

/** Keeps new recovery codes for the session's next page to show once (Post/Redirect/Get). */
export function keepRecoveryCodes(core: Core, session: ConsoleSession, codes: string[]): Promise<void> {
  return core.admins.pendingSecrets.keep(session, RECOVERY_SUBJECT, {
    secret: codes.join("\n"),
    event: "created",
  });
}

export async function takeRecoveryCodes(core: Core, session: ConsoleSession): Promise<string[] | null> {
  const pending = await core.admins.pendingSecrets.take(session, RECOVERY_SUBJECT);
  return pending ? pending.secret.split("\n") : null;
}

// Mail to guests and sponsors through the operator's SMTP server (nodemailer): plain text and HTML in
// the portal's language and colours. Every wait is bounded (connect, greeting, each command, and
// the whole send), so a dead or slow server never holds a guest's page; a failed send is retried by
// the job queue (jobs/guest-jobs.ts).
import fs from "node:fs";
import type { Transporter } from "nodemailer";
import type { PortalLanguage } from "../portals/rules.ts";
import { within } from "../shared/time.ts";
import type { SmtpSettings } from "./rules.ts";

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends one message or throws; the guests core needs nothing else of the mail server. */
export interface MailSender {
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

export class MailError extends Error {}

/** No SMTP_HOST: every send fails with the same clear reason. */
export class NoMailer implements MailSender {
  async send(): Promise<void> {
    throw new MailError("no mail server is configured (SMTP_HOST)");
  }
  async close(): Promise<void> {}
}

export class SmtpMailer implements MailSender {
  private transport: Transporter | undefined;

  constructor(private readonly settings: SmtpSettings) {}

  /** nodemailer is loaded at the first message: a Wisp that sends none never pays for it. */
  private async transporter(): Promise<Transporter> {
    if (this.transport) return this.transport;
    const nodemailer = (await import("nodemailer")).default;
    const s = this.settings;
    this.transport = nodemailer.createTransport({
      host: s.host,
      port: s.port,
      secure: s.security === "tls",
      requireTLS: s.security === "starttls",
      ignoreTLS: s.security === "none",
      ...(s.user ? { auth: { user: s.user, pass: s.password ?? "" } } : {}),
      connectionTimeout: s.timeoutMs,
      greetingTimeout: s.timeoutMs,
      socketTimeout: s.timeoutMs,
      ...(s.caFile ? { tls: { ca: [fs.readFileSync(s.caFile)] } } : {}),
    });
    return this.transport;
  }

  async send(mail: OutgoingMail): Promise<void> {
    const transport = await this.transporter();
    const limit = this.settings.timeoutMs * 3;
    try {
      await within(
        transport.sendMail({
          from: this.settings.from,
          ...mail,
          disableFileAccess: true,
          disableUrlAccess: true,
        }),
        limit,
        () => new MailError(`the mail server did not answer within ${limit} ms`),
      );
    } catch (error) {
      if (error instanceof MailError) throw error;
      // nodemailer's message names the server's answer; never the credentials.
      throw new MailError(`the mail server refused or failed: ${(error as Error).message}`.slice(0, 300));
    }
  }

  async close(): Promise<void> {
    this.transport?.close();
  }
}

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);

export interface Branding {
  title: string;
  colorPrimary: string;
  colorBackground: string;
  lang: PortalLanguage;
}

/** A message's parts: paragraphs, and maybe a code shown large and link buttons. */
export interface MailBody {
  paragraphs: string[];
  code?: string;
  links?: { text: string; url: string }[];
  footer: string;
}

export function composeText(body: MailBody): string {
  const lines = [...body.paragraphs];
  if (body.code) lines.push("", `    ${body.code}`, "");
  for (const link of body.links ?? []) lines.push(`${link.text}: ${link.url}`);
  lines.push("", body.footer);
  return `${lines.join("\n")}\n`;
}

/** The HTML part: inline styles only (mail clients drop stylesheets), every value escaped. */
export function composeHtml(brand: Branding, body: MailBody): string {
  const p = (text: string) => `<p style="margin:0 0 12px">${escapeHtml(text)}</p>`;
  const code = body.code
    ? `<p style="font-size:28px;letter-spacing:6px;font-weight:bold;margin:16px 0">${escapeHtml(body.code)}</p>`
    : "";
  const links = (body.links ?? [])
    .map(
      (l) =>
        `<p style="margin:16px 0"><a href="${escapeHtml(l.url)}" style="background:${brand.colorPrimary};color:#ffffff;padding:10px 16px;border-radius:4px;text-decoration:none">${escapeHtml(l.text)}</a></p>`,
    )
    .join("");
  return `<!doctype html><html lang="${brand.lang}"><head><meta charset="utf-8"><title>${escapeHtml(brand.title)}</title></head>
<body style="background:${brand.colorBackground};font-family:sans-serif;padding:16px">
<div style="background:#ffffff;max-width:480px;margin:0 auto;padding:16px;border-top:4px solid ${brand.colorPrimary}">
<h1 style="font-size:20px">${escapeHtml(brand.title)}</h1>
${body.paragraphs.map(p).join("")}${code}${links}
<p style="color:#666666;font-size:12px">${escapeHtml(body.footer)}</p>
</div></body></html>`;
}

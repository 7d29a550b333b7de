// SMS one-time codes through an HTTP gateway, sent with the webhooks' guarded HTTP client (timeouts,
// no redirects, private addresses refused unless WEBHOOK_ALLOW_PRIVATE=1). Two shapes fit any
// provider:
//   twilio: Twilio's Programmable Messaging REST API, "Create a Message resource":
//     POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json, form fields To, From (or
//     MessagingServiceSid for an MG... sender) and Body, HTTP Basic auth AccountSid:AuthToken; a
//     success is 201 with the message's JSON, whose "sid" names it. {base} is https://api.twilio.com
//     unless the portal's SMS URL says otherwise (a Twilio-compatible provider).
//   generic: the portal's URL, method (POST or PUT) and body template; {to} (E.164), {text} and
//     {from} are filled in, JSON-escaped when the template is JSON ({...}), else form-encoded; the
//     secret goes in the named header (Authorization: Bearer ..., X-API-Key: ...). Any 2xx is a
//     success.
import type { GuestVerification } from "../portals/verification.ts";
import type { WebhookSender } from "../webhooks/sender.ts";

export type SmsGateway = GuestVerification["smsGateway"];
export const TWILIO_BASE = "https://api.twilio.com";
const USER_AGENT = "Wisp-SMS/1";

export class SmsError extends Error {}

function twilioRequest(gateway: SmsGateway, to: string, text: string) {
  const base = (gateway.url || TWILIO_BASE).replace(/\/+$/, "");
  const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(gateway.username)}/Messages.json`;
  const sender = /^MG[0-9a-f]{32}$/i.test(gateway.from) ? "MessagingServiceSid" : "From";
  const body = new URLSearchParams({ To: to, [sender]: gateway.from, Body: text }).toString();
  const auth = Buffer.from(`${gateway.username}:${gateway.secret}`).toString("base64");
  return {
    url,
    body,
    headers: { authorization: `Basic ${auth}` },
    contentType: "application/x-www-form-urlencoded",
  };
}

/** The generic body: placeholders filled, escaped for the template's own syntax. */
export function fillTemplate(
  template: string,
  values: Record<string, string>,
): { body: string; json: boolean } {
  const json = template.trim().startsWith("{");
  const encode = json ? (v: string) => JSON.stringify(v).slice(1, -1) : encodeURIComponent;
  const body = template.replace(/\{(to|text|from)\}/g, (_, name: string) => encode(values[name] ?? ""));
  return { body, json };
}

function genericRequest(gateway: SmsGateway, to: string, text: string) {
  const template = gateway.template || "to={to}&text={text}";
  const { body, json } = fillTemplate(template, { to, text, from: gateway.from });
  const headers: Record<string, string> = gateway.secret
    ? { [gateway.authHeader.toLowerCase()]: gateway.secret }
    : {};
  return {
    url: gateway.url,
    body,
    headers,
    contentType: json ? "application/json" : "application/x-www-form-urlencoded",
  };
}

/** Sends one SMS or throws SmsError saying what the gateway did. */
export async function sendSms(
  http: WebhookSender,
  gateway: SmsGateway,
  to: string,
  text: string,
): Promise<void> {
  const request =
    gateway.provider === "twilio" ? twilioRequest(gateway, to, text) : genericRequest(gateway, to, text);
  const method = gateway.provider === "twilio" ? "POST" : (gateway.method as "POST" | "PUT");
  const result = await http.send(request.url, request.headers, request.body, {
    method,
    contentType: request.contentType,
    userAgent: USER_AGENT,
  });
  if (result.statusCode === null) throw new SmsError(`the SMS gateway could not be reached: ${result.error}`);
  if (result.statusCode < 200 || result.statusCode > 299) {
    throw new SmsError(`the SMS gateway answered ${result.statusCode}`);
  }
  // Twilio's message JSON (its first KB: the webhooks' client keeps no more) names the account and
  // the message; anything else is not a sent message, whatever the status said.
  const excerpt = result.excerpt ?? "";
  if (
    gateway.provider === "twilio" &&
    !(/^\s*\{/.test(excerpt) && /"(account_)?sid"\s*:\s*"[A-Za-z0-9]+"/.test(excerpt))
  ) {
    throw new SmsError("the SMS gateway's answer is not a Twilio message");
  }
}

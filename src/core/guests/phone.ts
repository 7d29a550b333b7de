// Guests' phone numbers, parsed and normalised to E.164 (ITU-T E.164: +, country code, national
// number) with libphonenumber-js and its full metadata, so a number of a wrong length or an
// unassigned range is refused before any SMS is paid for. Numbers are written internationally
// (+34 612 34 56 78 or 0034...): a portal may serve guests from anywhere.
import { parsePhoneNumberFromString } from "libphonenumber-js/max";

export type PhoneResult = { ok: true; e164: string } | { ok: false; problem: "bad_phone" | "phone_country" };

export function normalisePhone(text: string, allowedPrefixes: readonly string[]): PhoneResult {
  const typed = text.trim().replace(/^00/, "+");
  if (typed.length > 32 || !/^\+[0-9 ().-]{5,30}$/.test(typed)) return { ok: false, problem: "bad_phone" };
  const parsed = parsePhoneNumberFromString(typed);
  if (!parsed?.isValid()) return { ok: false, problem: "bad_phone" };
  const e164 = parsed.number;
  if (allowedPrefixes.length > 0 && !allowedPrefixes.some((prefix) => e164.startsWith(prefix))) {
    return { ok: false, problem: "phone_country" };
  }
  return { ok: true, e164 };
}

// The send caps of issue 27: per recipient (email address or phone number), per device (MAC) and
// per client address per day, and the account's budget per hour. Each cap counts guest_sends rows,
// so they hold across processes and restarts; past one, the answer says when to try again.
import type { GuestVerification } from "../portals/verification.ts";
import type { GuestsRepo, SendScope } from "./repo.ts";

const DAY = 86_400;
const HOUR = 3_600;

export interface SendKeys {
  /** recipientDigest of the address or number. */
  recipient: string;
  clientMac: string | null;
  address: string;
}

/** Seconds until every cap the send would break allows it again; 0 when none is reached. */
export async function sendWait(
  repo: GuestsRepo,
  accountId: number,
  limits: GuestVerification["limits"],
  accountPerHour: number,
  keys: SendKeys,
  now: number,
): Promise<number> {
  const caps: [SendScope, number, number][] = [
    [{ recipient: keys.recipient }, limits.sends_per_recipient, DAY],
    [{ address: keys.address }, limits.sends_per_address, DAY],
    [{}, accountPerHour, HOUR],
  ];
  if (keys.clientMac) caps.push([{ client_mac: keys.clientMac }, limits.sends_per_device, DAY]);
  let wait = 0;
  for (const [scope, max, window] of caps) {
    const { count, oldest } = await repo.countSends(accountId, scope, now - window);
    // The cap frees a slot when its oldest send leaves the window.
    if (count >= max) wait = Math.max(wait, (oldest ?? now) + window - now, 1);
  }
  return wait;
}

/** Seconds until the resend cooldown has passed; 0 when it has. */
export function cooldownWait(lastSent: number | null, cooldown: number, now: number): number {
  return lastSent === null ? 0 : Math.max(0, lastSent + cooldown - now);
}

// Accounting-Requests and Access-Requests as an access point sends them, for the sessions suites.
import assert from "node:assert/strict";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput, RadiusPacket } from "../../src/radius/packet.ts";

export interface Station {
  user: string;
  session: string;
  /** The device's MAC as the AP sends it, e.g. 02-00-00-00-01-01. */
  mac: string;
}

export function accountingSender(port: number, secret: string) {
  return async (station: Station, status: string, extra: AttributeInput[] = []) => {
    const answer = await sendRadius({
      code: "Accounting-Request",
      attributes: [
        ["User-Name", station.user],
        ["Acct-Session-Id", station.session],
        ["Acct-Status-Type", status],
        ["NAS-IP-Address", "127.0.0.1"],
        ["Called-Station-Id", "02-00-00-00-00-01:lab"],
        ["Calling-Station-Id", station.mac],
        ...extra,
      ],
      host: "127.0.0.1",
      port,
      secret,
      timeoutMs: 2000,
      retries: 0,
    });
    assert.equal(answer.type, "Accounting-Response");
  };
}

export function loginSender(port: number, secret: string) {
  return (user: string, password: string, extra: AttributeInput[] = []): Promise<RadiusPacket> =>
    sendRadius({
      ...accessRequestPap(user, password, [["Calling-Station-Id", "02-00-00-00-09-09"], ...extra]),
      host: "127.0.0.1",
      port,
      secret,
      timeoutMs: 2000,
      retries: 0,
    });
}

export const attribute = (packet: RadiusPacket, name: string) =>
  packet.attributes.find((a) => a.name === name)?.value;

/** Waits until `check` returns a value other than undefined (polls every 50 ms). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

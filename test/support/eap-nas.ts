// A NAS sending hand-made EAP Access-Requests over real UDP (RFC 3579): several requests in flight
// on one socket, told apart by the RADIUS Identifier; an unanswered request resolves to null.
import assert from "node:assert/strict";
import dgram from "node:dgram";
import {
  type AttributeInput,
  decodePacket,
  encodePacket,
  type RadiusPacket,
} from "../../src/radius/packet.ts";
import { eap } from "./eap-packets.ts";

export class Nas {
  readonly socket = dgram.createSocket("udp4");
  private id = 0;
  private waiting = new Map<number, (p: RadiusPacket) => void>();
  constructor(
    private readonly port: number,
    private readonly secret: string,
  ) {
    this.socket.on("message", (message) => {
      const resolve = this.waiting.get(message[1]!);
      this.waiting.delete(message[1]!);
      resolve?.(decodePacket(message, { secret }));
    });
  }
  bind(address: string) {
    return new Promise<void>((resolve) => this.socket.bind(0, address, resolve));
  }
  /** Sends an Access-Request; resolves with the answer, or null after `waitMs` without one. */
  send(
    attributes: AttributeInput[],
    options: { ma?: boolean; waitMs?: number } = {},
  ): Promise<RadiusPacket | null> {
    const id = this.id++ & 0xff;
    let packet = encodePacket(
      { code: "Access-Request", identifier: id, attributes: [["User-Name", "x"], ...attributes] },
      this.secret,
      { messageAuthenticator: true },
    );
    if (options.ma === false) {
      // The encoder always signs EAP-Message; cut the Message-Authenticator (placed first) out.
      assert.equal(packet[20], 80);
      packet = Buffer.concat([packet.subarray(0, 20), packet.subarray(38)]);
      packet.writeUInt16BE(packet.length, 2);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(null);
      }, options.waitMs ?? 1500);
      this.waiting.set(id, (p) => {
        clearTimeout(timer);
        resolve(p);
      });
      this.socket.send(packet, this.port, "127.0.0.1");
    });
  }
  close() {
    this.socket.close();
  }
}

/** An attribute's raw value in an answer. */
export const attr = (p: RadiusPacket | null, name: string) => p?.attributes.find((a) => a.name === name)?.raw;

/** EAP-Response/Identity (RFC 3748 section 5.1), EAP Identifier 1. */
export const identity = (name: string) => eap(2, 1, 1, Buffer.from(name));

/**
 * A half-open PEAP conversation: the identity, then a real ClientHello answered by the server's
 * first flight (a TLS connection held by the server). Resolves with the conversation's newest
 * State and EAP Identifier, or null when the server did not challenge.
 */
export async function halfOpenPeap(
  nas: Nas,
  name: string,
  hello: Buffer,
): Promise<{ state: Buffer; eapId: number } | null> {
  const start = await nas.send([["EAP-Message", identity(name)]], { waitMs: 5000 });
  if (start?.type !== "Access-Challenge") return null;
  const flight = await nas.send(
    [
      ["EAP-Message", eap(2, attr(start, "EAP-Message")![1]!, 25, Buffer.concat([Buffer.of(0), hello]))],
      ["State", attr(start, "State")!],
    ],
    { waitMs: 5000 },
  );
  if (flight?.type !== "Access-Challenge") return null;
  return { state: attr(flight, "State")!, eapId: attr(flight, "EAP-Message")![1]! };
}

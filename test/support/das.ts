// A small RFC 5176 Dynamic Authorization Server for tests and the bench: records every request it
// gets (decoded, with whether its Request Authenticator and Message-Authenticator verify) and
// answers as the test says: ACK, NAK with an Error-Cause, nothing, or a forged answer.
import dgram from "node:dgram";
import {
  type AttributeInput,
  decodePacket,
  encodePacket,
  hasMessageAuthenticator,
  type RadiusPacket,
  verifyMessageAuthenticator,
  verifyRequestAuthenticator,
} from "../../src/radius/packet.ts";

export type DasBehaviour =
  | { answer: "ack" }
  | { answer: "nak"; errorCause?: string }
  | { answer: "none" }
  /** A reply signed with the wrong secret (must be ignored), then nothing. */
  | { answer: "forged" }
  /** A reply with another identifier (must be ignored), then the real ACK. */
  | { answer: "wrong-id-then-ack" };

export interface DasRequest {
  packet: RadiusPacket;
  /** The datagram as received, for byte-level checks. */
  raw: Buffer;
  /** Date.now() when it arrived. */
  at: number;
  requestAuthenticatorValid: boolean;
  messageAuthenticatorValid: boolean | null;
  attribute(name: string): string | undefined;
}

export interface TestDas {
  port: number;
  requests: DasRequest[];
  behaviour: DasBehaviour;
  /** How CoA-Requests are answered, when not as `behaviour` says. */
  coaBehaviour?: DasBehaviour | undefined;
  close(): Promise<void>;
}

export async function startTestDas(
  secret: string,
  behaviour: DasBehaviour = { answer: "ack" },
): Promise<TestDas> {
  const socket = dgram.createSocket("udp4");
  const das: TestDas = {
    port: 0,
    requests: [],
    behaviour,
    close: () =>
      new Promise((resolve) => {
        try {
          socket.close(() => resolve());
        } catch {
          resolve(); // already closed
        }
      }),
  };
  socket.on("message", (message, remote) => {
    const packet = decodePacket(message, { secret });
    das.requests.push({
      packet,
      raw: Buffer.from(message),
      at: Date.now(),
      requestAuthenticatorValid: verifyRequestAuthenticator(message, secret),
      messageAuthenticatorValid: hasMessageAuthenticator(message)
        ? verifyMessageAuthenticator(message, secret)
        : null,
      attribute: (name) => packet.attributes.find((a) => a.name === name)?.value,
    });
    const reply = (
      code: number,
      attributes: AttributeInput[] = [],
      key = secret,
      identifier = packet.identifier,
    ) =>
      socket.send(
        encodePacket({ code, identifier, attributes }, key, {
          requestAuthenticator: packet.authenticator,
          requestCode: packet.code,
          messageAuthenticator: true,
        }),
        remote.port,
        remote.address,
      );
    const ack = packet.code === 40 ? 41 : 44;
    const b = (packet.code === 43 ? das.coaBehaviour : undefined) ?? das.behaviour;
    if (b.answer === "ack") reply(ack);
    else if (b.answer === "nak") reply(ack + 1, b.errorCause ? [["Error-Cause", b.errorCause]] : []);
    else if (b.answer === "forged") reply(ack, [], `${secret}-wrong`);
    else if (b.answer === "wrong-id-then-ack") {
      reply(ack, [], secret, (packet.identifier + 1) & 0xff);
      reply(ack);
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  das.port = socket.address().port;
  return das;
}

// The Dynamic Authorization client (RFC 5176): sends Disconnect-Requests and CoA-Requests to a
// NAS's Dynamic Authorization Server for the core (the DynamicAuthorization port). Each request has
// a socket of its own, so its identifier and source port are its own and a late answer to another
// request can never be taken for its answer.
//
// - Request Authenticator: MD5 over the packet with 16 zero octets in its place, then the secret,
//   as for Accounting-Request (RFC 5176 section 2.3); Message-Authenticator first (RFC 5176
//   section 3.5 and RFC 3579 section 3.2, against BlastRADIUS), computed over that zeroed field.
// - Retransmissions resend the same bytes (same Identifier and authenticator: RFC 5176 section 2.3,
//   RFC 5080 section 2.2.1), after timeoutMs each, `retries` times.
// - An answer is taken only from the address and port asked, with the request's Identifier, a code
//   that answers it (RFC 5176 section 2.1/2.2), a valid Response Authenticator and, when present, a
//   valid Message-Authenticator; anything else is ignored and logged, and waiting goes on
//   (RFC 5176 section 3.6: invalid packets are silently discarded).
import { randomBytes } from "node:crypto";
import dgram from "node:dgram";
import { isIPv6 } from "node:net";
import type { DasAnswer, DasAttribute, DasTarget, DynamicAuthorization } from "../core/sessions/das.ts";
import { decodePacket, encodePacket, PacketCode, packetCodeName, verifyResponse } from "./packet.ts";

export interface DasLog {
  warn(object: object, message: string): void;
}

export interface DasClientOptions {
  /** Wait this long for an answer per transmission; default 2000 ms. */
  timeoutMs?: number;
  /** Retransmissions after the first; default 2. */
  retries?: number;
  log?: DasLog;
}

const ANSWERS: Record<number, readonly number[]> = {
  [PacketCode.DisconnectRequest]: [PacketCode.DisconnectAck, PacketCode.DisconnectNak],
  [PacketCode.CoaRequest]: [PacketCode.CoaAck, PacketCode.CoaNak],
};

export class DasClient implements DynamicAuthorization {
  private readonly timeoutMs: number;
  private readonly retries: number;

  constructor(private readonly options: DasClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.retries = options.retries ?? 2;
  }

  send(
    kind: "disconnect" | "coa",
    target: DasTarget,
    attributes: readonly DasAttribute[],
  ): Promise<DasAnswer> {
    const code = kind === "disconnect" ? PacketCode.DisconnectRequest : PacketCode.CoaRequest;
    const identifier = randomBytes(1)[0]!;
    const request = encodePacket({ code, identifier, attributes: [...attributes] }, target.secret, {
      messageAuthenticator: true,
    });
    const authenticator = request.subarray(4, 20);
    const socket = dgram.createSocket(isIPv6(target.host) ? "udp6" : "udp4");
    const ignore = (why: string, from: dgram.RemoteInfo) =>
      this.options.log?.warn(
        { nas: target.host, port: target.port, from: `${from.address}:${from.port}`, reason: why },
        "RADIUS dynamic authorization answer ignored",
      );
    return new Promise<DasAnswer>((resolve) => {
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      const finish = (answer: DasAnswer) => {
        clearTimeout(timer);
        socket.close();
        resolve(answer);
      };
      socket.on("error", () => {}); // ICMP unreachable and the like: the retries decide
      socket.on("message", (message, from) => {
        if (from.address !== target.host || from.port !== target.port)
          return ignore("wrong source address", from);
        if (message.length < 20 || message[1] !== identifier) return ignore("unknown identifier", from);
        if (!ANSWERS[code]!.includes(message[0]!)) {
          return ignore(
            `${packetCodeName(message[0]!) ?? message[0]} does not answer ${packetCodeName(code)}`,
            from,
          );
        }
        if (!verifyResponse(message, target.secret, authenticator)) {
          return ignore("bad Response Authenticator or Message-Authenticator (wrong shared secret?)", from);
        }
        let packet: ReturnType<typeof decodePacket>;
        try {
          packet = decodePacket(message, { secret: target.secret, requestAuthenticator: authenticator });
        } catch (error) {
          return ignore(`malformed: ${(error as Error).message}`, from);
        }
        if (message[0] === PacketCode.DisconnectAck || message[0] === PacketCode.CoaAck) {
          return finish({ result: "ack" });
        }
        const cause = packet.attributes.find((a) => a.name === "Error-Cause");
        finish({ result: "nak", errorCause: cause ? cause.value : null });
      });
      const transmit = () => {
        if (sent > this.retries) return finish({ result: "timeout" });
        sent++;
        socket.send(request, target.port, target.host);
        timer = setTimeout(transmit, this.timeoutMs);
      };
      socket.bind(0, () => transmit());
    });
  }
}

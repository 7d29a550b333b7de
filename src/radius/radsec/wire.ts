// How packets look on one RadSec connection: RADIUS/1.0 (RFC 6614: the usual MD5 authenticators
// and attribute hiding, with the shared secret "radsec", section 2.3) or RADIUS/1.1 (RFC 9765,
// negotiated by ALPN: a Token instead of authenticators, nothing hidden). The connection uses one
// Wire and never asks which.
import { randomBytes } from "node:crypto";
import type { AttributeInput } from "../packet.ts";
import {
  decodePacket,
  encodePacket,
  isResponseCode,
  PacketCode,
  type RadiusPacket,
  tokenCounter,
  tokenOf,
  verifyResponse,
} from "../packet.ts";

/** RFC 6614 section 2.3: the shared secret of RADIUS/TLS is the string "radsec". */
export const RADSEC_SECRET = "radsec";

export type Protocol = "radius/1.0" | "radius/1.1";

/** A request this side sends (Disconnect-Request, CoA-Request) and how to know its answer. */
export interface OutgoingRequest {
  bytes: Buffer;
  /** The key its answer carries (the Identifier for 1.0, the Token for 1.1). */
  key: string;
  /** Whether a response with this key is genuinely the answer (authenticators for 1.0). */
  answers(response: Buffer): boolean;
  /** 1.0: the Request Authenticator, to decode the answer's attributes with. */
  authenticator?: Buffer;
}

export interface Wire {
  readonly protocol: Protocol;
  /** Throws RadiusDecodeError for a malformed packet. */
  decode(message: Buffer, requestAuthenticator?: Buffer): RadiusPacket;
  /** The key a request is tracked by on this connection (duplicates, answers to our requests). */
  key(message: Buffer): string;
  /** Encodes the answer to `request`; undefined: the default (signed with the "radsec" secret). */
  answerer(request: RadiusPacket): ((code: number, attributes: AttributeInput[]) => Buffer) | undefined;
  /** Whether requests carry MD5 authenticators to check. */
  readonly unsigned: boolean;
  request(code: number, attributes: readonly AttributeInput[]): OutgoingRequest;
}

/**
 * RADIUS/1.0 over TLS. Requests are tracked by code and Identifier: a NAS keeps at most 256
 * outstanding per code on a connection (RFC 6613 section 2.6.5 leaves duplicates to the Identifier).
 */
export class Radius10Wire implements Wire {
  readonly protocol = "radius/1.0";
  readonly unsigned = false;
  private nextIdentifier = randomBytes(1)[0]!;

  decode(message: Buffer, requestAuthenticator?: Buffer): RadiusPacket {
    return decodePacket(
      message,
      requestAuthenticator ? { secret: RADSEC_SECRET, requestAuthenticator } : { secret: RADSEC_SECRET },
    );
  }

  key(message: Buffer): string {
    // Answers to our requests are keyed as the requests were (their code differs).
    const code = message[0]!;
    const asked = isResponseCode(code) ? requestCodeOf(code) : code;
    return `${asked}:${message[1]}`;
  }

  answerer(): undefined {
    return undefined;
  }

  request(code: number, attributes: readonly AttributeInput[]): OutgoingRequest {
    const identifier = this.nextIdentifier;
    this.nextIdentifier = (identifier + 1) & 0xff;
    // Message-Authenticator first (RFC 5176 section 3.5), as the UDP DAS client sends it.
    const bytes = encodePacket({ code, identifier, attributes: [...attributes] }, RADSEC_SECRET, {
      messageAuthenticator: true,
    });
    const authenticator = Buffer.from(bytes.subarray(4, 20));
    return {
      bytes,
      key: `${code}:${identifier}`,
      answers: (response) => verifyResponse(response, RADSEC_SECRET, authenticator),
      authenticator,
    };
  }
}

/** The request code a response code answers (RFC 2865, 2866, 5176). */
function requestCodeOf(code: number): number {
  switch (code) {
    case PacketCode.AccessAccept:
    case PacketCode.AccessReject:
    case PacketCode.AccessChallenge:
      return PacketCode.AccessRequest;
    case PacketCode.AccountingResponse:
      return PacketCode.AccountingRequest;
    case PacketCode.DisconnectAck:
    case PacketCode.DisconnectNak:
      return PacketCode.DisconnectRequest;
    case PacketCode.CoaAck:
    case PacketCode.CoaNak:
      return PacketCode.CoaRequest;
    default:
      return code;
  }
}

/**
 * RADIUS/1.1 (RFC 9765): requests tracked by their Token alone, per connection (section 4.2);
 * answers repeat the request's Token and Identifier; nothing to sign or check (TLS protects it).
 */
export class Radius11Wire implements Wire {
  readonly protocol = "radius/1.1";
  readonly unsigned = true;
  private readonly nextToken = tokenCounter();

  decode(message: Buffer): RadiusPacket {
    return decodePacket(message, { radius11: true });
  }

  key(message: Buffer): string {
    return tokenOf(message).toString("hex");
  }

  answerer(request: RadiusPacket) {
    const token = request.token!;
    return (code: number, attributes: AttributeInput[]) =>
      encodePacket({ code, identifier: request.identifier, attributes }, "", { radius11: { token } });
  }

  request(code: number, attributes: readonly AttributeInput[]): OutgoingRequest {
    const token = this.nextToken();
    const bytes = encodePacket({ code, identifier: 0, attributes: [...attributes] }, "", {
      radius11: { token },
    });
    return { bytes, key: token.toString("hex"), answers: () => true };
  }
}

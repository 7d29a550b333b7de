// How a RADIUS request is answered, whatever carried it (UDP datagrams in ./server.ts, RadSec's
// TLS stream in ./radsec/): authenticators checked, Status-Server answered (RFC 5997), accounting
// stored, logins decided by the AAA service (PAP, CHAP, MS-CHAPv2, EAP). The transports find the
// client, frame packets and send the bytes; everything between is here, written once.
import type { Pair } from "../core/aaa/pairs.ts";
import type { AaaService } from "../core/aaa/service.ts";
import type { RadiusClient } from "../core/networks/service.ts";
import type { EapEngine } from "./eap/engine.ts";
import { answerEap } from "./eap-door.ts";
import { mschapV2Request } from "./mschap/access-request.ts";
import {
  type AttributeInput,
  encodePacket,
  hasMessageAuthenticator,
  PacketCode,
  type RadiusPacket,
  verifyChap,
  verifyMessageAuthenticator,
  verifyRequestAuthenticator,
} from "./packet.ts";

export interface RadiusLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** Why a packet was dropped, as counted (a bounded set; the log line says more). */
export type DropReason =
  | "malformed"
  | "unknown_client"
  | "bad_authenticator"
  | "message_authenticator_missing"
  | "wrong_port"
  | "eap"
  /** The request failed inside (a database error): not answered, logged as an error. */
  | "error";

/**
 * Told of every packet's fate (src/metrics/radius.ts counts them). Called per packet: an
 * implementation must not build strings or objects on these calls.
 */
export interface RadiusObserver {
  /** A packet received (before anything is checked), by the transport that carried it. */
  received(transport: "udp" | "radsec"): void;
  /** An Access-Request answered; `reason` is the reject's (Reply-Message) reason. */
  access(networkId: number, verdict: "accept" | "reject" | "challenge", reason: string | null): void;
  /** An Accounting-Request stored and answered, by its Acct-Status-Type. */
  accounting(networkId: number, statusType: string | undefined): void;
  /** A Status-Server answered (RFC 5997). */
  status(networkId: number): void;
  /** A packet not answered; `code` is its RADIUS code byte; networkId undefined: unknown client. */
  dropped(code: number, networkId: number | undefined, reason: DropReason): void;
}

/** One request as a transport hands it over. */
export interface Exchange {
  /**
   * The port it came to: "auth" (1812) or "acct" (1813) for UDP; "any" for RadSec, where one
   * connection carries both and the packet's code says which (RFC 6614 section 2.1).
   */
  port: "auth" | "acct" | "any";
  /** The network; for RadSec its secret is "radsec" (RFC 6614 section 2.3). */
  client: RadiusClient;
  packet: RadiusPacket;
  /** The packet's bytes as received. */
  message: Buffer;
  /** The NAS's address, for the records and the logs. */
  address: string;
  /** Message-Authenticator may be required by the network (UDP only: TLS already protects RadSec). */
  enforceMessageAuthenticator: boolean;
  /** Encodes the answer (RADIUS/1.0 signs it with the secret; RADIUS/1.1 carries the Token). */
  encode?: (code: number, attributes: AttributeInput[]) => Buffer;
  /** RADIUS/1.1 (RFC 9765): no MD5 authenticators to check. */
  unsigned?: boolean;
  /** Counts and logs a packet not answered. */
  drop(reason: string, as: DropReason): void;
}

export interface AnswerDeps {
  aaa: AaaService;
  eap: EapEngine | undefined;
  log: RadiusLog;
  observer: RadiusObserver | undefined;
}

/** Signs an answer to `packet` with `secret` (RFC 2865 section 3, RFC 3579 section 3.2). */
export function signedAnswer(packet: RadiusPacket, secret: string) {
  return (code: number, attributes: AttributeInput[]) =>
    encodePacket({ code, identifier: packet.identifier, attributes }, secret, {
      requestAuthenticator: packet.authenticator,
      requestCode: packet.code,
      messageAuthenticator: code !== PacketCode.AccountingResponse || packet.code === PacketCode.StatusServer,
    });
}

/** The answer's bytes, or null when the request is not answered (the drop was counted and logged). */
export async function answerRequest(deps: AnswerDeps, exchange: Exchange): Promise<Buffer | null> {
  const { client, packet, message } = exchange;
  // RFC 2865 section 5.33: Proxy-State is copied unmodified, in order, into the answer.
  const proxyState: AttributeInput[] = [];
  for (const a of packet.attributes) if (a.name === "Proxy-State") proxyState.push(["Proxy-State", a.raw]);
  const encode = exchange.encode ?? signedAnswer(packet, client.secret);
  const respond = (code: number, attributes: AttributeInput[]) =>
    encode(code, proxyState.length > 0 ? [...attributes, ...proxyState] : attributes);
  const hasMa = !exchange.unsigned && hasMessageAuthenticator(message);
  if (hasMa && !verifyMessageAuthenticator(message, client.secret, packet.authenticator)) {
    exchange.drop("bad Message-Authenticator (wrong shared secret?)", "bad_authenticator");
    return null;
  }
  if (packet.code === PacketCode.StatusServer) {
    deps.observer?.status(client.id);
    return respond(exchange.port === "acct" ? PacketCode.AccountingResponse : PacketCode.AccessAccept, []);
  }
  if (packet.code === PacketCode.AccountingRequest && exchange.port !== "auth") {
    return account(deps, exchange, respond);
  }
  if (packet.code !== PacketCode.AccessRequest || exchange.port === "acct") {
    const where = exchange.port === "acct" ? "accounting port" : "authentication port";
    exchange.drop(
      `${packet.type} on the ${exchange.port === "any" ? "RadSec connection" : where}`,
      "wrong_port",
    );
    return null;
  }
  if (!hasMa && exchange.enforceMessageAuthenticator && client.require_message_authenticator) {
    exchange.drop("Message-Authenticator required for this network", "message_authenticator_missing");
    return null;
  }
  if (packet.attributes.some((a) => a.name === "EAP-Message")) return eap(deps, exchange, respond);
  return login(deps, exchange, respond);
}

type Respond = (code: number, attributes: AttributeInput[]) => Buffer;

async function account(deps: AnswerDeps, exchange: Exchange, respond: Respond): Promise<Buffer | null> {
  const { client, message } = exchange;
  if (!exchange.unsigned && !verifyRequestAuthenticator(message, client.secret)) {
    exchange.drop("bad Request Authenticator (wrong shared secret?)", "bad_authenticator");
    return null;
  }
  const pairs = pairsOf(exchange.packet);
  await deps.aaa.account(client, pairs, exchange.address);
  deps.observer?.accounting(client.id, pairs.find((p) => p.attribute === "Acct-Status-Type")?.value);
  return respond(PacketCode.AccountingResponse, []);
}

async function eap(deps: AnswerDeps, exchange: Exchange, respond: Respond): Promise<Buffer | null> {
  const { client, packet } = exchange;
  let rejectReason: string | null = null;
  const response = await answerEap({
    engine: deps.eap,
    aaa: deps.aaa,
    client,
    packet,
    pairs: () => pairsOf(packet),
    address: exchange.address,
    respond,
    drop: (reason) => exchange.drop(reason, "eap"),
    rejected: (reason) => {
      rejectReason = reason;
    },
    warn: (detail, text) => deps.log.warn(detail, text),
  });
  if (response && deps.observer) {
    const answered = response[0];
    const verdict =
      answered === PacketCode.AccessAccept
        ? "accept"
        : answered === PacketCode.AccessChallenge
          ? "challenge"
          : "reject";
    deps.observer.access(client.id, verdict, rejectReason);
  }
  return response;
}

/** PAP, CHAP and MS-CHAPv2: decided by the core; the answer is built before the attempt is recorded. */
async function login(deps: AnswerDeps, exchange: Exchange, respond: Respond): Promise<Buffer> {
  const { client, packet, aaa } = { ...exchange, aaa: deps.aaa };
  const chap = packet.attributes.find((a) => a.name === "CHAP-Password");
  // RADIUS/1.1 has no Request Authenticator: CHAP needs CHAP-Challenge there (RFC 9765 section 5.1.2).
  const challenge =
    packet.attributes.find((a) => a.name === "CHAP-Challenge")?.raw ??
    (exchange.unsigned ? undefined : packet.authenticator);
  const password = packet.attributes.find((a) => a.name === "User-Password");
  const mschap = mschapV2Request(packet);
  let outcome = await aaa.decide(client, pairsOf(packet), {
    // The decrypted octets, compared as octets (RFC 2865 section 5.2): never decoded to text.
    password: password?.raw,
    chap: chap && challenge ? (cleartext: string) => verifyChap(chap.raw, challenge, cleartext) : undefined,
    mschapv2: mschap?.verify,
  });
  // The answer is built before the attempt is recorded, so the record says what was sent.
  let response: Buffer;
  try {
    const { reply } = outcome.result;
    response = outcome.result.accepted
      ? respond(PacketCode.AccessAccept, [
          ...reply.map((p) => [p.attribute, p.value] as const),
          ...(mschap?.acceptAttributes(reply) ?? []),
        ])
      : respond(PacketCode.AccessReject, [
          ["Reply-Message", outcome.result.reason ?? "rejected"],
          ...(mschap?.rejectAttributes() ?? []),
        ]);
  } catch (error) {
    deps.log.warn({ err: error, client: exchange.address }, "the answer cannot be encoded; rejecting");
    outcome = aaa.rejectInstead(outcome, "the answer does not fit in a RADIUS packet");
    response = respond(PacketCode.AccessReject, []);
  }
  await aaa.record(outcome);
  deps.observer?.access(client.id, outcome.result.accepted ? "accept" : "reject", outcome.result.reason);
  return response;
}

/** The request's attributes in the text form check items compare with (User-Password as octets too). */
export function pairsOf(packet: RadiusPacket): Pair[] {
  return packet.attributes.map((a) =>
    a.name === "User-Password"
      ? { attribute: a.name, op: "=", value: a.raw.toString("utf8"), raw: a.raw }
      : { attribute: a.tag === undefined ? a.name : `${a.name}:${a.tag}`, op: "=", value: a.value },
  );
}

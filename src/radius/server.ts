// The RADIUS door: UDP sockets for authentication and accounting. It finds the client (a Wisp
// network) by source address, checks the packet's authenticators, answers duplicates from a
// cache, and hands the attributes to the AAA service, which decides. Bad packets are dropped and
// logged, never answered.
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import type { Pair } from "../core/aaa/pairs.ts";
import type { AaaService } from "../core/aaa/service.ts";
import type { RadiusClient } from "../core/networks/service.ts";
import { EapEngine } from "./eap/engine.ts";
import { createInnerMsChapV2 } from "./eap/methods/inner-mschapv2.ts";
import type { EapLimits, EapOptions } from "./eap/types.ts";
import { answerEap } from "./eap-door.ts";
import { mschapV2Request } from "./mschap/access-request.ts";
import {
  type AttributeInput,
  decodePacket,
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
  /** An Access-Request answered; `reason` is the reject's (Reply-Message) reason. */
  access(networkId: number, verdict: "accept" | "reject" | "challenge", reason: string | null): void;
  /** An Accounting-Request stored and answered, by its Acct-Status-Type. */
  accounting(networkId: number, statusType: string | undefined): void;
  /** A Status-Server answered (RFC 5997). */
  status(networkId: number): void;
  /** A packet not answered; `code` is its RADIUS code byte; networkId undefined: unknown client. */
  dropped(code: number, networkId: number | undefined, reason: DropReason): void;
}

export interface RadiusServerOptions {
  host: string;
  /** 0: not served. */
  authPort: number;
  acctPort: number;
  aaa: AaaService;
  findClient(address: string): Promise<RadiusClient | undefined>;
  log: RadiusLog;
  /** EAP (PEAP, TTLS, EAP-TLS): the server certificate and client-certificate checks; unset: EAP refused. */
  eap?: EapOptions | undefined;
  eapLimits?: EapLimits | undefined;
  observer?: RadiusObserver | undefined;
}

/** How long answers are kept for retransmissions (FreeRADIUS's cleanup_delay is 5 s). */
const DUPLICATE_TTL_MS = 10_000;
/** How long a client lookup by address is trusted. */
const CLIENT_TTL_MS = 5_000;
/** At most one "dropped" log line per address and reason in this time. */
const LOG_EVERY_MS = 10_000;

interface Seen {
  authenticator: Buffer;
  response: Buffer | null;
  expires: number;
}

export class RadiusServer {
  private readonly sockets: Socket[] = [];
  private readonly seen = new Map<string, Seen>();
  private readonly clients = new Map<string, { client: RadiusClient | undefined; expires: number }>();
  private readonly logged = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;
  private nextSlowSweep = 0;
  /** Ports actually bound (useful when 0 was not meant as "off" but the OS picked). */
  readonly ports: { auth?: number; acct?: number } = {};
  readonly eap: EapEngine | undefined;

  constructor(private readonly options: RadiusServerOptions) {
    this.eap = options.eap
      ? new EapEngine(options.eap, { mschapv2: createInnerMsChapV2 }, options.eapLimits)
      : undefined;
  }

  async start(): Promise<void> {
    const { host, authPort, acctPort } = this.options;
    if (authPort > 0) this.ports.auth = await this.bind(host, authPort, "auth");
    if (acctPort > 0) this.ports.acct = await this.bind(host, acctPort, "acct");
    this.sweeper = setInterval(() => this.sweep(), 1000).unref();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.eap?.close();
    await Promise.all(this.sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    this.sockets.length = 0;
  }

  private bind(host: string, port: number, kind: "auth" | "acct"): Promise<number> {
    const socket = createSocket({ type: host.includes(":") ? "udp6" : "udp4", reuseAddr: false });
    socket.on("message", (message, remote) => {
      this.receive(socket, kind, message, remote).catch((error) => {
        this.options.observer?.dropped(message[0] ?? 0, undefined, "error");
        this.options.log.error({ err: error, client: remote.address }, "RADIUS request failed; not answered");
      });
    });
    this.sockets.push(socket);
    return new Promise((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(port, host, () => {
        socket.off("error", reject);
        socket.on("error", (error) => this.options.log.error({ err: error }, "RADIUS socket error"));
        resolve(socket.address().port);
      });
    });
  }

  /** Counts the drop (every one) and logs it (at most once per address and reason in LOG_EVERY_MS). */
  private drop(
    remote: RemoteInfo,
    reason: string,
    counted: { code: number; networkId: number | undefined; as: DropReason },
    detail: object = {},
  ): void {
    this.options.observer?.dropped(counted.code, counted.networkId, counted.as);
    const key = `${remote.address}|${reason}`;
    const now = Date.now();
    if ((this.logged.get(key) ?? 0) > now) return;
    this.logged.set(key, now + LOG_EVERY_MS);
    this.options.log.warn(
      { client: remote.address, port: remote.port, reason, ...detail },
      "RADIUS packet dropped",
    );
  }

  private async client(address: string): Promise<RadiusClient | undefined> {
    const cached = this.clients.get(address);
    if (cached && cached.expires > Date.now()) return cached.client;
    const client = await this.options.findClient(address);
    this.clients.set(address, { client, expires: Date.now() + CLIENT_TTL_MS });
    return client;
  }

  private async receive(
    socket: Socket,
    kind: "auth" | "acct",
    message: Buffer,
    remote: RemoteInfo,
  ): Promise<void> {
    const code = message[0] ?? 0;
    if (message.length < 20) {
      return this.drop(remote, "shorter than a RADIUS header", {
        code,
        networkId: undefined,
        as: "malformed",
      });
    }
    const client = await this.client(remote.address);
    if (!client) {
      return this.drop(remote, "unknown client address", {
        code,
        networkId: undefined,
        as: "unknown_client",
      });
    }

    // Retransmissions (same source, identifier and authenticator) get the same answer.
    const key = `${kind}|${remote.address}|${remote.port}|${message[1]}`;
    const authenticator = message.subarray(4, 20);
    const previous = this.seen.get(key);
    if (previous?.authenticator.equals(authenticator)) {
      if (previous.response) socket.send(previous.response, remote.port, remote.address);
      return;
    }
    const entry: Seen = {
      authenticator: Buffer.from(authenticator),
      response: null,
      expires: Date.now() + DUPLICATE_TTL_MS,
    };
    // Deleted first so that the map stays in order of expiry (sweep() stops at the first live one).
    this.seen.delete(key);
    this.seen.set(key, entry);

    let packet: RadiusPacket;
    try {
      packet = decodePacket(message, { secret: client.secret });
    } catch (error) {
      this.seen.delete(key);
      const counted = { code, networkId: client.id, as: "malformed" } as const;
      return this.drop(remote, "malformed packet", counted, { detail: (error as Error).message });
    }
    let response: Buffer | null = null;
    try {
      response = await this.answer(kind, client, packet, message, remote);
      if (response) entry.response = response;
    } finally {
      // A request that got no answer may be retransmitted: it must be decided again then.
      if (!entry.response) this.seen.delete(key);
    }
    if (!response) return;
    socket.send(response, remote.port, remote.address);
  }

  private async answer(
    kind: "auth" | "acct",
    client: RadiusClient,
    packet: RadiusPacket,
    message: Buffer,
    remote: RemoteInfo,
  ): Promise<Buffer | null> {
    const secret = client.secret;
    const proxyState: AttributeInput[] = packet.attributes
      .filter((a) => a.name === "Proxy-State")
      .map((a) => ["Proxy-State", a.raw] as const);
    const respond = (code: number, attributes: AttributeInput[]) =>
      encodePacket(
        { code, identifier: packet.identifier, attributes: [...attributes, ...proxyState] },
        secret,
        {
          requestAuthenticator: packet.authenticator,
          requestCode: packet.code,
          messageAuthenticator:
            code !== PacketCode.AccountingResponse || packet.code === PacketCode.StatusServer,
        },
      );
    const observer = this.options.observer;
    const dropped = (as: DropReason) => ({ code: packet.code, networkId: client.id, as });
    const hasMa = hasMessageAuthenticator(message);
    if (hasMa && !verifyMessageAuthenticator(message, secret, packet.authenticator)) {
      this.drop(remote, "bad Message-Authenticator (wrong shared secret?)", dropped("bad_authenticator"));
      return null;
    }

    if (packet.code === PacketCode.StatusServer) {
      observer?.status(client.id);
      return respond(kind === "auth" ? PacketCode.AccessAccept : PacketCode.AccountingResponse, []);
    }
    if (kind === "acct") {
      if (packet.code !== PacketCode.AccountingRequest) {
        this.drop(remote, `${packet.type} on the accounting port`, dropped("wrong_port"));
        return null;
      }
      if (!verifyRequestAuthenticator(message, secret)) {
        this.drop(remote, "bad Request Authenticator (wrong shared secret?)", dropped("bad_authenticator"));
        return null;
      }
      const pairs = pairsOf(packet);
      await this.options.aaa.account(client, pairs, remote.address);
      if (observer) {
        observer.accounting(client.id, pairs.find((p) => p.attribute === "Acct-Status-Type")?.value);
      }
      return respond(PacketCode.AccountingResponse, []);
    }
    if (packet.code !== PacketCode.AccessRequest) {
      this.drop(remote, `${packet.type} on the authentication port`, dropped("wrong_port"));
      return null;
    }
    if (!hasMa && client.require_message_authenticator) {
      this.drop(
        remote,
        "Message-Authenticator required for this network",
        dropped("message_authenticator_missing"),
      );
      return null;
    }
    if (packet.attributes.some((a) => a.name === "EAP-Message")) {
      let rejectReason: string | null = null;
      const response = await answerEap({
        engine: this.eap,
        aaa: this.options.aaa,
        client,
        packet,
        pairs: () => pairsOf(packet),
        address: remote.address,
        respond,
        drop: (reason) => this.drop(remote, reason, dropped("eap")),
        rejected: (reason) => {
          rejectReason = reason;
        },
        warn: (detail, text) => this.options.log.warn(detail, text),
      });
      if (response && observer) {
        const answered = response[0];
        observer.access(
          client.id,
          answered === PacketCode.AccessAccept
            ? "accept"
            : answered === PacketCode.AccessChallenge
              ? "challenge"
              : "reject",
          rejectReason,
        );
      }
      return response;
    }
    const chap = packet.attributes.find((a) => a.name === "CHAP-Password");
    const challenge = packet.attributes.find((a) => a.name === "CHAP-Challenge")?.raw ?? packet.authenticator;
    const password = packet.attributes.find((a) => a.name === "User-Password");
    const mschap = mschapV2Request(packet);
    const aaa = this.options.aaa;
    let outcome = await aaa.decide(client, pairsOf(packet), {
      // The decrypted octets, compared as octets (RFC 2865 section 5.2): never decoded to text.
      password: password?.raw,
      chap: chap ? (cleartext: string) => verifyChap(chap.raw, challenge, cleartext) : undefined,
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
      this.options.log.warn(
        { err: error, client: remote.address },
        "the answer cannot be encoded; rejecting",
      );
      outcome = aaa.rejectInstead(outcome, "the answer does not fit in a RADIUS packet");
      response = respond(PacketCode.AccessReject, []);
    }
    await aaa.record(outcome);
    observer?.access(client.id, outcome.result.accepted ? "accept" : "reject", outcome.result.reason);
    return response;
  }

  /**
   * Every second: answers are dropped as soon as their time is up, so at most ~1 s of traffic more
   * than DUPLICATE_TTL_MS is held (a sweep every 10 s held up to 20 s of answers, and the GC
   * marked them all again and again).
   */
  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.seen) {
      if (entry.expires > now) break;
      this.seen.delete(key);
    }
    if (now < this.nextSlowSweep) return;
    this.nextSlowSweep = now + DUPLICATE_TTL_MS;
    for (const [key, until] of this.logged) if (until <= now) this.logged.delete(key);
    for (const [key, entry] of this.clients) if (entry.expires <= now) this.clients.delete(key);
  }
}

/** The request's attributes in the text form check items compare with (User-Password as octets too). */
function pairsOf(packet: RadiusPacket): Pair[] {
  return packet.attributes.map((a) =>
    a.name === "User-Password"
      ? { attribute: a.name, op: "=", value: a.raw.toString("utf8"), raw: a.raw }
      : { attribute: a.tag === undefined ? a.name : `${a.name}:${a.tag}`, op: "=", value: a.value },
  );
}

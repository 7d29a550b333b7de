// One NAS's RadSec connection after its handshake: packets cut from the TLS stream, answered as
// they finish (many in flight, out of order: RFC 6614 section 2.5), duplicates of a request still
// in flight ignored, a malformed stream closing this connection only (RFC 6613 section 2.6.4), and
// Disconnect/CoA requests of ours sent down it with their answers read back (RFC 5176 over the
// NAS's own connection, as draft-ietf-radext-radiusdtls-bis section 3.6 allows).

import type { TLSSocket } from "node:tls";
import { RADIUS, runAs } from "../../core/audit/context.ts";
import type { RadiusClient } from "../../core/networks/service.ts";
import type { RadsecConnection } from "../../core/radsec/types.ts";
import type { DasAnswer, DasAttribute } from "../../core/sessions/das.ts";
import { type AnswerDeps, answerRequest } from "../answer.ts";
import { isResponseCode, PacketCode } from "../packet.ts";
import { FramingError, PacketFramer } from "./framing.ts";
import type { OutgoingRequest, Wire } from "./wire.ts";

export interface ConnectionSettings {
  /** Closed after this long without a packet from the NAS. */
  idleTimeoutMs: number;
  /** Closed when part of a packet waits this long for the rest (a slow sender holds nothing long). */
  partialTimeoutMs: number;
  /** Requests decided at once; past it the connection is not read until one finishes. */
  maxInFlight: number;
  /** How long a Disconnect/CoA request of ours waits for its answer. */
  dasTimeoutMs: number;
}

export const DEFAULT_CONNECTION_SETTINGS: ConnectionSettings = {
  idleTimeoutMs: 300_000,
  partialTimeoutMs: 10_000,
  maxInFlight: 256,
  dasTimeoutMs: 5_000,
};

export type DasOutcome = DasAnswer | { result: "error"; cause: string };

interface Waiting {
  request: OutgoingRequest;
  resolve(answer: DasOutcome): void;
  timer: NodeJS.Timeout;
}

export interface ConnectionHooks {
  /** Counts and logs a request not answered, or why the connection closes. */
  drop(connection: NasConnection, code: number, reason: string): void;
  closed(connection: NasConnection, reason: string): void;
  error(connection: NasConnection, error: unknown): void;
}

export class NasConnection {
  private readonly framer = new PacketFramer();
  private readonly inFlight = new Set<string>();
  private readonly waiting = new Map<string, Waiting>();
  private idleTimer: NodeJS.Timeout | undefined;
  private partialTimer: NodeJS.Timeout | undefined;
  private paused = false;
  private closing: string | undefined;
  /** The NAS's address without the port, as the records name it. */
  private readonly address: string;

  constructor(
    private readonly socket: TLSSocket,
    /** The network, with the RadSec secret in place of its UDP one; refreshed by the listener. */
    public client: RadiusClient,
    private readonly wire: Wire,
    readonly info: RadsecConnection,
    /** The NAS's certificates, DER, leaf first (the listener identifies it again with them). */
    readonly chain: Buffer[],
    private readonly deps: AnswerDeps,
    private readonly settings: ConnectionSettings,
    private readonly hooks: ConnectionHooks,
  ) {
    this.address = info.remote.slice(0, info.remote.lastIndexOf(":"));
    // Changes a packet makes on its own are audited as RADIUS's (core/audit/context.ts).
    const actor = { ...RADIUS, address: socket.remoteAddress ?? "" };
    socket.on("data", (chunk: Buffer) => runAs(actor, () => this.receive(chunk)));
    socket.on("error", () => this.close("connection error"));
    socket.on("close", () => this.finish());
    this.touch();
  }

  get protocol() {
    return this.wire.protocol;
  }

  /** Ends the connection (once); `reason` is logged by the listener. */
  close(reason: string): void {
    if (this.closing) return;
    this.closing = reason;
    this.socket.destroy();
  }

  private finish(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.partialTimer);
    const reason = this.closing ?? "closed by the NAS";
    this.closing = reason;
    for (const [key, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      this.waiting.delete(key);
      waiting.resolve({ result: "error", cause: "the RadSec connection closed before an answer" });
    }
    this.hooks.closed(this, reason);
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close("idle"), this.settings.idleTimeoutMs).unref();
  }

  private receive(chunk: Buffer): void {
    if (this.closing) return;
    let packets: Buffer[];
    try {
      packets = this.framer.push(chunk);
    } catch (error) {
      if (!(error instanceof FramingError)) throw error;
      this.hooks.drop(this, chunk[0] ?? 0, error.message);
      this.close(`malformed stream: ${error.message}`);
      return;
    }
    this.touch();
    if (!this.framer.partial) {
      clearTimeout(this.partialTimer);
      this.partialTimer = undefined;
    } else if (!this.partialTimer) {
      this.partialTimer = setTimeout(
        () => this.close("a packet was left unfinished"),
        this.settings.partialTimeoutMs,
      ).unref();
    }
    for (const message of packets) {
      if (this.closing) return;
      this.deps.observer?.received("radsec");
      if (isResponseCode(message[0]!)) this.settle(message);
      else this.handle(message);
    }
  }

  private handle(message: Buffer): void {
    const key = this.wire.key(message);
    // A copy of a request still being decided: the first one's answer serves both.
    if (this.inFlight.has(key)) return;
    let packet: ReturnType<Wire["decode"]>;
    try {
      packet = this.wire.decode(message);
    } catch (error) {
      this.hooks.drop(this, message[0]!, `malformed packet: ${(error as Error).message}`);
      this.close(`malformed packet: ${(error as Error).message}`);
      return;
    }
    this.inFlight.add(key);
    if (this.inFlight.size >= this.settings.maxInFlight && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    answerRequest(this.deps, {
      port: "any",
      client: this.client,
      packet,
      message,
      address: this.address,
      enforceMessageAuthenticator: false,
      encode: this.wire.answerer(packet),
      unsigned: this.wire.unsigned,
      drop: (reason) => this.hooks.drop(this, packet.code, reason),
    })
      .then((answer) => {
        if (answer && !this.closing) this.socket.write(answer);
      })
      .catch((error) => this.hooks.error(this, error))
      .finally(() => {
        this.inFlight.delete(key);
        if (this.paused && this.inFlight.size < this.settings.maxInFlight) {
          this.paused = false;
          this.socket.resume();
        }
      });
  }

  /** A response from the NAS: the answer to one of our Disconnect/CoA requests, or ignored. */
  private settle(message: Buffer): void {
    const key = this.wire.key(message);
    const waiting = this.waiting.get(key);
    if (!waiting?.request.answers(message)) {
      this.hooks.drop(this, message[0]!, "a response that answers no request of ours");
      return;
    }
    this.waiting.delete(key);
    clearTimeout(waiting.timer);
    const code = message[0]!;
    if (code === PacketCode.DisconnectAck || code === PacketCode.CoaAck) {
      waiting.resolve({ result: "ack" });
      return;
    }
    if (code !== PacketCode.DisconnectNak && code !== PacketCode.CoaNak) {
      waiting.resolve({ result: "error", cause: `the NAS answered with code ${code}` });
      return;
    }
    let cause: string | null = null;
    try {
      const packet = this.wire.decode(message, waiting.request.authenticator);
      cause = packet.attributes.find((a) => a.name === "Error-Cause")?.value ?? null;
    } catch {
      // A NAK whose attributes do not parse is still a NAK.
    }
    waiting.resolve({ result: "nak", errorCause: cause });
  }

  /** Sends a Disconnect-Request or CoA-Request down this connection and waits for its answer. */
  send(kind: "disconnect" | "coa", attributes: readonly DasAttribute[]): Promise<DasOutcome> {
    if (this.closing) return Promise.resolve({ result: "error", cause: "the RadSec connection is closed" });
    const code = kind === "disconnect" ? PacketCode.DisconnectRequest : PacketCode.CoaRequest;
    const request = this.wire.request(code, attributes);
    if (this.waiting.has(request.key)) {
      return Promise.resolve({ result: "error", cause: "too many requests outstanding on the connection" });
    }
    return new Promise<DasOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(request.key);
        resolve({ result: "timeout" });
      }, this.settings.dasTimeoutMs);
      this.waiting.set(request.key, { request, resolve, timer });
      this.socket.write(request.bytes);
    });
  }
}

// The RADIUS door: UDP sockets for authentication and accounting. It finds the client (a Wisp
// network) by source address, checks the packet's authenticators, answers duplicates from a
// cache, and hands the attributes to the AAA service, which decides. Bad packets are dropped and
// logged, never answered.

import { createSocket, type RemoteInfo, type Socket, type SocketOptions } from "node:dgram";
import { lookup as dnsLookup } from "node:dns";
import { isIP } from "node:net";
import type { AaaService } from "../core/aaa/service.ts";
import { RADIUS, runAs } from "../core/audit/context.ts";
import type { RadiusClient } from "../core/networks/service.ts";
import {
  type AnswerDeps,
  answerRequest,
  type DropReason,
  type RadiusLog,
  type RadiusObserver,
} from "./answer.ts";
import { DuplicateCache, requestKey } from "./duplicates.ts";
import { EapEngine } from "./eap/engine.ts";
import { createInnerMsChapV2 } from "./eap/methods/inner-mschapv2.ts";
import { openSslAddon } from "./eap/native-addon.ts";
import type { EapLimits, EapOptions, TlsEngine } from "./eap/types.ts";
import { decodePacket, type RadiusPacket } from "./packet.ts";

export type { DropReason, RadiusLog, RadiusObserver } from "./answer.ts";

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

/**
 * dgram resolves the address of every send through `lookup`, dns.lookup by default, whose answer
 * for an IP literal still comes a tick later (a process.nextTick and its async-hook events per
 * answer). Every answer goes to the address a request came from, an IP literal: given at once.
 */
const literalLookup: SocketOptions["lookup"] = (address, family, callback) => {
  const version = isIP(address);
  if (version === 0) {
    dnsLookup(address, family, callback);
    return;
  }
  callback(null, address, version);
};

/** How long answers are kept for retransmissions (FreeRADIUS's cleanup_delay is 5 s). */
const DUPLICATE_TTL_MS = 10_000;
/** How long a client lookup by address is trusted. */
const CLIENT_TTL_MS = 5_000;
/** At most one "dropped" log line per address and reason in this time. */
const LOG_EVERY_MS = 10_000;

export class RadiusServer {
  private readonly sockets: Socket[] = [];
  private readonly seen = new DuplicateCache(DUPLICATE_TTL_MS);
  private readonly clients = new Map<string, { client: RadiusClient | undefined; expires: number }>();
  private readonly logged = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;
  private nextSlowSweep = 0;
  /** Ports actually bound (useful when 0 was not meant as "off" but the OS picked). */
  readonly ports: { auth?: number; acct?: number } = {};
  readonly eap: EapEngine | undefined;
  /** What answering needs; the RadSec listener answers with the same (one EAP engine for both). */
  readonly deps: AnswerDeps;

  constructor(private readonly options: RadiusServerOptions) {
    this.eap = options.eap
      ? new EapEngine(options.eap, { mschapv2: createInnerMsChapV2 }, options.eapLimits)
      : undefined;
    this.deps = { aaa: options.aaa, eap: this.eap, log: options.log, observer: options.observer };
  }

  async start(): Promise<void> {
    const { host, authPort, acctPort } = this.options;
    if (this.eap) this.logTlsEngine(this.eap.tlsEngine);
    if (authPort > 0) this.ports.auth = await this.bind(host, authPort, "auth");
    if (acctPort > 0) this.ports.acct = await this.bind(host, acctPort, "acct");
    this.sweeper = setInterval(() => this.sweep(), 1000).unref();
  }

  /** Which engine runs EAP's TLS, and why not the addon when it was left to choose and could not. */
  private logTlsEngine(engine: TlsEngine): void {
    const found = openSslAddon();
    if (engine === "node" && (this.options.eapLimits?.tlsEngine ?? "auto") === "auto" && "error" in found) {
      this.options.log.warn(
        { reason: found.error },
        "EAP TLS on node's TLS sockets: the OpenSSL addon is not built",
      );
    } else {
      this.options.log.info({ engine }, "EAP TLS engine");
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.eap?.close();
    await Promise.all(this.sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    this.sockets.length = 0;
  }

  private bind(host: string, port: number, kind: "auth" | "acct"): Promise<number> {
    const socket = createSocket({
      type: host.includes(":") ? "udp6" : "udp4",
      reuseAddr: false,
      lookup: literalLookup,
    });
    socket.on("message", (message, remote) => {
      // What a packet changes on its own (a voucher activated, a quota disconnect queued) is audited
      // as RADIUS's, from the client's address (core/audit/context.ts).
      const actor = { ...RADIUS, address: remote.address };
      runAs(actor, () => this.receive(socket, kind, message, remote)).catch((error) => {
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

  /** The network a known address belongs to, looked up again every CLIENT_TTL_MS. */
  private async lookUpClient(address: string): Promise<RadiusClient | undefined> {
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
    this.options.observer?.received("udp");
    if (message.length < 20) {
      return this.drop(remote, "shorter than a RADIUS header", {
        code,
        networkId: undefined,
        as: "malformed",
      });
    }
    // Read from the cache without an await: nearly every packet finds its client there.
    const cached = this.clients.get(remote.address);
    const client =
      cached && cached.expires > Date.now() ? cached.client : await this.lookUpClient(remote.address);
    if (!client) {
      return this.drop(remote, "unknown client address", {
        code,
        networkId: undefined,
        as: "unknown_client",
      });
    }

    // Retransmissions (same source, identifier and authenticator) get the same answer.
    const key = requestKey(kind === "acct", remote.port, message[1]!);
    const authenticator = message.subarray(4, 20);
    const seen = this.seen.check(remote.address, key, authenticator, Date.now());
    if (seen !== "new") {
      // A copy: the cache's chunk may be reused before a queued send is done with it.
      if (seen !== "in-progress") socket.send(Buffer.from(seen), remote.port, remote.address);
      return;
    }
    let packet: RadiusPacket;
    try {
      packet = decodePacket(message, { secret: client.secret });
    } catch (error) {
      this.seen.abandoned(remote.address, key, authenticator);
      const counted = { code, networkId: client.id, as: "malformed" } as const;
      return this.drop(remote, "malformed packet", counted, { detail: (error as Error).message });
    }
    let response: Buffer | null = null;
    try {
      response = await this.answer(kind, client, packet, message, remote);
    } finally {
      // A request that got no answer may be retransmitted: it must be decided again then.
      if (response) this.seen.answered(remote.address, key, authenticator, response, Date.now());
      else this.seen.abandoned(remote.address, key, authenticator);
    }
    if (!response) return;
    socket.send(response, remote.port, remote.address);
  }

  private answer(
    kind: "auth" | "acct",
    client: RadiusClient,
    packet: RadiusPacket,
    message: Buffer,
    remote: RemoteInfo,
  ): Promise<Buffer | null> {
    return answerRequest(this.deps, {
      port: kind,
      client,
      packet,
      message,
      address: remote.address,
      enforceMessageAuthenticator: true,
      drop: (reason, as) => this.drop(remote, reason, { code: packet.code, networkId: client.id, as }),
    });
  }

  /** Every second: answers past DUPLICATE_TTL_MS go; every DUPLICATE_TTL_MS, the log and client caches' old entries. */
  private sweep(): void {
    const now = Date.now();
    this.seen.sweep(now);
    if (now < this.nextSlowSweep) return;
    this.nextSlowSweep = now + DUPLICATE_TTL_MS;
    for (const [key, until] of this.logged) if (until <= now) this.logged.delete(key);
    for (const [key, entry] of this.clients) if (entry.expires <= now) this.clients.delete(key);
  }
}

// A small RADIUS client over UDP: one socket, one identifier space per socket (256 requests in
// flight), retransmission of the same bytes (RFC 5080), and responses accepted only from the
// address asked, with the right identifier, code and authenticators. Used by `wisp radius test`
// and by tests.

import { randomBytes } from "node:crypto";
import dgram from "node:dgram";
import { lookup } from "node:dns/promises";
import { isIP, isIPv6 } from "node:net";
import { ntPasswordHash } from "../core/aaa/nt-hash.ts";
import { generateAuthenticatorResponse, generateNtResponse } from "./mschap/mschapv2.ts";
import {
  type AttributeInput,
  chapPassword,
  decodePacket,
  encodePacket,
  hasMessageAuthenticator,
  packetCode,
  packetCodeName,
  type RadiusPacket,
  verifyResponse,
} from "./packet.ts";

/** What to send; accessRequestPap / accessRequestChap build one. */
export interface RadiusRequest {
  /** Number or FreeRADIUS name ("Accounting-Request"). */
  code: number | string;
  attributes?: readonly AttributeInput[];
  /** Access-Request / Status-Server: the Request Authenticator (CHAP uses it as the challenge). */
  authenticator?: Buffer;
}

export interface SendOptions extends RadiusRequest {
  host: string;
  port: number;
  secret: string | Buffer;
  /** Wait for a response this long per attempt; default 3000 ms. */
  timeoutMs?: number;
  /** Retransmissions after the first send; default 2. */
  retries?: number;
  /** Add a Message-Authenticator (first). Status-Server always gets one. */
  messageAuthenticator?: boolean;
  /** Refuse responses without a Message-Authenticator (BlastRADIUS hardening). */
  requireMessageAuthenticator?: boolean;
  signal?: AbortSignal;
}

export class RadiusTimeoutError extends Error {
  override readonly name = "RadiusTimeoutError";
}

/** A response that arrived but cannot be trusted or read: wrong secret, wrong code, malformed. */
export class RadiusResponseError extends Error {
  override readonly name = "RadiusResponseError";
}

/** Response codes that may answer each request code. */
const ANSWERS: Record<number, readonly number[]> = {
  1: [2, 3, 11],
  4: [5],
  12: [2, 3, 5],
  40: [41, 42],
  43: [44, 45],
};

interface Pending {
  address: string;
  port: number;
  requestCode: number;
  authenticator: Buffer;
  secret: string | Buffer;
  requireMa: boolean;
  settle: (error: Error | undefined, packet?: RadiusPacket) => void;
}

export class RadiusClient {
  private socket: dgram.Socket | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = randomBytes(1)[0]!;

  /** `family` 6 for IPv6 servers; a hostname is resolved in that family. */
  constructor(private readonly family: 4 | 6 = 4) {}

  private open(): dgram.Socket {
    if (this.socket) return this.socket;
    const socket = dgram.createSocket(this.family === 6 ? "udp6" : "udp4");
    socket.on("message", (msg, rinfo) => this.receive(msg, rinfo));
    // A send error (e.g. ICMP unreachable on some systems) fails nothing by itself: retries decide.
    socket.on("error", () => {});
    this.socket = socket;
    return socket;
  }

  /** A free identifier, or undefined when 256 requests are in flight on this socket. */
  private allocateId(): number | undefined {
    for (let i = 0; i < 256; i++) {
      const id = (this.nextId + i) & 0xff;
      if (!this.pending.has(id)) {
        this.nextId = (id + 1) & 0xff;
        return id;
      }
    }
    return undefined;
  }

  private receive(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (msg.length < 20) return;
    const p = this.pending.get(msg[1]!);
    // Silently ignore what does not answer a request of ours (RFC 2865 §3).
    if (!p || rinfo.port !== p.port || rinfo.address !== p.address) return;
    const name = packetCodeName(msg[0]!) ?? String(msg[0]);
    let problem: string | undefined;
    if (!ANSWERS[p.requestCode]?.includes(msg[0]!)) problem = `unexpected ${name} in response`;
    else if (!verifyResponse(msg, p.secret, p.authenticator)) {
      problem = `${name} failed verification (is the shared secret right?)`;
    } else if (p.requireMa && !hasMessageAuthenticator(msg)) problem = `${name} has no Message-Authenticator`;
    if (problem) {
      p.settle(new RadiusResponseError(problem));
      return;
    }
    try {
      p.settle(undefined, decodePacket(msg, { secret: p.secret, requestAuthenticator: p.authenticator }));
    } catch (err) {
      p.settle(new RadiusResponseError(`malformed ${name}: ${(err as Error).message}`));
    }
  }

  /** Sends a request and resolves with the decoded, verified response. */
  async send(options: SendOptions): Promise<RadiusPacket> {
    const code = packetCode(options.code);
    if (code === undefined || !ANSWERS[code]) throw new TypeError(`cannot send ${options.code} as a client`);
    options.signal?.throwIfAborted();
    const address = isIP(options.host)
      ? options.host
      : (await lookup(options.host, { family: this.family })).address;
    const socket = this.open();
    const id = this.allocateId();
    if (id === undefined) throw new Error("no free RADIUS identifier: 256 requests in flight");
    const request = encodePacket(
      { code, identifier: id, attributes: options.attributes ?? [], authenticator: options.authenticator },
      options.secret,
      { messageAuthenticator: options.messageAuthenticator },
    );
    const timeoutMs = options.timeoutMs ?? 3000;
    const attempts = 1 + (options.retries ?? 2);
    return new Promise<RadiusPacket>((resolve, reject) => {
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => settle(options.signal?.reason ?? new Error("aborted"));
      const settle = (error: Error | undefined, packet?: RadiusPacket) => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        this.pending.delete(id);
        if (this.pending.size === 0) this.socket?.unref();
        if (error) reject(error);
        else resolve(packet!);
      };
      const transmit = () => {
        if (sent === attempts) {
          const what = `${packetCodeName(code)} to ${options.host}:${options.port}`;
          settle(new RadiusTimeoutError(`no response to ${what} after ${attempts} attempts`));
          return;
        }
        sent++;
        socket.send(request, options.port, address);
        timer = setTimeout(transmit, timeoutMs);
      };
      this.pending.set(id, {
        address,
        port: options.port,
        requestCode: code,
        authenticator: request.subarray(4, 20),
        secret: options.secret,
        requireMa: options.requireMessageAuthenticator ?? false,
        settle,
      });
      options.signal?.addEventListener("abort", onAbort, { once: true });
      socket.ref();
      transmit();
    });
  }

  /** Closes the socket; requests still in flight fail. */
  close(): void {
    for (const p of [...this.pending.values()]) p.settle(new Error("RADIUS client closed"));
    this.socket?.close();
    this.socket = undefined;
  }
}

/** One request on a socket of its own: the simple way for the CLI and tests. */
export async function sendRadius(options: SendOptions): Promise<RadiusPacket> {
  const client = new RadiusClient(isIPv6(options.host) ? 6 : 4);
  try {
    return await client.send(options);
  } finally {
    client.close();
  }
}

/** An Access-Request with User-Name and User-Password (hidden by the encoder). */
export function accessRequestPap(
  username: string,
  password: string,
  attributes: readonly AttributeInput[] = [],
): RadiusRequest {
  return {
    code: 1,
    attributes: [["User-Name", username], ["User-Password", password], ...attributes],
  };
}

/**
 * An Access-Request with CHAP-Password. Without `challenge` the Request Authenticator is the
 * challenge (as radtest -t chap does); with one, it goes in CHAP-Challenge.
 */
export function accessRequestChap(
  username: string,
  password: string,
  attributes: readonly AttributeInput[] = [],
  options: { challenge?: Buffer; ident?: number } = {},
): RadiusRequest {
  const ident = options.ident ?? randomBytes(1)[0]!;
  if (options.challenge) {
    return {
      code: 1,
      attributes: [
        ["User-Name", username],
        ["CHAP-Password", chapPassword(ident, password, options.challenge)],
        ["CHAP-Challenge", options.challenge],
        ...attributes,
      ],
    };
  }
  const authenticator = randomBytes(16);
  return {
    code: 1,
    authenticator,
    attributes: [
      ["User-Name", username],
      ["CHAP-Password", chapPassword(ident, password, authenticator)],
      ...attributes,
    ],
  };
}

/**
 * An Access-Request with MS-CHAP-Challenge and MS-CHAP2-Response (RFC 2548 section 2.3.2: Ident,
 * Flags 0, Peer-Challenge, 8 reserved octets, NT-Response), both challenges random, and the
 * MS-CHAP2-Success value (Ident + "S=...", RFC 2759 section 8.7) a server that knows the password
 * answers with: the peer checks it (mutual authentication).
 */
export function accessRequestMschapv2(
  username: string,
  password: string,
  attributes: readonly AttributeInput[] = [],
): RadiusRequest & { expectedSuccess: Buffer } {
  const ident = randomBytes(1)[0]!;
  const authenticatorChallenge = randomBytes(16);
  const peerChallenge = randomBytes(16);
  const hash = ntPasswordHash(password);
  const ntResponse = generateNtResponse(authenticatorChallenge, peerChallenge, username, hash);
  const success = generateAuthenticatorResponse(
    hash,
    ntResponse,
    peerChallenge,
    authenticatorChallenge,
    username,
  );
  return {
    code: 1,
    attributes: [
      ["User-Name", username],
      ["MS-CHAP-Challenge", authenticatorChallenge],
      ["MS-CHAP2-Response", Buffer.concat([Buffer.of(ident, 0), peerChallenge, Buffer.alloc(8), ntResponse])],
      ...attributes,
    ],
    expectedSuccess: Buffer.concat([Buffer.of(ident), Buffer.from(success, "ascii")]),
  };
}

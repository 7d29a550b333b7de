// The RadSec benchmark's load: lean pipelined RADIUS clients over UDP and over TLS (RFC 6614 /
// draft-ietf-radext-radiusdtls-bis: the same packets, a 4-octet header's Length frames them on the
// stream, secret "radsec"), the same code for both so the transports are compared and not the
// clients; and a TLS handshake loop (full or resumed) for the handshake cost.
import dgram from "node:dgram";
import tls from "node:tls";
import {
  type AttributeInput,
  decodePacket,
  encodePacket,
  type RadiusPacket,
  verifyResponse,
} from "../src/radius/packet.ts";

interface Waiting {
  auth: Buffer;
  resolve(answer: RadiusPacket | undefined): void;
  timer: NodeJS.Timeout;
}

/** Up to 256 requests in flight (one per Identifier), answers matched by Identifier. */
abstract class PipelinedClient {
  private readonly pending = new Map<number, Waiting>();
  private readonly free: number[] = Array.from({ length: 256 }, (_, i) => i);
  protected constructor(
    private readonly secret: string,
    private readonly timeoutMs: number,
  ) {}

  protected abstract transmit(bytes: Buffer): void;
  abstract close(): void;

  /** An Access-Request; undefined when no valid answer came in time. */
  request(attributes: readonly AttributeInput[]): Promise<RadiusPacket | undefined> {
    const identifier = this.free.pop();
    if (identifier === undefined) throw new Error("more than 256 requests in flight on one client");
    const bytes = encodePacket({ code: 1, identifier, attributes }, this.secret, {
      messageAuthenticator: true,
    });
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(identifier, undefined), this.timeoutMs);
      this.pending.set(identifier, { auth: Buffer.from(bytes.subarray(4, 20)), resolve, timer });
      this.transmit(bytes);
    });
  }

  protected answered(message: Buffer): void {
    const waiting = this.pending.get(message[1]!);
    if (!waiting) return;
    // RFC 2865 section 3 (Response Authenticator) and RFC 3579 3.2 (Message-Authenticator).
    if (!verifyResponse(message, this.secret, waiting.auth)) return;
    const packet = decodePacket(message, { secret: this.secret, requestAuthenticator: waiting.auth });
    this.settle(message[1]!, packet);
  }

  private settle(identifier: number, answer: RadiusPacket | undefined): void {
    const waiting = this.pending.get(identifier);
    if (!waiting) return;
    clearTimeout(waiting.timer);
    this.pending.delete(identifier);
    this.free.push(identifier);
    waiting.resolve(answer);
  }
}

export class UdpClient extends PipelinedClient {
  private constructor(
    private readonly socket: dgram.Socket,
    secret: string,
    timeoutMs: number,
  ) {
    super(secret, timeoutMs);
    socket.on("message", (message) => this.answered(message));
  }

  static async connect(host: string, port: number, secret: string, timeoutMs = 5000): Promise<UdpClient> {
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => socket.connect(port, host, resolve));
    return new UdpClient(socket, secret, timeoutMs);
  }

  protected transmit(bytes: Buffer): void {
    this.socket.send(bytes);
  }

  close(): void {
    this.socket.close();
  }
}

export interface TlsPeer {
  host: string;
  port: number;
  /** PEM: the client certificate and key, the CA of the server's certificate. */
  cert: string;
  key: string;
  ca: string;
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
}

export class RadsecClient extends PipelinedClient {
  private buffered: Buffer = Buffer.alloc(0);

  private constructor(
    private readonly socket: tls.TLSSocket,
    timeoutMs: number,
  ) {
    super("radsec", timeoutMs);
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("error", () => {});
  }

  static async connect(peer: TlsPeer, timeoutMs = 5000): Promise<RadsecClient> {
    const socket = await handshake(peer);
    socket.setNoDelay(true);
    return new RadsecClient(socket, timeoutMs);
  }

  protected transmit(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  close(): void {
    this.socket.destroy();
  }

  /** The stream carries whole packets back to back; the header's Length (RFC 2865 section 3) splits them. */
  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    while (this.buffered.length >= 4) {
      const length = this.buffered.readUInt16BE(2);
      if (length < 20) {
        this.socket.destroy();
        return;
      }
      if (this.buffered.length < length) return;
      this.answered(Buffer.from(this.buffered.subarray(0, length)));
      this.buffered = this.buffered.subarray(length);
    }
  }
}

function handshake(peer: TlsPeer, session?: Buffer): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: peer.host,
      port: peer.port,
      cert: peer.cert,
      key: peer.key,
      ca: peer.ca,
      minVersion: peer.minVersion ?? "TLSv1.2",
      maxVersion: peer.maxVersion ?? "TLSv1.3",
      session,
      // The bench pins by CA; the server's name is not what is measured.
      checkServerIdentity: () => undefined,
    });
    socket.once("secureConnect", () => {
      socket.off("error", reject);
      if (!socket.authorized) {
        socket.destroy();
        reject(new Error(`server certificate not trusted: ${socket.authorizationError}`));
        return;
      }
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** A session to resume: TLS 1.3 sends its ticket after the handshake, so wait for it. */
export function sessionOf(peer: TlsPeer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    handshake(peer).then((socket) => {
      const timer = setTimeout(() => reject(new Error("no session ticket within 5 s")), 5000);
      socket.once("session", (session: Buffer) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(session);
      });
      // TLS 1.2: the session is known at once.
      if (socket.getProtocol() === "TLSv1.2") socket.emit("session", socket.getSession()!);
    }, reject);
  });
}

export interface HandshakeRun {
  handshakes: number;
  resumed: number;
  failed: number;
  seconds: number;
  perSecond: number;
  protocol: string | undefined;
}

/** `concurrency` loops of connect-handshake-close for `seconds`; with `session`, each offers it. */
export async function handshakeLoop(
  peer: TlsPeer,
  seconds: number,
  concurrency: number,
  session?: Buffer,
): Promise<HandshakeRun> {
  const until = performance.now() + seconds * 1000;
  const run = { handshakes: 0, resumed: 0, failed: 0, protocol: undefined as string | undefined };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        try {
          const socket = await handshake(peer, session);
          run.handshakes++;
          if (socket.isSessionReused()) run.resumed++;
          run.protocol ??= socket.getProtocol() ?? undefined;
          socket.destroy();
        } catch {
          run.failed++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { ...run, seconds: elapsed, perSecond: Math.round(run.handshakes / elapsed) };
}

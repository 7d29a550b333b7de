// A RadSec client for the tests, written from the specifications (RFC 6614 / draft-ietf-radext-
// radiusdtls-bis; RFC 9765 for RADIUS/1.1 through ALPN): many requests in flight on one TLS
// connection, answers matched by Identifier (1.0) or Token (1.1), Disconnect/CoA requests from the
// server answered by a handler the test gives. It can also send raw bytes (the bad-input tests).
import tls from "node:tls";
import {
  type AttributeInput,
  decodePacket,
  encodePacket,
  isResponseCode,
  type RadiusPacket,
  tokenCounter,
  tokenOf,
  verifyResponse,
} from "../../src/radius/packet.ts";

export interface RadsecClientOptions {
  host: string;
  port: number;
  cert?: string;
  key?: string;
  /** CA that signed the server's certificate. */
  ca: string;
  alpn?: string[];
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
  session?: Buffer;
}

type Handler = (request: RadiusPacket) => { code: number; attributes: AttributeInput[] } | null;

export class RadsecTestClient {
  private buffered = Buffer.alloc(0);
  private nextId = 0;
  private readonly nextToken = tokenCounter();
  private readonly pending = new Map<string, { resolve(p: RadiusPacket): void; auth: Buffer }>();
  /** Answers the server's Disconnect/CoA requests (default: none). */
  onRequest: Handler | undefined;
  readonly closed: Promise<void>;
  readonly requests: RadiusPacket[] = [];
  /** The same requests as received, bytes. */
  readonly rawRequests: Buffer[] = [];
  /** Answers to bytes written with write() (no request() waiting for them), as received. */
  readonly unmatched: Buffer[] = [];

  private constructor(readonly socket: tls.TLSSocket) {
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => {});
  }

  static connect(options: RadsecClientOptions): Promise<RadsecTestClient> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({
        host: options.host,
        port: options.port,
        cert: options.cert,
        key: options.key,
        ca: options.ca,
        ALPNProtocols: options.alpn,
        minVersion: options.minVersion ?? "TLSv1.2",
        maxVersion: options.maxVersion ?? "TLSv1.3",
        session: options.session,
        // The chain is checked against `ca`; the name is not (the lab's server has no DNS name).
        checkServerIdentity: () => undefined,
      });
      socket.once("secureConnect", () => {
        socket.off("error", reject);
        resolve(new RadsecTestClient(socket));
      });
      socket.once("error", reject);
    });
  }

  get radius11(): boolean {
    return this.socket.alpnProtocol === "radius/1.1";
  }

  /** Sends a request and resolves with its (verified, decoded) answer. */
  request(code: number, attributes: AttributeInput[]): Promise<RadiusPacket> {
    let bytes: Buffer;
    let key: string;
    if (this.radius11) {
      const token = this.nextToken();
      bytes = encodePacket({ code, identifier: 0, attributes }, "", { radius11: { token } });
      key = token.toString("hex");
    } else {
      const identifier = this.nextId++ & 0xff;
      bytes = encodePacket({ code, identifier, attributes }, "radsec", { messageAuthenticator: code === 1 });
      key = String(identifier);
    }
    return new Promise((resolve) => {
      this.pending.set(key, { resolve, auth: Buffer.from(bytes.subarray(4, 20)) });
      this.socket.write(bytes);
    });
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 4) {
      const length = this.buffered.readUInt16BE(2);
      if (this.buffered.length < length) return;
      const message = this.buffered.subarray(0, length);
      this.buffered = this.buffered.subarray(length);
      if (isResponseCode(message[0]!)) this.answered(Buffer.from(message));
      else this.served(Buffer.from(message));
    }
  }

  private answered(message: Buffer): void {
    const key = this.radius11 ? tokenOf(message).toString("hex") : String(message[1]);
    const waiting = this.pending.get(key);
    if (!waiting) {
      this.unmatched.push(message);
      return;
    }
    this.pending.delete(key);
    if (this.radius11) {
      waiting.resolve(decodePacket(message, { radius11: true }));
      return;
    }
    if (!verifyResponse(message, "radsec", waiting.auth)) throw new Error("bad Response Authenticator");
    waiting.resolve(decodePacket(message, { secret: "radsec", requestAuthenticator: waiting.auth }));
  }

  private served(message: Buffer): void {
    const request = this.radius11
      ? decodePacket(message, { radius11: true })
      : decodePacket(message, { secret: "radsec" });
    this.requests.push(request);
    this.rawRequests.push(message);
    const answer = this.onRequest?.(request);
    if (!answer) return;
    const bytes = this.radius11
      ? encodePacket({ ...answer, identifier: request.identifier }, "", {
          radius11: { token: request.token! },
        })
      : encodePacket({ ...answer, identifier: request.identifier }, "radsec", {
          requestAuthenticator: request.authenticator,
          requestCode: request.code,
        });
    this.socket.write(bytes);
  }
}

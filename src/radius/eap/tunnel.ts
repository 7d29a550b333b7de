// One TLS server connection held in memory: node's TLSSocket (isServer) over a Duplex whose
// wire is the EAP conversation. The supplicant's reassembled TLS data goes in; whatever TLS
// answers comes out to be fragmented. No sockets, no openssl process: OpenSSL inside node does
// the TLS (RFC 5246 / RFC 8446), this class only moves octets and waits for them.

import { Duplex } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { type SecureContext, TLSSocket } from "node:tls";
import { type PresentedCertificate, presentedCertificate } from "../../core/certs/presented.ts";
import { masterSessionKey } from "./keys.ts";

/**
 * What one TLS server connection holds, charged to its EAP conversation (issue 22 point 7):
 * OpenSSL's state lives outside the JS heap and cannot be measured per connection. Measured on
 * node 20 (OpenSSL 3) over 1,000-5,000 conversations each fed a real ClientHello and holding the
 * server's first flight, with process.memoryUsage() after gc() (bench/eap-memory.ts over RADIUS;
 * the engine alone, TLS 1.2 and 1.3, P-256 and RSA-2048 certificates): RSS grew 53-59 KiB per
 * conversation, about 6 KiB of it JS heap, 1-1.4 KiB the server's flight and 1.4-1.7 KiB the
 * conversation without TLS. 64 KiB rounds the TLS part up with room for allocator slack (an
 * outside review measured 69 KB per whole conversation).
 */
export const TLS_TUNNEL_BYTES = 64 * 1024;

/**
 * A TLS server connection as the EAP methods use it: in this thread (TlsTunnel) or on a worker
 * thread of the TLS pool (./tls-pool.ts). Its state is read after `receive` and `send` answer:
 * at once on OpenSSL's memory BIOs (./native-tunnel.ts), a promise on node's TLS sockets and on the
 * pool. The callers await only a promise: an await of a plain value still costs a turn of the
 * microtask queue, and these run at every round trip.
 */
export interface Tunnel {
  /** Why TLS gave up (bad records, failed handshake); the conversation ends. */
  readonly failure: string | undefined;
  /** The handshake is done. */
  readonly secure: boolean;
  /** "TLSv1.2", "TLSv1.3"; null before the handshake. */
  readonly protocol: string | null;
  /** Hands TLS records from the supplicant to TLS; TLS's answer (maybe empty). */
  receive(records: Buffer): Buffer | Promise<Buffer>;
  /** Encrypts application data for the supplicant (inner method packets). */
  send(plain: Buffer): Buffer | Promise<Buffer>;
  /** Application data received since the last call. */
  takeApplicationData(): Buffer;
  /** The client certificate's verification error against the trusted CAs, or null when it chains. */
  clientCertificateError(): string | null;
  clientCertificateDer(): Buffer | undefined;
  /** The client certificate, read (throws when it cannot be). */
  clientCertificate(): PresentedCertificate | undefined;
  /** The method's MSK (./keys.ts), once the handshake is done. */
  masterSessionKey(type: number): Buffer;
  destroy(): void;
}

/** Event-loop turns TLS may take to answer one flight (measured: 1-2; more is a stall). */
const MAX_TURNS = 6;

export class TlsTunnel implements Tunnel {
  private readonly wire: Duplex;
  private readonly socket: TLSSocket;
  private outgoing: Buffer[] = [];
  private incoming: Buffer[] = [];
  /** Why TLS gave up (bad records, failed handshake); the conversation ends. */
  failure: string | undefined;
  secure = false;

  constructor(context: SecureContext, requestClientCertificate: boolean) {
    this.wire = new Duplex({
      read() {},
      write: (chunk: Buffer, _encoding, done) => {
        this.outgoing.push(chunk);
        done();
      },
    });
    this.socket = new TLSSocket(this.wire, {
      isServer: true,
      secureContext: context,
      requestCert: requestClientCertificate,
      // Verified after the handshake (verifyError below) so the reason can be logged and recorded.
      rejectUnauthorized: false,
    });
    this.socket.on("secure", () => {
      this.secure = true;
    });
    this.socket.on("data", (chunk: Buffer) => {
      this.incoming.push(chunk);
    });
    this.socket.on("error", (error: Error & { reason?: string; code?: string }) => {
      // OpenSSL's reason ("unknown ca") says it; the whole message names source files.
      this.failure ??= error.reason ?? error.code ?? error.message.split("\n")[0];
    });
  }

  /** Hands TLS records from the supplicant to TLS; resolves with TLS's answer (maybe empty). */
  async receive(records: Buffer): Promise<Buffer> {
    this.wire.push(records);
    return this.flush(
      () => this.outgoing.length + this.incoming.length > 0 && this.socket.writableLength === 0,
    );
  }

  /** Encrypts application data for the supplicant (inner method packets). */
  async send(plain: Buffer): Promise<Buffer> {
    this.socket.write(plain);
    // Its own chunk stays counted in writableLength until the wire's write completes (a turn
    // later), though TLS has already encrypted it; anything more is cleartext still queued.
    return this.flush(() => this.outgoing.length > 0 && this.socket.writableLength <= plain.length);
  }

  /** Application data received since the last call. */
  takeApplicationData(): Buffer {
    const data = this.incoming.length === 1 ? this.incoming[0]! : Buffer.concat(this.incoming);
    this.incoming = [];
    return data;
  }

  /**
   * TLS usually answers within the call that fed it (node's TLSWrap reads the records or the
   * cleartext and writes its records to the wire synchronously): `answered` says so, and the
   * answer is taken after one tick (where a TLS error is emitted), without waiting for
   * event-loop turns, which cost every round trip latency under load. Otherwise (cleartext
   * queued behind a write not yet completed, about one round trip per login) TLS is given turns
   * until it has answered, or stops adding output.
   */
  private async flush(answered: () => boolean): Promise<Buffer> {
    await new Promise<void>((resolve) => process.nextTick(resolve));
    if (answered()) return this.takeOutgoing();
    let seen = -1;
    for (let turn = 0; turn < MAX_TURNS; turn++) {
      await nextTurn();
      // The write ahead completed in that turn and TLS wrote the rest behind it.
      if (answered()) break;
      const now = this.outgoing.length + this.incoming.length;
      // Something came out and one more turn added nothing: TLS has answered.
      if (now > 0 && now === seen) break;
      seen = now;
    }
    return this.takeOutgoing();
  }

  private takeOutgoing(): Buffer {
    const out = this.outgoing.length === 1 ? this.outgoing[0]! : Buffer.concat(this.outgoing);
    this.outgoing = [];
    return out;
  }

  get protocol(): string | null {
    return this.socket.getProtocol();
  }

  get resumed(): boolean {
    return this.socket.isSessionReused();
  }

  /** The client certificate's verification error against the trusted CAs, or null when it chains. */
  clientCertificateError(): string | null {
    const handle = (this.socket as unknown as { _handle?: { verifyError(): Error | null } })._handle;
    const error = handle?.verifyError();
    return error ? ((error as NodeJS.ErrnoException).code ?? error.message) : null;
  }

  clientCertificateDer(): Buffer | undefined {
    return this.socket.getPeerX509Certificate()?.raw;
  }

  clientCertificate(): PresentedCertificate | undefined {
    const certificate = this.socket.getPeerX509Certificate();
    return certificate && presentedCertificate(certificate);
  }

  masterSessionKey(type: number): Buffer {
    return masterSessionKey(this, type);
  }

  /** TLS exporter (RFC 5705 / RFC 8446 section 7.5), as each method's keys need. */
  exportKeyingMaterial(length: number, label: string, context?: Buffer): Buffer {
    // Without a context OpenSSL's use_context is 0: the TLS 1.2 PRF over client || server random
    // that RFC 5216 and RFC 5281 define (node's typings insist on a context; node does not).
    const exporter = this.socket.exportKeyingMaterial as (n: number, l: string, c?: Buffer) => Buffer;
    return exporter.call(this.socket, length, label, context);
  }

  destroy(): void {
    this.socket.destroy();
    this.wire.destroy();
    this.outgoing = [];
    this.incoming = [];
  }
}

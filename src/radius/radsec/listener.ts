// The RadSec door (RADIUS over TLS, draft-ietf-radext-radiusdtls-bis, which obsoletes RFC 6614):
// a TCP listener whose connections pass the gate (connection and handshake caps) before any TLS
// work, then a mutual-TLS handshake (TLS 1.2 or 1.3 only) against the CAs the core trusts, then
// the core's word on which network the NAS certificate belongs to. Requests are answered by the
// same code as UDP's (../answer.ts). RADIUS/1.1 (RFC 9765) is spoken when the NAS offers it by ALPN.
import { createHash, X509Certificate } from "node:crypto";
import net from "node:net";
import tls from "node:tls";
import type { RadiusClient } from "../../core/networks/service.ts";
import type { RadsecConnection, RadsecConnections, RadsecTrust } from "../../core/radsec/types.ts";
import type { DasAttribute } from "../../core/sessions/das.ts";
import type { AnswerDeps, RadiusLog } from "../answer.ts";
import {
  type ConnectionSettings,
  type DasOutcome,
  DEFAULT_CONNECTION_SETTINGS,
  NasConnection,
} from "./connection.ts";
import { ConnectionGate, DEFAULT_GATE_LIMITS, type GateLimits, type GateRefusal } from "./gate.ts";
import { handshakeRefusal, identityRefusal, type RefusalLabel } from "./refusals.ts";
import { type Protocol, RADSEC_SECRET, Radius10Wire, Radius11Wire, type Wire } from "./wire.ts";

/** The server's own certificate (PEM): RADSEC_CERT_FILE/KEY_FILE, else the EAP server certificate. */
export interface ServerIdentity {
  key: string;
  cert: string;
  chain: string[];
}

/** Told of connections and refusals (src/metrics/radsec.ts counts them). */
export interface RadsecObserver {
  opened(protocol: Protocol): void;
  closed(): void;
  refused(reason: RefusalLabel | GateRefusal): void;
}

/** RFC 9765 section 3.1: whether RADIUS/1.1 may be, or must be, negotiated. */
export type Radius11Mode = "forbid" | "allow" | "require";

export interface RadsecListenerOptions {
  host: string;
  port: number;
  identity(): Promise<ServerIdentity>;
  trust: RadsecTrust;
  answer: AnswerDeps;
  log: RadiusLog;
  limits?: Partial<GateLimits>;
  settings?: Partial<ConnectionSettings>;
  /** How long a handshake may take before the connection is closed. */
  handshakeTimeoutMs?: number;
  radius11?: Radius11Mode;
  observer?: RadsecObserver | undefined;
}

/** How often the trusted CAs are re-read (a CA uploaded in another process is picked up within this). */
const TRUST_POLL_MS = 5_000;
/** How often open connections are identified again (a revoked certificate's connection closes). */
const REIDENTIFY_MS = 60_000;
/** At most one log line per address and reason in this time. */
const LOG_EVERY_MS = 10_000;

export class RadsecListener implements RadsecConnections {
  private readonly gate: ConnectionGate;
  private readonly settings: ConnectionSettings;
  private readonly open = new Set<NasConnection>();
  private tcp: net.Server | undefined;
  private tlsServer: tls.Server | undefined;
  private trustTag = "";
  private timers: NodeJS.Timeout[] = [];
  private readonly logged = new Map<string, number>();
  port = 0;

  constructor(private readonly options: RadsecListenerOptions) {
    this.gate = new ConnectionGate({ ...DEFAULT_GATE_LIMITS, ...options.limits });
    this.settings = { ...DEFAULT_CONNECTION_SETTINGS, ...options.settings };
  }

  async start(): Promise<number> {
    const server = tls.createServer(await this.contextOptions());
    server.on("secureConnection", (socket) => {
      this.secured(socket).catch((error) => {
        this.options.log.error({ err: error }, "RadSec connection failed");
        socket.destroy();
      });
    });
    server.on("tlsClientError", (error, socket) => this.handshakeFailed(error, socket));
    this.tlsServer = server;
    const tcp = net.createServer({ pauseOnConnect: false }, (socket) => this.accept(socket));
    this.tcp = tcp;
    await new Promise<void>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen(this.options.port, this.options.host, () => {
        tcp.off("error", reject);
        tcp.on("error", (error) => this.options.log.error({ err: error }, "RadSec listener error"));
        resolve();
      });
    });
    this.port = (tcp.address() as net.AddressInfo).port;
    this.timers = [
      setInterval(
        () => this.reloadTrust().catch((e) => this.options.log.error({ err: e }, "RadSec CA reload failed")),
        TRUST_POLL_MS,
      ),
      setInterval(
        () =>
          this.reidentify().catch((e) =>
            this.options.log.error({ err: e }, "RadSec re-identification failed"),
          ),
        REIDENTIFY_MS,
      ),
      setInterval(() => this.sweep(), LOG_EVERY_MS),
    ];
    for (const timer of this.timers) timer.unref();
    return this.port;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    const closed = this.tcp ? new Promise<void>((resolve) => this.tcp!.close(() => resolve())) : undefined;
    for (const connection of this.open) connection.close("server shutting down");
    await closed;
  }

  /** TCP connections admitted by the gate and not yet closed (in handshake or open). */
  get admitted(): number {
    return this.gate.connections;
  }

  /** RadsecConnections: the live connections of one network (the console shows them). */
  byNetwork(accountId: number, networkId: number): RadsecConnection[] {
    const found: RadsecConnection[] = [];
    for (const c of this.open) {
      if (c.info.accountId === accountId && c.info.networkId === networkId) found.push(c.info);
    }
    return found;
  }

  /** Whether a NAS of this network is connected now. */
  connected(accountId: number, networkId: number): boolean {
    return this.newest(accountId, networkId) !== undefined;
  }

  /**
   * A Disconnect-Request or CoA-Request down the network's newest open connection; undefined when
   * none is open (the caller says so, or tries UDP where the network has an address).
   */
  sendDas(
    accountId: number,
    networkId: number,
    kind: "disconnect" | "coa",
    attributes: readonly DasAttribute[],
  ): Promise<DasOutcome> | undefined {
    return this.newest(accountId, networkId)?.send(kind, attributes);
  }

  private newest(accountId: number, networkId: number): NasConnection | undefined {
    let newest: NasConnection | undefined;
    for (const c of this.open) {
      if (c.info.accountId !== accountId || c.info.networkId !== networkId) continue;
      if (!newest || c.info.since >= newest.info.since) newest = c;
    }
    return newest;
  }

  private async contextOptions(): Promise<tls.TlsOptions> {
    const [identity, trusted] = await Promise.all([
      this.options.identity(),
      this.options.trust.authorities(),
    ]);
    this.trustTag = trusted.tag;
    return {
      key: identity.key,
      cert: [identity.cert, ...identity.chain].join("\n"),
      ca: trusted.pems,
      // Mutual TLS: the NAS must present a certificate (checked in secured(), which logs why not).
      requestCert: true,
      rejectUnauthorized: false,
      // draft-ietf-radext-radiusdtls-bis section 2.2: TLS 1.2 at least; nothing older is offered.
      minVersion: "TLSv1.2",
      maxVersion: "TLSv1.3",
      handshakeTimeout: this.options.handshakeTimeoutMs ?? 10_000,
      ALPNCallback: ({ protocols }) => this.chooseProtocol(protocols),
    };
  }

  /**
   * RFC 9765 section 3.2: "radius/1.1" when both ends allow it; "radius/1.0" otherwise; names
   * offered but none acceptable: undefined, which ends the handshake with no_application_protocol.
   */
  private chooseProtocol(offered: string[]): string | undefined {
    const mode = this.options.radius11 ?? "allow";
    if (mode !== "forbid" && offered.includes("radius/1.1")) return "radius/1.1";
    if (mode !== "require" && offered.includes("radius/1.0")) return "radius/1.0";
    return undefined;
  }

  private async reloadTrust(): Promise<void> {
    const trusted = await this.options.trust.authorities();
    if (trusted.tag === this.trustTag) return;
    this.tlsServer?.setSecureContext(await this.contextOptions());
  }

  private accept(socket: net.Socket): void {
    const address = socket.remoteAddress ?? "";
    const refusal = this.gate.admit(address);
    if (refusal) {
      this.options.observer?.refused(refusal);
      this.logOnce(address, refusal, () =>
        this.options.log.warn({ client: address, reason: refusal }, "RadSec connection refused"),
      );
      socket.destroy();
      return;
    }
    socket.once("close", () => this.gate.release(address));
    // Answers go out as they are written: Nagle would hold a small answer until the NAS's ACK.
    socket.setNoDelay(true);
    socket.on("error", () => {}); // the TLS socket wrapping it reports
    this.tlsServer!.emit("connection", socket);
  }

  private handshakeFailed(error: Error & { code?: string }, socket: tls.TLSSocket): void {
    const label = handshakeRefusal(error);
    this.refuse(socket.remoteAddress ?? "", label, error.message);
    socket.destroy();
  }

  private refuse(address: string, label: RefusalLabel, detail: string): void {
    this.options.observer?.refused(label);
    this.logOnce(address, label, () =>
      this.options.log.warn({ client: address, reason: label, detail }, "RadSec handshake refused"),
    );
  }

  private async secured(socket: tls.TLSSocket): Promise<void> {
    const address = socket.remoteAddress ?? "";
    const chain = peerChain(socket);
    if (!socket.authorized || chain.length === 0) {
      const code = chain.length === 0 ? "NO_CERTIFICATE" : String(socket.authorizationError);
      this.refuse(address, handshakeRefusal({ code, message: code }), code);
      return void socket.destroy();
    }
    const protocol = (socket.alpnProtocol || "radius/1.0") as Protocol;
    // RFC 9765 section 3.1, "require": a NAS that offers no ALPN at all is refused too.
    if (protocol !== "radius/1.1" && this.options.radius11 === "require") {
      this.refuse(address, "alpn", "RADIUS/1.1 is required and the NAS did not offer it");
      return void socket.destroy();
    }
    // RFC 9765 section 3.3: RADIUS/1.1 only over TLS 1.3.
    if (protocol === "radius/1.1" && socket.getProtocol() !== "TLSv1.3") {
      this.refuse(address, "tls_version", "RADIUS/1.1 negotiated over TLS 1.2");
      return void socket.destroy();
    }
    const identity = await this.options.trust.identify({ chain });
    if ("refused" in identity) {
      this.refuse(address, identityRefusal(identity.refused), identity.refused);
      return void socket.destroy();
    }
    if (socket.destroyed) return;
    const leaf = new X509Certificate(chain[0]!);
    const info: RadsecConnection = {
      networkId: identity.network.id,
      accountId: identity.network.account_id,
      remote: `${address}:${socket.remotePort}`,
      since: new Date().toISOString(),
      tlsVersion: socket.getProtocol() ?? "",
      protocol,
      peerSubject: leaf.subject.replaceAll("\n", ", "),
      peerFingerprint: createHash("sha256").update(chain[0]!).digest("hex"),
    };
    const wire: Wire = protocol === "radius/1.1" ? new Radius11Wire() : new Radius10Wire();
    const connection = new NasConnection(
      socket,
      asRadsecClient(identity.network),
      wire,
      info,
      chain,
      this.options.answer,
      this.settings,
      {
        drop: (c, code, reason) => this.dropped(c, code, reason),
        closed: (c, reason) => this.closed(c, reason),
        error: (c, error) =>
          this.options.log.error(
            { err: error, client: c.info.remote },
            "RadSec request failed; not answered",
          ),
      },
    );
    this.open.add(connection);
    this.options.observer?.opened(protocol);
    this.options.log.info(
      {
        client: info.remote,
        network: info.networkId,
        tls: info.tlsVersion,
        protocol,
        peer: info.peerSubject,
      },
      "RadSec connection open",
    );
  }

  private dropped(connection: NasConnection, code: number, reason: string): void {
    this.options.answer.observer?.dropped(code, connection.info.networkId, "malformed");
    this.logOnce(connection.info.remote, reason, () =>
      this.options.log.warn({ client: connection.info.remote, reason }, "RadSec packet dropped"),
    );
  }

  private closed(connection: NasConnection, reason: string): void {
    if (!this.open.delete(connection)) return;
    this.options.observer?.closed();
    this.options.log.info({ client: connection.info.remote, reason }, "RadSec connection closed");
  }

  /** Every open connection is identified again: a revoked certificate or a deleted network ends it. */
  private async reidentify(): Promise<void> {
    for (const connection of [...this.open]) {
      const identity = await this.options.trust.identify({ chain: connection.chain });
      if ("refused" in identity) connection.close(`no longer accepted: ${identity.refused}`);
      else connection.client = asRadsecClient(identity.network);
    }
  }

  private logOnce(address: string, reason: string, write: () => void): void {
    const key = `${address}|${reason}`;
    const now = Date.now();
    if ((this.logged.get(key) ?? 0) > now) return;
    this.logged.set(key, now + LOG_EVERY_MS);
    write();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, until] of this.logged) if (until <= now) this.logged.delete(key);
    this.gate.sweep(now);
  }
}

/** The network as RadSec's RADIUS client: its secret is "radsec" (RFC 6614 section 2.3). */
function asRadsecClient(network: RadiusClient): RadiusClient {
  return { ...network, secret: RADSEC_SECRET };
}

/** The certificates the NAS presented, DER, leaf first. */
function peerChain(socket: tls.TLSSocket): Buffer[] {
  const chain: Buffer[] = [];
  let cert = socket.getPeerCertificate(true) as tls.DetailedPeerCertificate | Record<string, never>;
  while (cert && "raw" in cert && cert.raw) {
    chain.push(cert.raw);
    if (!cert.issuerCertificate || cert.issuerCertificate === cert) break;
    cert = cert.issuerCertificate;
  }
  return chain;
}

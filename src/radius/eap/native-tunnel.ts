// EAP's TLS server connections on OpenSSL's memory BIOs (./native/openssl-tunnel.c), the other
// engine beside node's TLSSocket (./tunnel.ts): the same OpenSSL, without a stream socket in
// between, so a round trip's TLS work is one synchronous call. `npm run build` compiles the addon
// (scripts/native.mjs); where it could not, EAP runs on node's TLS sockets (EAP_TLS_ENGINE).
import { createHash } from "node:crypto";
import { DEFAULT_CIPHERS } from "node:tls";
import type { PresentedCertificate } from "../../core/certs/presented.ts";
import { masterSessionKey } from "./keys.ts";
import { type Handle, type OpenSslAddon, openSslAddon } from "./native-addon.ts";
import type { Tunnel } from "./tunnel.ts";

function addon(): OpenSslAddon {
  const found = openSslAddon();
  if ("error" in found) throw new Error(`the OpenSSL EAP addon is not available: ${found.error}`);
  return found.addon;
}

/** node's default cipher list, split as OpenSSL takes it: TLS 1.3 suites apart from the rest. */
function splitCiphers(list: string): { cipherList: string; cipherSuites: string } {
  const names = list.split(":");
  return {
    cipherSuites: names.filter((n) => n.startsWith("TLS_")).join(":"),
    cipherList: names.filter((n) => !n.startsWith("TLS_")).join(":"),
  };
}

/**
 * OpenSSL takes a 16-octet key name, a 32-octet HMAC key and a 32-octet AES key
 * (SSL_CTX_set_tlsext_ticket_keys(3)); Wisp shares 48 octets between its contexts and workers (as
 * node's setTicketKeys takes them), so the three are derived from those, the same everywhere.
 */
function openSslTicketKeys(keys: Buffer): Buffer {
  const derive = (label: string) => createHash("sha256").update(label).update(keys).digest();
  return Buffer.concat([keys.subarray(0, 16), derive("wisp ticket hmac"), derive("wisp ticket aes")]);
}

export interface OpenSslContextOptions {
  /** The server's certificate, then the chain it sends (PEM). */
  certificateChain: string;
  key: string;
  /** Certificates trusted to issue client certificates (PEM), or none. */
  ca: string | null;
  sessionIdContext: string;
  /** Session tickets (resumption) on, with these 48 octets of keys. */
  tickets: boolean;
  ticketKeys: Buffer;
}

/** A TLS server context (SSL_CTX) with node's defaults: TLS 1.2-1.3, node's cipher list. */
export class OpenSslContext {
  readonly handle: Handle;

  constructor(options: OpenSslContextOptions) {
    const { cipherList, cipherSuites } = splitCiphers(DEFAULT_CIPHERS);
    this.handle = addon().createContext(
      options.certificateChain,
      options.key,
      options.ca,
      options.sessionIdContext,
      options.tickets,
      openSslTicketKeys(options.ticketKeys),
      cipherList,
      cipherSuites,
    );
  }
}

export class OpenSslTunnel implements Tunnel {
  private readonly addon = addon();
  private connection: Handle | undefined;
  private application: Buffer = Buffer.alloc(0);
  failure: string | undefined;
  secure = false;

  constructor(context: OpenSslContext, requestClientCertificate: boolean) {
    this.connection = this.addon.open(context.handle, requestClientCertificate);
  }

  private get open(): Handle {
    if (!this.connection) throw new Error("the TLS connection is closed");
    return this.connection;
  }

  /** Hands TLS records from the supplicant to TLS; TLS's answer (maybe empty). */
  receive(records: Buffer): Buffer {
    const [out, application, secure, failure] = this.addon.receive(this.open, records);
    this.secure = secure;
    if (failure) this.failure ??= failure;
    if (application.length > 0) {
      this.application =
        this.application.length === 0 ? application : Buffer.concat([this.application, application]);
    }
    return out;
  }

  /** Encrypts application data for the supplicant (inner method packets). */
  send(plain: Buffer): Buffer {
    try {
      return this.addon.send(this.open, plain);
    } catch (error) {
      this.failure ??= (error as Error).message;
      return Buffer.alloc(0);
    }
  }

  takeApplicationData(): Buffer {
    const data = this.application;
    this.application = Buffer.alloc(0);
    return data;
  }

  get protocol(): string | null {
    return this.connection ? this.addon.protocol(this.connection) : null;
  }

  get resumed(): boolean {
    return this.connection ? this.addon.resumed(this.connection) : false;
  }

  clientCertificateError(): string | null {
    return this.addon.verifyError(this.open);
  }

  clientCertificateDer(): Buffer | undefined {
    return this.addon.peerCertificate(this.open) ?? undefined;
  }

  /** Read from the certificate OpenSSL parsed in the handshake (no second parse). */
  clientCertificate(): PresentedCertificate | undefined {
    const facts = this.addon.peerCertificateFacts(this.open);
    if (!facts) return undefined;
    const [der, serialNumber, validFrom, validTo, commonName, names] = facts;
    if (serialNumber === null) throw new Error("the client certificate's serial cannot be read");
    return {
      der,
      serialNumber,
      validFrom: new Date(validFrom),
      validTo: new Date(validTo),
      commonName: commonName ?? undefined,
      names: names.filter((name): name is string => name !== null),
    };
  }

  masterSessionKey(type: number): Buffer {
    return masterSessionKey(this, type);
  }

  exportKeyingMaterial(length: number, label: string, context?: Buffer): Buffer {
    return this.addon.exportKeyingMaterial(this.open, length, label, context ?? null);
  }

  destroy(): void {
    if (this.connection) this.addon.close(this.connection);
    this.connection = undefined;
    this.application = Buffer.alloc(0);
  }
}

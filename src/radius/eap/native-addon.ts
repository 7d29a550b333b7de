// Loading the OpenSSL addon of EAP's TLS (./native/openssl-tunnel.c, built by scripts/native.mjs)
// and its functions' shapes, apart from the engine that uses it (./native-tunnel.ts): the
// configuration and the server's start ask whether it loads, and must not load node's TLS for that.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** An SSL_CTX or an SSL connection, held by the addon (freed with the object, or by close). */
export type Handle = object & { readonly __opaque: unique symbol };

/** The addon's functions (see openssl-tunnel.c for each). */
export interface OpenSslAddon {
  createContext(
    certificateChainPem: string,
    keyPem: string,
    caPem: string | null,
    sessionIdContext: string,
    tickets: boolean,
    ticketKeys: Buffer,
    cipherList: string,
    cipherSuites: string,
  ): Handle;
  open(context: Handle, requestClientCertificate: boolean): Handle;
  receive(connection: Handle, records: Buffer): [Buffer, Buffer, boolean, string | null];
  send(connection: Handle, plain: Buffer): Buffer;
  protocol(connection: Handle): string | null;
  resumed(connection: Handle): boolean;
  exportKeyingMaterial(connection: Handle, length: number, label: string, context: Buffer | null): Buffer;
  peerCertificate(connection: Handle): Buffer | null;
  /** [der, serial (hex), notBefore, notAfter (ms since the epoch), first CN, CNs and SAN values]. */
  peerCertificateFacts(
    connection: Handle,
  ): [Buffer, string | null, number, number, string | null, (string | null)[]] | null;
  verifyError(connection: Handle): string | null;
  close(connection: Handle): void;
  /** RADIUS's HMAC-MD5 Message-Authenticator (see src/radius/packet/crypto.ts hmacOver). */
  radiusHmac(
    out: Buffer,
    at: number,
    ipad: Buffer,
    opad: Buffer,
    packet: Buffer,
    length: number,
    maAt: number,
    authenticator: Buffer,
  ): void;
  /** RADIUS's MD5 Request/Response Authenticator (see src/radius/packet/crypto.ts digestWith). */
  radiusDigest(
    out: Buffer,
    at: number,
    packet: Buffer,
    length: number,
    authenticator: Buffer,
    secret: Buffer,
  ): void;
  /** MS-CHAP's ChallengeResponse (see src/radius/mschap/mschapv2.ts challengeResponse). */
  mschapChallengeResponse(out: Buffer, challenge: Buffer, keys: Buffer): void;
}

/** Where the build puts the addon: beside this file's compiled place, as for the sources. */
const ADDON_URL = new URL("./native/openssl-tunnel.node", import.meta.url);

let loaded: { addon: OpenSslAddon } | { error: string } | undefined;

/** The addon, or why it cannot be loaded (not built: no C compiler or node headers at build time). */
export function openSslAddon(): { addon: OpenSslAddon } | { error: string } {
  if (!loaded) {
    try {
      loaded = { addon: createRequire(import.meta.url)(fileURLToPath(ADDON_URL)) as OpenSslAddon };
    } catch (error) {
      loaded = { error: (error as Error).message.split("\n")[0]! };
    }
  }
  return loaded;
}

/**
 * Addon functions a module runs in place of its own JavaScript, for speed only: the addon when it
 * loads and `agrees` (run once, on a known input) finds it gives the JavaScript's result, else
 * undefined (the JavaScript then runs). `use(false)` forces the JavaScript, `use(true)` checks again
 * (tests compare the two).
 */
export function checkedAddon(agrees: (addon: OpenSslAddon) => boolean) {
  let checked: OpenSslAddon | undefined | null = null;
  const check = (): OpenSslAddon | undefined => {
    const found = openSslAddon();
    if ("error" in found) return undefined;
    try {
      return agrees(found.addon) ? found.addon : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    get(): OpenSslAddon | undefined {
      if (checked === null) checked = check();
      return checked;
    },
    use(on: boolean): void {
      checked = on ? null : undefined;
    },
  };
}

// A worker thread of the EAP TLS pool (./tls-pool.ts): it holds TLS server connections (on the
// engine EAP_TLS_ENGINE chose: the OpenSSL addon or node's TLSSocket, ./tls-contexts.ts) and runs
// their handshakes and records, so that the TLS work leaves the thread that answers RADIUS, and the
// conversations of a busy server spread over the machine's cores. Messages are arrays (cheaper to
// clone than objects), a turn's together in one; octets travel as transferred ArrayBuffers of
// their exact size.
import { parentPort } from "node:worker_threads";
import { ownCopy, TurnBatch } from "../../core/shared/worker-thread.ts";
import { buildTunnels, type OpenTunnel } from "./tls-contexts.ts";
import type { Tunnel } from "./tunnel.ts";
import type { EapServerCredentials, TlsEngine } from "./types.ts";

/** Requests from the pool; see tls-pool.ts for the replies. */
export type ToWorker =
  | ["credentials", EapServerCredentials, Uint8Array, TlsEngine]
  /** Records or cleartext for tunnel `id`, opened on first use as method `type`. */
  | ["receive" | "send", number, Uint8Array, number, boolean]
  | ["close", number]
  /**
   * Tests only (test/radius/eap-workers.test.ts): the worker dies of an uncaught error, as a bug
   * in it would end it. Only the main thread posts to a worker; no RADIUS input reaches this.
   */
  | ["crash"];

interface Held {
  tunnel: Tunnel;
  type: number;
  requestClientCertificate: boolean;
  /** The handshake's results were sent already. */
  reported: boolean;
}

const port = parentPort;
if (!port) throw new Error("tls-worker.ts runs as a worker thread");
const tunnels = new Map<number, Held>();
/** This turn's replies, sent to the pool as one message at its end. */
const replies = new TurnBatch<unknown>((batch, transfer) => port.postMessage(batch, transfer));
let openers: Map<number, OpenTunnel> | undefined;

function view(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** Reply: [id, out, application data, failure, secure, and once secure: protocol, MSK, cert error, cert]. */
function reply(id: number, held: Held, out: Buffer): void {
  const { tunnel } = held;
  const outBytes = ownCopy(out);
  const app = ownCopy(tunnel.takeApplicationData());
  const transfer = [outBytes.buffer, app.buffer];
  const message: unknown[] = [id, outBytes, app, tunnel.failure ?? null, tunnel.secure];
  if (tunnel.secure && !held.reported) {
    held.reported = true;
    const msk = ownCopy(tunnel.masterSessionKey(held.type));
    const der = held.requestClientCertificate ? tunnel.clientCertificateDer() : undefined;
    const cert = der ? ownCopy(der) : null;
    message.push(
      tunnel.protocol,
      msk,
      held.requestClientCertificate ? tunnel.clientCertificateError() : null,
      cert,
    );
    transfer.push(msk.buffer);
    if (cert) transfer.push(cert.buffer);
  }
  replies.push(message, transfer);
}

async function handle(message: ToWorker): Promise<void> {
  switch (message[0]) {
    case "credentials":
      openers = buildTunnels(message[1], view(message[2]), message[3]);
      return;
    case "close":
      tunnels.get(message[1])?.tunnel.destroy();
      tunnels.delete(message[1]);
      return;
    case "crash":
      // Thrown outside handle's promise (whose errors fail one tunnel): nothing catches it.
      setImmediate(() => {
        throw new Error("TLS worker crash asked by a test");
      });
      return;
    default: {
      const [op, id, data, type, requestClientCertificate] = message;
      let held = tunnels.get(id);
      if (!held) {
        const open = openers?.get(type);
        if (!open) throw new Error(`no TLS context for EAP type ${type}`);
        held = {
          tunnel: open(requestClientCertificate),
          type,
          requestClientCertificate,
          reported: false,
        };
        tunnels.set(id, held);
      }
      const out =
        op === "receive" ? await held.tunnel.receive(view(data)) : await held.tunnel.send(view(data));
      reply(id, held, out);
    }
  }
}

port.on("message", (batch: ToWorker[]) => {
  for (const message of batch) receive(message);
});

function receive(message: ToWorker): void {
  handle(message).catch((error: Error) => {
    // This tunnel's conversation fails; the others carry on.
    const id = typeof message[1] === "number" ? message[1] : -1;
    tunnels.get(id)?.tunnel.destroy();
    tunnels.delete(id);
    replies.push([id, new Uint8Array(0), new Uint8Array(0), `TLS worker: ${error.message}`, false]);
  });
}

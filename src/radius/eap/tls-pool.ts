// TLS for EAP conversations on a pool of worker threads (issue 32): each conversation's TLS
// connection lives on one worker (./tls-worker.ts), chosen when it opens; the EAP methods talk to
// it through PooledTunnel, which has the same shape as the in-thread TlsTunnel. A TLS step is a
// request and a reply; each thread sends a turn's requests or replies as one message (TurnBatch).
// A worker that dies fails its conversations' pending and later steps (the supplicant starts over)
// and is replaced; the process carries on.
import { X509Certificate } from "node:crypto";
import type { Worker } from "node:worker_threads";
import { type PresentedCertificate, presentedCertificate } from "../../core/certs/presented.ts";
import { ownCopy, startWorkerThread, TurnBatch } from "../../core/shared/worker-thread.ts";
import type { ToWorker } from "./tls-worker.ts";
import type { Tunnel } from "./tunnel.ts";
import type { EapServerCredentials, TlsEngine } from "./types.ts";

/** [id, out, application data, failure, secure, protocol?, MSK?, certificate error?, certificate?] */
type Reply = [
  number,
  Uint8Array,
  Uint8Array,
  string | null,
  boolean,
  string?,
  Uint8Array?,
  (string | null)?,
  (Uint8Array | null)?,
];

const WORKER_GONE = "the TLS worker thread stopped";

const view = (data: Uint8Array): Buffer => Buffer.from(data.buffer, data.byteOffset, data.byteLength);

class PooledTunnel implements Tunnel {
  failure: string | undefined;
  secure = false;
  protocol: string | null = null;
  private app: Buffer = Buffer.alloc(0);
  private msk: Buffer | undefined;
  private certificateError: string | null = null;
  private certificate: Buffer | undefined;
  /** Resolves the step in flight (one at a time: the engine works on one packet per conversation). */
  pending: ((out: Buffer) => void) | undefined;

  constructor(
    private readonly slot: WorkerSlot,
    readonly id: number,
    private readonly type: number,
    private readonly requestClientCertificate: boolean,
  ) {}

  receive(records: Buffer): Promise<Buffer> {
    return this.step("receive", records);
  }

  send(plain: Buffer): Promise<Buffer> {
    return this.step("send", plain);
  }

  private step(op: "receive" | "send", data: Buffer): Promise<Buffer> {
    if (!this.slot.alive) {
      this.failure ??= WORKER_GONE;
      return Promise.resolve(Buffer.alloc(0));
    }
    const bytes = ownCopy(data);
    return new Promise((resolve) => {
      this.pending = resolve;
      this.slot.post([op, this.id, bytes, this.type, this.requestClientCertificate], [bytes.buffer]);
    });
  }

  settle(reply: Reply): void {
    const [, out, app, failure, secure, protocol, msk, certificateError, certificate] = reply;
    if (failure) this.failure ??= failure;
    this.secure = secure;
    if (protocol !== undefined) {
      this.protocol = protocol;
      this.msk = msk && view(msk);
      this.certificateError = certificateError ?? null;
      this.certificate = certificate ? view(certificate) : undefined;
    }
    this.app =
      app.byteLength === 0 && this.app.length === 0 ? this.app : Buffer.concat([this.app, view(app)]);
    this.resolve(view(out));
  }

  /** The worker is gone: the step in flight ends with a failure. */
  abandon(): void {
    this.failure ??= WORKER_GONE;
    this.resolve(Buffer.alloc(0));
  }

  private resolve(out: Buffer): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.(out);
  }

  takeApplicationData(): Buffer {
    const data = this.app;
    this.app = Buffer.alloc(0);
    return data;
  }

  clientCertificateError(): string | null {
    return this.certificateError;
  }

  clientCertificateDer(): Buffer | undefined {
    return this.certificate;
  }

  clientCertificate(): PresentedCertificate | undefined {
    return this.certificate && presentedCertificate(new X509Certificate(this.certificate));
  }

  masterSessionKey(): Buffer {
    if (!this.msk) throw new Error("no MSK before the TLS handshake is done");
    return this.msk;
  }

  destroy(): void {
    this.slot.close(this);
  }
}

/** One worker thread and the tunnels it holds. */
class WorkerSlot {
  readonly worker: Worker;
  /** This turn's steps for the worker, sent as one message at its end. */
  private readonly outbox = new TurnBatch<ToWorker>((batch, transfer) =>
    this.worker.postMessage(batch, transfer),
  );
  readonly tunnels = new Map<number, PooledTunnel>();
  alive = true;

  constructor(onExit: (slot: WorkerSlot) => void) {
    this.worker = startWorkerThread(import.meta.url, "tls-worker");
    this.worker.unref();
    this.worker.on("message", (replies: Reply[]) => {
      for (const reply of replies) this.tunnels.get(reply[0])?.settle(reply);
    });
    // An uncaught error ends the worker: "exit" follows and does the cleaning up.
    this.worker.on("error", () => {});
    this.worker.once("exit", () => {
      this.alive = false;
      for (const tunnel of this.tunnels.values()) tunnel.abandon();
      this.tunnels.clear();
      onExit(this);
    });
  }

  post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.outbox.push(message, transfer);
  }

  close(tunnel: PooledTunnel): void {
    if (!this.tunnels.delete(tunnel.id) || !this.alive) return;
    this.post(["close", tunnel.id]);
  }
}

export class TlsPool {
  private slots: WorkerSlot[] = [];
  private nextId = 1;
  private credentials: [EapServerCredentials, Uint8Array, TlsEngine] | undefined;
  private closed = false;
  /** Workers replaced after they died, since start. */
  replaced = 0;

  /** The workers start with the first conversation: a server without EAP logins holds none. */
  constructor(readonly size: number) {}

  /** The worker threads (tests stop one to see its conversations fail cleanly). */
  get workers(): Worker[] {
    return this.slots.map((s) => s.worker);
  }

  /** TLS connections open on the workers. */
  get openTunnels(): number {
    return this.slots.reduce((sum, slot) => sum + slot.tunnels.size, 0);
  }

  private spawn(): WorkerSlot {
    const slot = new WorkerSlot((dead) => this.replace(dead));
    if (this.credentials) slot.post(["credentials", ...this.credentials]);
    return slot;
  }

  private replace(dead: WorkerSlot): void {
    const index = this.slots.indexOf(dead);
    if (index < 0 || this.closed) return;
    this.replaced++;
    this.slots[index] = this.spawn();
  }

  /** New server credentials for every worker (and any that replaces one). */
  setCredentials(credentials: EapServerCredentials, ticketKeys: Buffer, engine: TlsEngine): void {
    this.credentials = [credentials, ownCopy(ticketKeys), engine];
    for (const slot of this.slots) slot.post(["credentials", ...this.credentials]);
  }

  /** A tunnel on the worker holding the fewest. */
  open(type: number, requestClientCertificate: boolean): Tunnel {
    if (this.slots.length === 0) for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
    let slot = this.slots[0]!;
    for (const other of this.slots) if (other.tunnels.size < slot.tunnels.size) slot = other;
    const tunnel = new PooledTunnel(slot, this.nextId++, type, requestClientCertificate);
    slot.tunnels.set(tunnel.id, tunnel);
    return tunnel;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

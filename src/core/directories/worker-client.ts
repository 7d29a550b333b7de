// Directories' LDAP clients on a worker thread of their own (./ldap-worker.ts): DirectoryThread
// starts it with the first directory used and replaces it when it dies; WorkerDirectoryClient has
// the shape of the in-thread DirectoryClient and forwards each call; each thread sends a turn's
// messages together (TurnBatch). Measured (bench/ldap.ts, 2 cores): the thread that answers RADIUS
// spends about 108 µs per directory login this way, 163 µs with the clients in that thread.
import type { Worker } from "node:worker_threads";
import type { Entry } from "ldapts";
import { startWorkerThread, TurnBatch } from "../shared/worker-thread.ts";
import {
  type ConnectDirectory,
  type DirectoryBind,
  type DirectoryConnection,
  DirectoryUnavailable,
  type SearchSpec,
  type ServerSettings,
  type ServerStatus,
  statusAt,
} from "./ldap.ts";
import type { CallRequest, FromDirectoryWorker, ToDirectoryWorker } from "./ldap-worker.ts";

const WORKER_GONE = "the directory worker thread stopped";

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** Octets cross threads as Uint8Array: the attributes asked for as binary are Buffers again. */
function revive(entries: Entry[]): Entry[] {
  for (const entry of entries)
    for (const [key, value] of Object.entries(entry)) {
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) entry[key] = Buffer.from(value);
      else if (Array.isArray(value) && value[0] instanceof Uint8Array && !Buffer.isBuffer(value[0]))
        entry[key] = (value as Uint8Array[]).map((v) => Buffer.from(v));
    }
  return entries;
}

/** The worker thread, started at first use and started again after it died; calls to it. */
export class DirectoryThread {
  private worker: Worker | undefined;
  /** This turn's requests, sent to the worker as one message at its end. */
  private readonly outbox = new TurnBatch<ToDirectoryWorker>((batch) => this.worker?.postMessage(batch));
  private readonly pending = new Map<number, Pending>();
  /** Every open client's "open" message, sent again to a worker that replaces a dead one. */
  private readonly opened = new Map<number, ToDirectoryWorker>();
  /** Each client's servers' states as the worker last told them, and when open breakers reopen. */
  readonly statuses = new Map<number, { servers: ServerStatus[]; reopenTimes: number[] }>();
  private nextId = 1;
  /** Workers replaced after they died, since start. */
  replaced = 0;

  /** A DirectoryConnection factory whose clients live on this thread's worker. */
  readonly connect: ConnectDirectory = (urls, settings, bind) =>
    new WorkerDirectoryClient(this, urls, settings, bind);

  private start(): Worker {
    const worker = startWorkerThread(import.meta.url, "ldap-worker");
    worker.unref();
    worker.on("message", (batch: FromDirectoryWorker[]) => {
      for (const message of batch) this.answer(message);
    });
    // An uncaught error ends the worker: "exit" follows and does the cleaning up.
    worker.on("error", () => {});
    worker.once("exit", () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.replaced++;
      this.failPending();
    });
    worker.postMessage([...this.opened.values()]);
    return worker;
  }

  private answer(message: FromDirectoryWorker): void {
    if (message[1] === "status") {
      this.statuses.set(message[0], { servers: message[2], reopenTimes: message[3] });
      return;
    }
    const pending = this.pending.get(message[0]);
    if (!pending) return;
    this.pending.delete(message[0]);
    if (message[1] === "ok") pending.resolve(message[2]);
    else if (message[1] === "unavailable") pending.reject(new DirectoryUnavailable(message[2], message[3]));
    else pending.reject(new Error(message[2]));
  }

  /** Queues a request for the worker (started if it is not running), sent at the end of this turn. */
  post(message: ToDirectoryWorker): void {
    this.worker ??= this.start();
    this.outbox.push(message);
  }

  /** A number for a client or a call. */
  id(): number {
    return this.nextId++;
  }

  /** Sends a request and waits for the answer to its call number. */
  call<T>(message: CallRequest): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.set(message[1], { resolve: resolve as (result: unknown) => void, reject });
      this.post(message);
    });
  }

  open(client: number, urls: readonly string[], settings: ServerSettings, bind: DirectoryBind): void {
    const message: ToDirectoryWorker = ["open", client, [...urls], settings, bind];
    this.opened.set(client, message);
    if (this.worker) this.outbox.push(message);
  }

  close(client: number): void {
    this.opened.delete(client);
    this.statuses.delete(client);
    if (this.worker) this.outbox.push(["close", client]);
  }

  /** Calls in flight on a worker that stopped are refused: the directory did not answer them. */
  private failPending(): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending)
      p.reject(new DirectoryUnavailable(`directory unavailable: ${WORKER_GONE}`, "worker stopped"));
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failPending();
    await worker?.terminate();
  }
}

/** One directory's client on the worker thread; its servers' states as the worker last told them. */
class WorkerDirectoryClient implements DirectoryConnection {
  private readonly id: number;
  private readonly initial: ServerStatus[];

  constructor(
    private readonly thread: DirectoryThread,
    urls: readonly string[],
    settings: ServerSettings,
    bind: DirectoryBind,
  ) {
    this.id = thread.id();
    this.initial = urls.map((url) => ({ url, state: "closed", last_error: "" }));
    thread.open(this.id, urls, settings, bind);
  }

  async search(spec: SearchSpec): Promise<{ entries: Entry[]; references: number }> {
    const call = this.thread.id();
    const result = await this.thread.call<{ entries: Entry[]; references: number }>([
      "search",
      call,
      this.id,
      spec,
    ]);
    if (spec.binary) revive(result.entries);
    return result;
  }

  checkPassword(dn: string, password: string): Promise<boolean> {
    // As DirectoryClient.checkPassword: an empty password is an anonymous bind and proves nothing.
    if (password === "" || dn === "") return Promise.resolve(false);
    return this.thread.call<boolean>(["bind", this.thread.id(), this.id, dn, password]);
  }

  /** Pages one at a time, as DirectoryClient.pages: the worker reads the next when asked. */
  async *pages(spec: SearchSpec, pageSize: number): AsyncGenerator<Entry[]> {
    const call = this.thread.id();
    let page = await this.thread.call<Entry[] | null>(["pages", call, this.id, spec, pageSize]);
    try {
      while (page !== null) {
        yield spec.binary ? revive(page) : page;
        page = await this.thread.call<Entry[] | null>(["next", call]);
      }
    } finally {
      // Left early (the caller broke off, or an error): the worker ends the search.
      if (page !== null) await this.thread.call(["stop", call]).catch(() => {});
    }
  }

  status(): ServerStatus[] {
    const told = this.thread.statuses.get(this.id);
    if (!told) return this.initial;
    // The worker tells a state when a call changes it; a cooldown ending is read off the clock.
    const now = Date.now();
    return told.servers.map((server, i) => statusAt(server, told.reopenTimes[i]!, now));
  }

  async close(): Promise<void> {
    this.thread.close(this.id);
  }
}

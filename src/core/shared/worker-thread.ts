// Starting one of Wisp's worker threads (the EAP TLS pool's, the directory clients'): the compiled
// module beside the caller in the build (dist/), the TypeScript file through tsx from src/.
import { Worker } from "node:worker_threads";

/**
 * A worker running module `name` from the folder of the file whose `import.meta.url` is `besideUrl`.
 * The build maps each source file's import.meta.url to its compiled place (scripts/build.mjs), so
 * `name`.js is found there; the build must list the module as an entry point.
 */
export function startWorkerThread(besideUrl: string, name: string): Worker {
  if (!besideUrl.endsWith(".ts")) return new Worker(new URL(`./${name}.js`, besideUrl));
  // node 20 does not apply the main thread's --import hooks to a worker's entry module: the worker
  // registers tsx's loader itself, then imports the TypeScript file.
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL(`./${name}.ts`, besideUrl).href;
  const code = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(code, { eval: true });
}

/**
 * Messages to another thread sent together at the end of this event-loop turn, as one array: one
 * message (one copy, one wake-up of the other thread) for the many requests a busy turn makes. A
 * message each cost 7.5 µs of CPU per round trip on the 2-core machines here, batched ones 2 µs.
 */
export class TurnBatch<T> {
  private queued: T[] = [];
  private transfer: ArrayBuffer[] = [];

  /** `send` posts the batch, moving the `transfer` buffers (postMessage's transfer list). */
  constructor(private readonly send: (batch: T[], transfer: ArrayBuffer[]) => void) {}

  push(message: T, transfer: readonly ArrayBuffer[] = []): void {
    if (this.queued.length === 0) setImmediate(this.flush);
    this.queued.push(message);
    for (const buffer of transfer) this.transfer.push(buffer);
  }

  /** What is queued goes now (also called by the turn's end). */
  readonly flush = (): void => {
    if (this.queued.length === 0) return;
    const batch = this.queued;
    const transfer = this.transfer;
    this.queued = [];
    this.transfer = [];
    this.send(batch, transfer);
  };
}

/**
 * A copy of `data` in an ArrayBuffer of its own and of its exact size, to transfer to another
 * thread: a pooled Buffer's slab would be cloned whole, or detached from everything else on it.
 */
export function ownCopy(data: Uint8Array): Uint8Array<ArrayBuffer> {
  return Uint8Array.prototype.slice.call(data) as Uint8Array<ArrayBuffer>;
}

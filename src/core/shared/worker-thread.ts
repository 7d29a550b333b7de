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

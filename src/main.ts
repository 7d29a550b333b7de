// Process entry for `npm start` / `wisp serve`: start everything, stop cleanly on SIGTERM/SIGINT.
import v8 from "node:v8";
import { loadConfig } from "./config.ts";
import type { RunningServer } from "./server.ts";
import { describeFailure } from "./startup.ts";

/**
 * V8 doubles its young generation each time the objects that survived it since the last doubling
 * outgrow it. Starting the server makes some 35 MB of objects that all survive (the code, the
 * routes' schemas and serializers, the templates, the RADIUS dictionary: they live as long as the
 * process), so the start alone took the young generation to its largest, 2 x 16 MB, and kept it
 * resident while the server sat idle (32 of its 138 MB idle RSS). It does not grow while the server
 * starts; once it listens, V8 sizes it for the traffic it sees. A --semi-space-* setting given to
 * node is left as it is. (The flag is read whenever the young generation grows, so changing it at
 * run time takes effect; V8 has no other way to ask for this.)
 */
function holdYoungGenerationDuringStart(): () => void {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ");
  if (/semi[-_]space/.test(given)) return () => {};
  v8.setFlagsFromString("--semi-space-growth-factor=1");
  return () => v8.setFlagsFromString("--semi-space-growth-factor=2"); // V8's default
}

async function main(): Promise<void> {
  const releaseYoungGeneration = holdYoungGenerationDuringStart();
  const config = loadConfig();
  let server: RunningServer | undefined;
  let stopping: string | undefined;
  const shutDown = (running: RunningServer, signal: string) => {
    running.app.log.info({ signal }, "shutting down: finishing in-flight requests");
    running.close().then(
      () => {
        running.app.log.info("shutdown complete");
        process.exit(0);
      },
      (error) => {
        running.app.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  // Listening for signals before the start: the start-up line is written before startServer()
  // resolves, and a supervisor (or a test) may send SIGTERM as soon as it reads it. A signal during
  // the start is acted on once the server is up; the shutdown timer runs from the signal either way.
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = signal;
    const timer = setTimeout(() => {
      if (server) server.app.log.error("shutdown timed out; exiting");
      else console.error("wisp: shutdown timed out while starting; exiting");
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    if (server) shutDown(server, signal);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  // Imported here, not above: its modules read the static files they serve as they load, and one
  // that cannot be read is then said in one line like any other failure to start.
  const { startServer } = await import("./server.ts");
  server = await startServer(config);
  releaseYoungGeneration();
  if (stopping) shutDown(server, stopping);
}

main().catch((error) => {
  console.error(`wisp: ${describeFailure(error)}`);
  process.exit(1);
});

// Process entry for `npm start` / `wisp serve`: start everything, stop cleanly on SIGTERM/SIGINT.
import { loadConfig } from "./config.ts";
import type { RunningServer } from "./server.ts";
import { describeFailure } from "./startup.ts";

async function main(): Promise<void> {
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
  if (stopping) shutDown(server, stopping);
}

main().catch((error) => {
  console.error(`wisp: ${describeFailure(error)}`);
  process.exit(1);
});

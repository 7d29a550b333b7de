// Process entry for `npm start` / `wisp serve`: start everything, stop cleanly on SIGTERM/SIGINT.
import { loadConfig } from "./config.ts";
import { describeFailure } from "./startup.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  // Imported here, not above: its modules read the static files they serve as they load, and one
  // that cannot be read is then said in one line like any other failure to start.
  const { startServer } = await import("./server.ts");
  const server = await startServer(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, "shutting down: finishing in-flight requests");
    const timer = setTimeout(() => {
      server.app.log.error("shutdown timed out; exiting");
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    server.close().then(
      () => {
        server.app.log.info("shutdown complete");
        process.exit(0);
      },
      (error) => {
        server.app.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((error) => {
  console.error(`wisp: ${describeFailure(error)}`);
  process.exit(1);
});

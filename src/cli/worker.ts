import type { Command } from "commander";
import pino from "pino";
import { loadConfig } from "../config.ts";
import { loadDictionary } from "../core/aaa/dictionary.ts";
import { createCore } from "../core/index.ts";
import { registerJobHandlers } from "../jobs/handlers.ts";
import { Worker } from "../jobs/worker.ts";
import type { MetricsListener } from "../metrics/http.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { DasClient } from "../radius/das-client.ts";
import { openMigratedDatabase } from "../startup.ts";

/** `wisp worker`: only the background worker, for deployments that run it apart from the API. */
export function registerWorkerCommand(program: Command): void {
  program
    .command("worker")
    .description("run the background worker alone (webhook deliveries, report files) until SIGTERM")
    .action(async () => {
      const config = loadConfig();
      const log = pino({ level: config.logLevel });
      // Disconnect-Requests (RFC 5176) are encoded with it: a missing file stops the start, as in the server.
      loadDictionary();
      const database = await openMigratedDatabase({
        dataDir: config.dataDir,
        databaseUrl: config.databaseUrl,
      });
      const core = createCore(database, { ...config, das: new DasClient({ log }) });
      // The worker has no HTTP port: its metrics are served on METRICS_LISTEN only.
      let metrics: Metrics | undefined;
      let listener: MetricsListener | undefined;
      if (config.metricsListen) {
        // Loaded only when metrics are on, as in the server.
        const [{ Metrics }, { startMetricsListener }] = await Promise.all([
          import("../metrics/metrics.ts"),
          import("../metrics/http.ts"),
        ]);
        metrics = new Metrics({ database, jobs: core.jobs, webhooks: core.webhooks.engine });
        try {
          listener = await startMetricsListener(metrics, config.metricsListen);
        } catch (error) {
          await database.close();
          throw error;
        }
      } else if (config.metricsToken) {
        log.warn(
          "METRICS_TOKEN is set but wisp worker has no HTTP port: set METRICS_LISTEN to serve its metrics",
        );
      }
      const worker = new Worker(core.jobs, { log });
      registerJobHandlers(worker, core);
      worker.start();
      log.info(
        {
          worker: worker.id,
          database: database.location,
          metrics: listener ? `${listener.url}/metrics` : null,
        },
        "wisp worker started",
      );
      await new Promise<void>((resolve) => {
        process.once("SIGTERM", resolve);
        process.once("SIGINT", resolve);
      });
      await listener?.close();
      await worker.stop();
      metrics?.close();
      await core.aaa.drain();
      await database.close();
      log.info("wisp worker stopped");
    });
}

// Assembles a running Wisp: database (migrated), core, counters, HTTP. main.ts and tests use it.
import type { FastifyInstance } from "fastify";
import type { Config } from "./config.ts";
import { type Core, createCore } from "./core/index.ts";
import { openDatabase } from "./db/database.ts";
import { migrate } from "./db/migrate.ts";
import { buildApp } from "./http/app.ts";
import { type CounterStore, createCounterStore } from "./http/rate-limit.ts";
import { registerJobHandlers } from "./jobs/handlers.ts";
import { Worker } from "./jobs/worker.ts";
import { RadiusServer } from "./radius/server.ts";

export interface RunningServer {
  app: FastifyInstance;
  core: Core;
  /** The address the HTTP server listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  radius: RadiusServer;
  /** The background worker, unless WORKER=0 (then `wisp worker` runs it elsewhere). */
  worker: Worker | undefined;
  close(): Promise<void>;
}

export interface ServerOverrides {
  /** Prefix of the Redis rate-limit keys; lets tests share one Redis without sharing counters. */
  redisPrefix?: string;
  counters?: CounterStore;
}

export async function startServer(config: Config, overrides: ServerOverrides = {}): Promise<RunningServer> {
  const database = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  let counters: CounterStore | undefined;
  try {
    await migrate(database);
    const core = createCore(database, config);
    counters = overrides.counters ?? createCounterStore(config.redisUrl, overrides.redisPrefix);
    const app = await buildApp({
      core,
      counters,
      defaultRateLimit: config.defaultRateLimit,
      authFailureLimit: config.authFailureLimit,
      trustedProxies: config.trustedProxies,
      logLevel: config.logLevel,
    });
    await app.listen({ host: config.host, port: config.port });
    const radius = new RadiusServer({
      host: config.radiusHost,
      authPort: config.radiusAuthPort,
      acctPort: config.radiusAcctPort,
      aaa: core.aaa,
      findClient: (address) => core.networks.findClientByAddress(address),
      log: app.log,
    });
    await radius.start();
    const worker = config.runWorker ? new Worker(core.jobs, { log: app.log }) : undefined;
    if (worker) {
      registerJobHandlers(worker, core);
      worker.start();
    }
    app.log.info(
      { database: database.location, redis: Boolean(config.redisUrl), radius: radius.ports },
      "wisp started",
    );
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
    const storeInUse = counters;
    return {
      app,
      core,
      radius,
      worker,
      url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
      async close() {
        // Stop accepting, let in-flight requests finish, then release the database and Redis.
        await radius.close();
        await app.close();
        await worker?.stop();
        await core.aaa.drain();
        await storeInUse.close();
        await database.close();
      },
    };
  } catch (error) {
    await counters?.close();
    await database.close();
    throw error;
  }
}

// Assembles a running Wisp: database (migrated), core, counters, HTTP. main.ts and tests use it.
import type { FastifyInstance } from "fastify";
import type { Config } from "./config.ts";
import { type Core, createCore } from "./core/index.ts";
import { openDatabase } from "./db/database.ts";
import { migrate } from "./db/migrate.ts";
import { buildApp } from "./http/app.ts";
import { type CounterStore, createCounterStore } from "./http/rate-limit.ts";

export interface RunningServer {
  app: FastifyInstance;
  core: Core;
  /** The address the HTTP server listens on, e.g. http://127.0.0.1:8080 */
  url: string;
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
    app.log.info({ database: database.location, redis: Boolean(config.redisUrl) }, "wisp started");
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
    const storeInUse = counters;
    return {
      app,
      core,
      url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
      async close() {
        // Stop accepting, let in-flight requests finish, then release the database and Redis.
        await app.close();
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

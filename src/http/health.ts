// GET /healthz for load balancers and monitors: 200 when the database can be read, 503 with the
// reason when it cannot. Redis (REDIS_URL) is reported but does not fail the check: without it the
// API still answers, only its rate limits go uncounted.
import type { FastifyInstance } from "fastify";
import type { Database } from "../db/database.ts";
import { errorPayload } from "./errors.ts";
import type { CounterStore } from "./rate-limit.ts";

export interface HealthOptions {
  database: Database;
  counters: CounterStore;
}

/** How long a check may take before it counts as failed (a hung PostgreSQL or Redis). */
const CHECK_TIMEOUT_MS = 2000;

/** Resolves to "ok" or to why the check failed, never rejects. */
async function check(probe: () => Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return "ok";
  } catch (error) {
    return (error as Error)?.message || String(error);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoute(app: FastifyInstance, { database, counters }: HealthOptions): void {
  const pingRedis = counters.ping?.bind(counters);
  app.get("/healthz", { schema: { hide: true } }, async (request, reply) => {
    const [db, redis] = await Promise.all([
      check(() => database.ping()),
      pingRedis ? check(pingRedis) : undefined,
    ]);
    const redisField = redis === undefined ? {} : { redis: redis === "ok" ? "ok" : `unreachable: ${redis}` };
    reply.header("Cache-Control", "no-store");
    if (db !== "ok") {
      request.log.warn({ reason: db }, "health check: the database cannot be read");
      const message = `the database cannot be read: ${db}`;
      return reply
        .code(503)
        .send({ ...errorPayload(503, message), status: "unavailable", database: db, ...redisField });
    }
    return {
      status: redis === undefined || redis === "ok" ? "ok" : "degraded",
      database: "ok",
      ...redisField,
    };
  });
}

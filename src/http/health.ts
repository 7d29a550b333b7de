// GET /healthz for load balancers and monitors: 200 when the database can be read, 503 with the
// reason when it cannot. Redis (REDIS_URL) is reported but does not fail the check: without it the
// API still answers, only its rate limits go uncounted. Directories (LDAP sources) this process
// talks to are reported by state too (a directory down makes the status degraded: only its users'
// logins fail); server addresses and errors are for operators (API and console), not shown here.
import type { FastifyInstance } from "fastify";
import type { DirectoryHealth } from "../core/directories/runtime.ts";
import { within } from "../core/shared/time.ts";
import type { Database } from "../db/database.ts";
import { errorPayload } from "./errors.ts";
import type { CounterStore } from "./rate-limit.ts";

export interface HealthOptions {
  database: Database;
  counters: CounterStore;
  directories?: (() => Promise<DirectoryHealth[]>) | undefined;
}

/** Each directory's state: ok (every server closed), degraded (some failing), down (none usable). */
function directoryStates(list: DirectoryHealth[]) {
  return list.map((d) => {
    const failing = d.servers.filter((s) => s.state !== "closed").length;
    const state = failing === 0 ? "ok" : failing === d.servers.length ? "down" : "degraded";
    return { account_id: d.account_id, directory: d.directory, state, servers_failing: failing };
  });
}

/** How long a check may take before it counts as failed (a hung PostgreSQL or Redis). */
const CHECK_TIMEOUT_MS = 2000;

/** Resolves to "ok" or to why the check failed, never rejects. */
async function check(probe: () => Promise<void>): Promise<string> {
  try {
    await within(probe(), CHECK_TIMEOUT_MS, () => new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`));
    return "ok";
  } catch (error) {
    return (error as Error)?.message || String(error);
  }
}

export function healthRoute(app: FastifyInstance, { database, counters, directories }: HealthOptions): void {
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
    const dirs = directories ? directoryStates(await directories()) : [];
    const degraded = (redis !== undefined && redis !== "ok") || dirs.some((d) => d.state !== "ok");
    return {
      status: degraded ? "degraded" : "ok",
      database: "ok",
      ...redisField,
      ...(dirs.length > 0 ? { directories: dirs } : {}),
    };
  });
}

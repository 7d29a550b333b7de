// Metrics over HTTP: every request timed by route pattern and status, and the two ways /metrics is
// served: on the HTTP port behind METRICS_TOKEN, or on METRICS_LISTEN without one.
import { createHash, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from "fastify";
import { errorPayload, sendError } from "../http/errors.ts";
import { listenFailure } from "../startup.ts";
import { type HistogramCell, HistogramCells } from "./cells.ts";
import type { Metrics } from "./metrics.ts";

/** Seconds: from 1 ms to 10 s. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The route label of a request no route matched (404, 405): never the raw URL. */
const UNMATCHED = "unmatched";

/** One route's cells by method and status, made on first use. */
class RouteCells {
  private readonly byMethod = new Map<string, Map<number, HistogramCell>>();

  constructor(
    private readonly family: HistogramCells,
    private readonly route: string,
  ) {}

  observe(method: string, status: number, seconds: number): void {
    let byStatus = this.byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      this.byMethod.set(method, byStatus);
    }
    let cell = byStatus.get(status);
    if (!cell) {
      cell = this.family.cell({ method, route: this.route, status: String(status) });
      byStatus.set(status, cell);
    }
    cell.observe(seconds);
  }
}

/**
 * Times every request of `app` (register before the routes): each route gets an onResponse hook
 * that knows its pattern, so a request costs no route lookup; requests no route matched are
 * counted by one hook on the root.
 */
export function instrumentHttp(app: FastifyInstance, metrics: Metrics): void {
  const family = new HistogramCells(
    metrics.registry,
    "wisp_http_request_duration_seconds",
    "HTTP requests by method, route pattern and status, and the time to answer them",
    HTTP_BUCKETS,
  );
  const routes = new Map<string, RouteCells>();
  const cellsOf = (route: string) => {
    let cells = routes.get(route);
    if (!cells) {
      cells = new RouteCells(family, route);
      routes.set(route, cells);
    }
    return cells;
  };
  app.addHook("onRoute", (route) => {
    const cells = cellsOf(route.url);
    const hook: onResponseHookHandler = (request, reply, done) => {
      cells.observe(request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    const existing = route.onResponse;
    route.onResponse =
      existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
  });
  const unmatched = cellsOf(UNMATCHED);
  app.addHook("onResponse", (request, reply, done) => {
    if (request.is404) unmatched.observe(request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** GET /metrics on the HTTP port: Authorization: Bearer <METRICS_TOKEN>, else 401. */
export function metricsRoute(app: FastifyInstance, metrics: Metrics, token: string): void {
  // Digests of equal length, compared in constant time: neither the token's length nor a prefix leaks.
  const expected = digest(token);
  app.get("/metrics", { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization ?? "";
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      reply.header("WWW-Authenticate", 'Bearer realm="metrics"');
      const problem = match ? "the metrics token is not valid" : "send Authorization: Bearer <METRICS_TOKEN>";
      return sendError(reply, 401, problem);
    }
    const { contentType, body } = await metrics.scrape();
    return reply.header("Cache-Control", "no-store").type(contentType).send(body);
  });
}

export interface MetricsListener {
  /** http://host:port of the listener. */
  url: string;
  close(): Promise<void>;
}

function sendJsonError(response: http.ServerResponse, status: number, message: string): void {
  const body = JSON.stringify(errorPayload(status, message));
  response.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  });
  response.end(body);
}

/**
 * METRICS_LISTEN: a plain node:http server answering GET /metrics without a token (keep it on a
 * private address), for the worker, which has no HTTP port, and for operators who keep scrapes
 * off the public port. Anything else gets 404/405 in the error shape.
 */
export async function startMetricsListener(
  metrics: Metrics,
  where: { host: string; port: number },
): Promise<MetricsListener> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path !== "/metrics") return sendJsonError(response, 404, `no route ${request.method} ${path}`);
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.setHeader("Allow", "GET, HEAD");
      return sendJsonError(response, 405, `${request.method} is not allowed here; use GET`);
    }
    metrics.scrape().then(
      ({ contentType, body }) => {
        response.writeHead(200, {
          "Content-Type": contentType,
          "Content-Length": Buffer.byteLength(body),
          "Cache-Control": "no-store",
        });
        response.end(request.method === "HEAD" ? undefined : body);
      },
      () => sendJsonError(response, 500, "internal server error"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(where.port, where.host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch((error) => {
    throw listenFailure(error, "metrics", where.host, where.port);
  });
  const host = where.host.includes(":") ? `[${where.host}]` : where.host;
  return {
    url: `http://${host}:${where.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

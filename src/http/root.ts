// The HTTP server both web doors (the API and the console) are mounted on: one fastify with the
// settings they share, and the answers given before any route is chosen, so that even a request
// Node or the router cannot parse gets the common error shape.
import type { Socket } from "node:net";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import { VERSION } from "../version.ts";
import { errorPayload, handleError, sendError } from "./errors.ts";
import { buildLazySerializer } from "./lazy-compile.ts";
import { validatorBuilder } from "./validation.ts";

export interface HttpRootOptions {
  logLevel?: string;
  trustedProxies?: string[];
}

export const BODY_LIMIT = 1024 * 1024;
/** Node's default --max-http-header-size (16 KiB); over it the request gets 431. */
const HEADER_LIMIT_KIB = 16;
/** find-my-way's default: a path parameter (an id, a username) longer than this gets 414. */
const MAX_PARAM_LENGTH = 100;

/**
 * What Node's HTTP parser (llhttp) rejected, in words a client can act on. The codes are llhttp's
 * error names as Node reports them on `clientError` (node/lib/_http_server.js, socketOnError).
 */
function describeClientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): [number, string] {
  // 0x16 opens a TLS record (RFC 8446 section 5.1): https:// sent to this plain-HTTP port.
  if (error.rawPacket?.[0] === 0x16) {
    return [400, "a TLS handshake arrived on a plain-HTTP port: use http://, or a TLS proxy in front"];
  }
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return [431, `the request's headers are larger than the ${HEADER_LIMIT_KIB} KiB limit`];
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "ERR_HTTP_HEADERS_TIMEOUT":
      return [408, "the request did not arrive in time"];
    case "HPE_INVALID_METHOD":
      return [400, "the request line is not valid HTTP: unknown method"];
    case "HPE_INVALID_URL":
      return [400, "the request line is not valid HTTP: malformed target"];
    case "HPE_INVALID_VERSION":
      return [400, "the request line is not valid HTTP: unknown version"];
    case "HPE_INVALID_CONSTANT":
      return [400, "the request line is not valid HTTP: expected METHOD target HTTP/1.1"];
    case "HPE_INVALID_HEADER_TOKEN":
    case "HPE_LF_EXPECTED":
    case "HPE_CR_EXPECTED":
      return [400, "a request header is not valid HTTP"];
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return [400, "the Content-Length header is not valid"];
    case "HPE_INVALID_TRANSFER_ENCODING":
    case "HPE_INVALID_CHUNK_SIZE":
      return [400, "the request body's chunked encoding is not valid"];
    default:
      return [400, "the request could not be parsed as HTTP/1.1"];
  }
}

/** Answers on the raw socket: there is no request object yet (fastify's clientErrorHandler). */
function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, message] = describeClientError(error);
  this.log.debug({ code: error.code, status }, "unparsable request");
  if (socket.writable) {
    const body = JSON.stringify(errorPayload(status, message));
    socket.write(
      `HTTP/1.1 ${status} ${status === 431 ? "Request Header Fields Too Large" : status === 408 ? "Request Timeout" : "Bad Request"}\r\n` +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Errors fastify raises while choosing a route (fastify's frameworkErrors option). */
function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  switch (error.code) {
    case "FST_ERR_BAD_URL":
      return sendError(reply, 400, "the path is not valid percent-encoding (RFC 3986 section 2.1)");
    case "FST_ERR_MAX_PARAM_LENGTH":
      return sendError(reply, 414, `a path segment is longer than ${MAX_PARAM_LENGTH} characters`);
    default:
      return sendError(reply, 500, "internal server error");
  }
}

export function createHttpRoot(options: HttpRootOptions): FastifyInstance {
  const app = Fastify({
    logger: {
      level: options.logLevel ?? "info",
      // Keys and cookies never reach the log, whatever a serializer does later.
      redact: ["req.headers.authorization", "req.headers.cookie", 'res.headers["set-cookie"]'],
    },
    bodyLimit: BODY_LIMIT,
    trustProxy: options.trustedProxies && options.trustedProxies.length > 0 ? options.trustedProxies : false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    return503OnClosing: true,
    schemaController: {
      compilersFactory: { buildValidator: validatorBuilder(), buildSerializer: buildLazySerializer },
    },
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  });
  app.setErrorHandler(handleError);
  // Clients read the server's version to name a mismatch (an older server missing a route).
  app.addHook("onRequest", (request, reply, done) => {
    if (request.url.startsWith("/api/")) reply.header("Wisp-Version", VERSION);
    done();
  });
  trackShutdown(app);
  answerUnknownRoutes(app);
  return app;
}

/**
 * Once shutdown starts, answers to requests still in flight close their connection (so a keep-alive
 * client does not hold the server open until the shutdown timeout), and handlers still running
 * (their client may have gone) finish before onClose returns, so the database is never closed
 * under them.
 */
function trackShutdown(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  // Every response passes here: a callback hook, which costs no promise.
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("Connection", "close");
    done(null, payload);
  });
  let running = 0;
  const idle: (() => void)[] = [];
  app.addHook("onClose", async () => {
    if (running > 0) await new Promise<void>((resolve) => idle.push(resolve));
  });
  const finished = () => {
    if (--running === 0) for (const resolve of idle.splice(0)) resolve();
  };
  app.addHook("onRoute", (route) => {
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request, reply) {
      running++;
      let result: unknown;
      try {
        result = handler.call(this, request, reply);
      } catch (error) {
        finished();
        throw error;
      }
      if (!(result instanceof Promise)) {
        finished();
        return result;
      }
      return result.then(
        (value) => {
          finished();
          return value;
        },
        (error) => {
          finished();
          throw error;
        },
      );
    };
  });
}

/** 405 with Allow for a known path asked with another method, 404 for any other unknown route. */
function answerUnknownRoutes(app: FastifyInstance): void {
  // A second router that knows every path, to tell "wrong method" from "no such path".
  const paths = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH });
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) paths.on(method.toUpperCase() as HTTPMethod, route.url, () => {});
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = (["GET", "POST", "PUT", "PATCH", "DELETE"] as const).filter((m) => paths.find(m, path));
    if (allowed.length > 0) {
      reply.header("Allow", allowed.join(", "));
      return sendError(reply, 405, `${request.method} is not allowed here; use ${allowed.join(", ")}`);
    }
    return sendError(reply, 404, `no route ${request.method} ${path}`);
  });
}

// One error body for every failure: {"error": true, "message": ..., "code": <status>}.
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { AppError, type FieldProblem, TooManyRequestsError, ValidationError } from "../core/shared/errors.ts";
import { BUSY_RETRY_AFTER_S, isDatabaseBusy } from "../db/sqlite-writer.ts";
import { describeValidation } from "./validation.ts";

export interface ErrorPayload {
  error: true;
  message: string;
  code: number;
  details?: FieldProblem[];
}

export function errorPayload(code: number, message: string, details?: FieldProblem[]): ErrorPayload {
  return details && details.length > 0
    ? { error: true, message, code, details }
    : { error: true, message, code };
}

export function sendError(reply: FastifyReply, code: number, message: string, details?: FieldProblem[]) {
  return reply
    .code(code)
    .type("application/json; charset=utf-8")
    .send(errorPayload(code, message, details));
}

/** Fastify's own failures, in words a client can act on. */
const frameworkMessages: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: [400, "the body is not valid JSON"],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, "the body is empty; send a JSON object"],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, "the body is larger than the 1 MiB limit"],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, "send the body as Content-Type: application/json;charset=utf-8"],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, "Content-Length does not match the body"],
  FST_ERR_CTP_INVALID_TYPE: [415, "send the body as Content-Type: application/json;charset=utf-8"],
};

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ValidationError) return sendError(reply, 400, error.message, error.details);
  if (error instanceof TooManyRequestsError) reply.header("Retry-After", error.retryAfterSeconds);
  if (error instanceof AppError) return sendError(reply, error.status, error.message);
  if (error.validation) {
    const problems = describeValidation(error.validation, error.validationContext ?? "body");
    return sendError(reply, 400, problems.map((p) => `${p.field} ${p.message}`).join("; "), problems);
  }
  const known = error.code ? frameworkMessages[error.code] : undefined;
  if (known) return sendError(reply, known[0], known[1]);
  if (error instanceof SyntaxError) return sendError(reply, 400, "the body is not valid JSON");
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return sendError(reply, status, error.message);
  if (isDatabaseBusy(error)) return sendBusy(request, reply);
  request.log.error({ err: error }, "unhandled error");
  return sendError(reply, 500, "internal server error");
}

/** Another process held SQLite's write lock past the wait: nothing was written, try again. */
function sendBusy(request: FastifyRequest, reply: FastifyReply) {
  request.log.warn("the database stayed locked by another process; answered 503");
  reply.header("Retry-After", String(BUSY_RETRY_AFTER_S));
  return sendError(
    reply,
    503,
    "the database is busy (another process holds its write lock); try again shortly",
  );
}

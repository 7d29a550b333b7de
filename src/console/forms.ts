// HTML form bodies (application/x-www-form-urlencoded) for the console's routes only, and the
// small conversions from form text to the values services take.
import type { FastifyInstance, FastifyRequest } from "fastify";

/** Forms are small; a larger body is refused before it is parsed. */
const FORM_BODY_LIMIT = 256 * 1024;

export class Form {
  constructor(private readonly params: URLSearchParams) {}

  /** The field's text, trimmed; "" when absent. */
  text(name: string): string {
    return (this.params.get(name) ?? "").trim();
  }

  /** The field exactly as sent (passwords, secrets); "" when absent. */
  raw(name: string): string {
    return this.params.get(name) ?? "";
  }

  /** The trimmed text, or undefined when it is empty (an optional field left blank). */
  optional(name: string): string | undefined {
    const value = this.text(name);
    return value === "" ? undefined : value;
  }

  all(name: string): string[] {
    return this.params.getAll(name);
  }

  checked(name: string): boolean {
    return this.params.has(name);
  }

  /**
   * A whole number field: undefined when blank, NaN when it is not digits (the service then says
   * what the field must be, next to it).
   */
  integer(name: string): number | undefined {
    const value = this.text(name);
    if (value === "") return undefined;
    return /^-?\d{1,15}$/.test(value) ? Number(value) : Number.NaN;
  }
}

export function formOf(request: FastifyRequest): Form {
  return new Form(request.body instanceof URLSearchParams ? request.body : new URLSearchParams());
}

/** Registers the form parser in the console's own context; the API keeps its JSON-only parsing. */
export function registerFormParser(app: FastifyInstance): void {
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );
}

/** A positive whole number from a path or query parameter; undefined for anything else. */
export function positiveId(text: unknown): number | undefined {
  if (typeof text !== "string" || !/^\d{1,9}$/.test(text)) return undefined;
  const value = Number(text);
  return value >= 1 ? value : undefined;
}

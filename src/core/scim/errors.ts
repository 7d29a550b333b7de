// SCIM's errors (RFC 7644 section 3.12): an HTTP status and, for 400s and 409s, a scimType that
// says what was wrong. Every SCIM failure the service raises is one of these; the SCIM door also
// maps the other domain errors (src/core/shared/errors.ts) onto them.
import { AppError } from "../shared/errors.ts";

/** RFC 7644 section 3.12, table 9 (the detail error keyword values). */
export type ScimType =
  | "invalidFilter"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidSyntax"
  | "invalidPath"
  | "noTarget"
  | "invalidValue"
  | "invalidVers"
  | "sensitive";

export class ScimError extends AppError {
  constructor(
    status: number,
    message: string,
    readonly scimType?: ScimType,
  ) {
    super(status, message);
  }
}

export const invalidValue = (detail: string) => new ScimError(400, detail, "invalidValue");
export const invalidSyntax = (detail: string) => new ScimError(400, detail, "invalidSyntax");
export const invalidFilter = (detail: string) => new ScimError(400, detail, "invalidFilter");
export const invalidPath = (detail: string) => new ScimError(400, detail, "invalidPath");
export const mutability = (detail: string) => new ScimError(400, detail, "mutability");
export const noTarget = (detail: string) => new ScimError(400, detail, "noTarget");
export const uniqueness = (detail: string) => new ScimError(409, detail, "uniqueness");
export const notFound = (detail: string) => new ScimError(404, detail);

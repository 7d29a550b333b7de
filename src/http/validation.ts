// Request validation: one Ajv for bodies (no type coercion: "5" is not a number) and one for
// query strings and path parameters (where everything arrives as text).
import { Ajv, type ErrorObject } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FieldProblem } from "../core/shared/errors.ts";
import { NO_CONTROL_CHARACTERS } from "../core/shared/text.ts";
import { EMAIL_PATTERN, EMAIL_RULE, USERNAME_PATTERN, USERNAME_RULE } from "../core/users/rules.ts";
import { CODE_PATTERN, CODE_RULE, PREFIX_PATTERN, PREFIX_RULE } from "../core/vouchers/rules.ts";

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Patterns are unreadable in an error message; say what they mean instead. */
const patternRules: Record<string, string> = {
  [USERNAME_PATTERN]: USERNAME_RULE,
  [EMAIL_PATTERN]: EMAIL_RULE,
  [NO_CONTROL_CHARACTERS]: "must not contain control characters",
  [PREFIX_PATTERN]: PREFIX_RULE,
  [CODE_PATTERN]: CODE_RULE,
};

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Builds the validator compiler for a plugin context with the shared schemas it can reference.
 * Given to fastify as schemaController.compilersFactory.buildValidator, so contexts that add
 * schemas of their own get the same rules (setValidatorCompiler alone does not reach them).
 */
export function buildValidator(externalSchemas: unknown = {}) {
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv(true);
  for (const schema of Object.values(externalSchemas as Record<string, object>)) {
    bodyAjv.addSchema(schema as object);
    textAjv.addSchema(schema as object);
  }
  return ({ schema, httpPart }: { schema: unknown; httpPart?: string | undefined }) =>
    (httpPart === "body" ? bodyAjv : textAjv).compile(schema as object);
}

const partNames: Record<string, string> = { body: "body", querystring: "query", params: "path" };

function describe(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not a known field";
    case "type":
      return p.type === "integer" ? "must be a whole number" : `must be a ${p.type}`;
    case "enum":
      return `must be one of ${(p.allowedValues as string[]).join(", ")}`;
    case "const":
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case "pattern":
      return patternRules[p.pattern as string] ?? "has an invalid format";
    case "format":
      return `must be a valid ${p.format}`;
    case "minLength":
      return p.limit === 1 ? "must not be empty" : `must be at least ${p.limit} characters`;
    case "maxLength":
      return `must be at most ${p.limit} characters`;
    case "minimum":
      return `must be at least ${p.limit}`;
    case "maximum":
      return `must be at most ${p.limit}`;
    default:
      return error.message ?? "is invalid";
  }
}

/** Turns Ajv's errors into [{field, message}], one per field, in the order they were found. */
export function describeValidation(errors: ErrorObject[], part: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const p = error.params as Record<string, unknown>;
    const path = error.instancePath.split("/").filter(Boolean).join(".");
    const leaf = (p.missingProperty ?? p.additionalProperty) as string | undefined;
    const field = [path, leaf].filter(Boolean).join(".") || (partNames[part] ?? part);
    if (seen.has(field)) continue;
    seen.add(field);
    const message =
      field === "body" && error.keyword === "type"
        ? "must be a JSON object"
        : error.keyword === "additionalProperties" && part !== "body"
          ? "is not a known parameter"
          : describe(error);
    problems.push({ field, message });
  }
  return problems;
}

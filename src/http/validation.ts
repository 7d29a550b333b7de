// Request validation: one Ajv for bodies (no type coercion: "5" is not a number) and one for
// query strings and path parameters (where everything arrives as text).
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FieldProblem } from "../core/shared/errors.ts";
import { NO_CONTROL_CHARACTERS } from "../core/shared/text.ts";
import { EMAIL_PATTERN, EMAIL_RULE, USERNAME_PATTERN, USERNAME_RULE } from "../core/users/rules.ts";
import { CODE_PATTERN, CODE_RULE, PREFIX_PATTERN, PREFIX_RULE } from "../core/vouchers/rules.ts";
import { lazyValidator } from "./lazy-compile.ts";

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

type SchemaCompiler = (route: { schema: unknown; httpPart?: string | undefined }) => ValidateFunction;

/**
 * Makes the validator-compiler builder of one fastify root (schemaController.compilersFactory.
 * buildValidator), so contexts that add schemas of their own get the same rules
 * (setValidatorCompiler alone does not reach them). fastify calls it again for every route of a
 * context that added schemas (its schema controller never clears `addedSchemas`); two fresh Ajv
 * instances per route, each validating the shared schemas against the meta-schema, were most of
 * the server's start-up. The shared schemas are the same objects each time, so one compiler per
 * set (recognised by identity) serves them all, and its Ajv instances are made on first use.
 */
export function validatorBuilder(): (externalSchemas?: unknown) => SchemaCompiler {
  const compilers: { schemas: object[]; compiler: SchemaCompiler }[] = [];
  return (externalSchemas = {}) => {
    const schemas = Object.values(externalSchemas as Record<string, object>);
    const known = compilers.find(
      (entry) => entry.schemas.length === schemas.length && entry.schemas.every((s, i) => s === schemas[i]),
    );
    if (known) return known.compiler;
    let ajvs: { body: Ajv; text: Ajv } | undefined;
    const makeAjvs = () => {
      const body = makeAjv(false);
      const text = makeAjv(true);
      for (const schema of schemas) {
        body.addSchema(schema);
        text.addSchema(schema);
      }
      return { body, text };
    };
    const compiler: SchemaCompiler = ({ schema, httpPart }) =>
      lazyValidator<ValidateFunction>(() => {
        ajvs ??= makeAjvs();
        return (httpPart === "body" ? ajvs.body : ajvs.text).compile(schema as object);
      });
    compilers.push({ schemas, compiler });
    return compiler;
  };
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

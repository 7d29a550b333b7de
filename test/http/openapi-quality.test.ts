// The OpenAPI document's quality over every route that exists (issue 31 point 2): an operationId
// (unique), a summary, examples of the request body and of each JSON response that match their
// schemas, the error responses in the one error shape; and a real OpenAPI 3.1 linter (Redocly,
// rules in /redocly.yaml) finds nothing. Failures name the route and what it lacks.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { before, test } from "node:test";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { openApiDocument } from "../../scripts/openapi.ts";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON document, read generically
type Json = Record<string, any>;
const METHODS = ["get", "put", "post", "patch", "delete"];
const ERROR_REF = "#/components/schemas/Error";

let doc: Json;
before(async () => {
  doc = await openApiDocument();
});

function operations(): [string, Json][] {
  const found: [string, Json][] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of METHODS)
      if (item[method]) found.push([`${method.toUpperCase()} ${path}`, item[method]]);
  }
  return found;
}

/** Asserts no problems, listing each: "GET /api/x: no summary (set schema.summary in the route)". */
function assertNone(problems: string[], what: string) {
  assert.deepEqual(problems, [], `${problems.length} ${what}:\n${problems.join("\n")}`);
}

test("every route has a unique operationId and a summary", () => {
  const seen = new Map<string, string>();
  const problems: string[] = [];
  for (const [route, op] of operations()) {
    if (!op.summary?.trim()) problems.push(`${route}: no summary (set schema.summary in the route)`);
    if (!/^[a-z][A-Za-z0-9]*$/.test(op.operationId ?? ""))
      problems.push(`${route}: operationId ${JSON.stringify(op.operationId)} is not camelCase`);
    const other = seen.get(op.operationId);
    if (other)
      problems.push(
        `${route}: operationId ${op.operationId} is also ${other}'s (set schema.operationId in one route)`,
      );
    seen.set(op.operationId, route);
  }
  assertNone(problems, "operations lack an id or a summary");
});

test("every error response is documented in the one error shape", () => {
  const problems: string[] = [];
  for (const [route, op] of operations()) {
    for (const key of ["4XX", "5XX"]) if (!op.responses?.[key]) problems.push(`${route}: no ${key} response`);
    for (const [status, response] of Object.entries(op.responses ?? {}) as [string, Json][]) {
      if (/^[45]/.test(status) && response.content?.["application/json"]?.schema?.$ref !== ERROR_REF)
        problems.push(
          `${route}: response ${status} is not the Error schema (use errorResponses from src/http/schemas.ts)`,
        );
    }
  }
  assertNone(problems, "operations document errors in another shape");
});

test("every request body and JSON response has an example that matches its schema", () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, "openapi.json");
  const pointer = (parts: string[]) =>
    `openapi.json#/${parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
  const problems: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const route = `${method.toUpperCase()} ${path}`;
      const places: [string, string[], Json | undefined][] = [
        [
          "request body",
          [path, method, "requestBody", "content", "application/json"],
          op.requestBody?.content?.["application/json"],
        ],
        ...Object.entries(op.responses ?? {}).map(
          ([status, r]) =>
            [
              `response ${status}`,
              [path, method, "responses", status, "content", "application/json"],
              (r as Json).content?.["application/json"],
            ] as [string, string[], Json | undefined],
        ),
      ];
      if (
        ["post", "put", "patch"].includes(method) &&
        !op.requestBody &&
        !/disconnect|revoke|sync$/.test(path)
      )
        problems.push(`${route}: no request body documented`);
      for (const [what, parts, media] of places) {
        if (!media?.schema) continue;
        if (!("example" in media)) {
          problems.push(`${route}: ${what} has no example`);
          continue;
        }
        const validate = ajv.getSchema(pointer(["paths", ...parts, "schema"]));
        if (validate && !validate(media.example))
          problems.push(
            `${route}: ${what}'s example does not match its schema (${ajv.errorsText(validate.errors)}); give the schema \`examples\``,
          );
      }
    }
  }
  assertNone(problems, "examples missing or wrong");
});

test("the document passes Redocly's OpenAPI 3.1 lint with the committed rules", async () => {
  const configPath = new URL("../../redocly.yaml", import.meta.url).pathname;
  const config = await createConfig(readFileSync(configPath, "utf8"), { configPath });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "openapi.json", config });
  const lines = problems.map(
    (p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? "?"}: ${p.message}`,
  );
  assertNone(lines, "lint problems (fix them, or turn the rule off in redocly.yaml with the reason)");
});

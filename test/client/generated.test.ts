// The client's committed types are the OpenAPI document's: regenerated in memory and compared, so
// a route or schema changed without `npm run client:generate` fails here, naming the command.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { GENERATED_TYPES, generateClientTypes, REGENERATE_COMMAND } from "../../scripts/client-types.ts";

test("client/src/generated/openapi.ts matches the current OpenAPI document", async () => {
  const fresh = await generateClientTypes();
  const committed = readFileSync(GENERATED_TYPES, "utf8");
  if (fresh === committed) return;
  const freshLines = fresh.split("\n");
  const committedLines = committed.split("\n");
  const first = freshLines.findIndex((line, i) => line !== committedLines[i]);
  assert.fail(
    `the OpenAPI document changed but the client's types were not regenerated: run \`${REGENERATE_COMMAND}\` ` +
      `and commit client/src/generated/openapi.ts (first difference at line ${first + 1}: ` +
      `expected ${JSON.stringify(freshLines[first])}, found ${JSON.stringify(committedLines[first])})`,
  );
});

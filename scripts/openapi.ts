// Wisp's OpenAPI document without a running server: the API door built over a fresh, migrated
// SQLite database in a temporary folder, asked for its document, closed. `node --import tsx
// scripts/openapi.ts` prints it; client/scripts/generate.ts and the tests import openApiDocument.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCore } from "../src/core/index.ts";
import { apiPlugin } from "../src/http/app.ts";
import { MemoryCounterStore } from "../src/http/rate-limit.ts";
import { createHttpRoot } from "../src/http/root.ts";
import { openMigratedDatabase } from "../src/startup.ts";

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), "wisp-openapi-"));
  const database = await openMigratedDatabase({ dataDir: dir, databaseUrl: undefined });
  const app = createHttpRoot({ logLevel: "silent" });
  try {
    const core = createCore(database, { publicUrl: "http://127.0.0.1", dataDir: dir });
    await app.register(apiPlugin, {
      core,
      counters: new MemoryCounterStore(),
      defaultRateLimit: 600,
      authFailureLimit: 20,
    });
    const answer = await app.inject({ method: "GET", url: "/api/openapi.json" });
    if (answer.statusCode !== 200)
      throw new Error(`the document answered ${answer.statusCode}: ${answer.body}`);
    return answer.json() as Record<string, unknown>;
  } finally {
    await app.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await openApiDocument(), null, 2)}\n`);
}

// The audit row's cost on a write (issue 29 point 5): POST /api/users and a 10,000-voucher batch,
// each timed with the audit row and without it (skipAuditForBench, a bench-only switch), in the
// same process on the same database, in alternating rounds; medians side by side with the ratio.
// Usage: node --import tsx bench/audit.ts [--users 2000] [--rounds 5] [--postgres <url>]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.ts";
import { skipAuditForBench } from "../src/core/audit/context.ts";
import { MAX_KEY_RATE_LIMIT } from "../src/core/keys/service.ts";
import { startServer } from "../src/server.ts";

const TARGET = 1.2;
const { values } = parseArgs({
  options: {
    users: { type: "string", default: "2000" },
    rounds: { type: "string", default: "5" },
    postgres: { type: "string" },
  },
});
const USERS = Number(values.users);
const ROUNDS = Number(values.rounds);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wisp-bench-audit-"));
const config = loadConfig({
  HOST: "127.0.0.1",
  PORT: "0",
  DATA_DIR: dir,
  DATABASE_URL: values.postgres,
  LOG_LEVEL: "silent",
  RADIUS_AUTH_PORT: "0",
  RADIUS_ACCT_PORT: "0",
  WORKER: "0",
});
const server = await startServer(config);
const account = await server.core.accounts.resolve(undefined);
const { key } = await server.core.keys.create(account, {
  name: "bench",
  permissions: "full",
  rateLimit: MAX_KEY_RATE_LIMIT,
});
const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
let serial = 0;

async function post(pathname: string, body: unknown): Promise<void> {
  const res = await fetch(`${server.url}${pathname}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`${pathname}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/** Milliseconds for USERS sequential POST /api/users (each its own transaction). */
async function users(): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < USERS; i++) await post("/api/users", { username: `bench${++serial}`, password: "pw" });
  return performance.now() - started;
}

/** Milliseconds for one POST /api/vouchers/batch of 10,000. */
async function batch(): Promise<number> {
  const started = performance.now();
  await post("/api/vouchers/batch", { quantity: 10_000, validity: 3600, prefix: `B${++serial}` });
  return performance.now() - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(name: string, run: () => Promise<number>) {
  await run(); // warm-up: compiled statements, JIT
  const withRow: number[] = [];
  const without: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating which goes first, so drift (file growth, cache) falls on both.
    for (const audited of round % 2 === 0 ? [true, false] : [false, true]) {
      skipAuditForBench(!audited);
      (audited ? withRow : without).push(await run());
    }
  }
  skipAuditForBench(false);
  const a = median(withRow);
  const b = median(without);
  const ratio = a / b;
  console.log(
    `${name.padEnd(34)} with audit ${a.toFixed(0).padStart(6)} ms   without ${b.toFixed(0).padStart(6)} ms   ` +
      `ratio ${ratio.toFixed(3)}x  ${ratio <= TARGET ? "ok" : `over the ${TARGET}x target`}`,
  );
}

try {
  console.log(`database: ${server.core.database.dialect}; ${ROUNDS} rounds each, medians`);
  await measure(`POST /api/users x ${USERS}`, users);
  await measure("POST /api/vouchers/batch (10,000)", batch);
} finally {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import autocannon, { type Result } from "autocannon";
import { createCore } from "../src/core/index.ts";
import { MAX_KEY_RATE_LIMIT } from "../src/core/keys/service.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { benchUser, LIST_LIMIT, SEEDED_USERS } from "./fixtures.ts";
import {
  BenchError,
  cpuMicroseconds,
  type HttpChild,
  installExitHandlers,
  makeTempDir,
  removeTempDir,
  runBench,
  startHttpChild,
  stopChild,
  writeResults,
} from "./processes.ts";

const TARGET_RATIO = 0.5;
/** Distinct ids each connection cycles through on the single-user endpoint. */
const ID_SPREAD = 100;

interface Settings {
  duration: number;
  rounds: number;
  connections: number;
  warmup: number;
  postgresUrl: string | undefined;
  cpuProfDir: string | undefined;
  only: "id" | "list" | undefined;
}

interface Target {
  database: "sqlite" | "postgres";
  url: string | undefined;
}

interface Seeded {
  key: string;
  userIds: number[];
  cleanup(): Promise<void>;
}

interface Endpoint {
  id: "id" | "list";
  name: string;
  /** Requests for Wisp and for the bare server (paths match; the ids only matter to Wisp). */
  requests(ids: number[]): { path: string }[];
  /** Checks one Wisp answer, before the load starts. */
  check(body: unknown): string | null;
}

interface Measure {
  rps: number;
  p99Ms: number;
  /** CPU time (user + system, all threads) the server spent per answered request. */
  cpuUsPerRequest: number;
}

interface Summary extends Measure {
  rounds: Measure[];
}

interface Row {
  endpoint: string;
  database: string;
  wisp: Summary;
  bare: Summary;
  ratio: number;
  target: number;
  pass: boolean;
}

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new BenchError(`--${name} must be a whole number >= 1`);
  return Number(raw);
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      duration: { type: "string" },
      rounds: { type: "string" },
      connections: { type: "string" },
      warmup: { type: "string" },
      postgres: { type: "string" },
      "cpu-prof": { type: "string" },
      only: { type: "string" },
    },
    strict: true,
  });
  const postgresUrl = values.postgres || process.env.BENCH_DATABASE_URL || undefined;
  if (postgresUrl && !/^postgres(ql)?:\/\//.test(postgresUrl)) {
    throw new BenchError("--postgres / BENCH_DATABASE_URL must start with postgres://");
  }
  const only = values.only;
  if (only !== undefined && only !== "id" && only !== "list")
    throw new BenchError("--only must be id or list");
  return {
    duration: positiveInteger("duration", values.duration, 5),
    rounds: positiveInteger("rounds", values.rounds, 3),
    connections: positiveInteger("connections", values.connections, 50),
    warmup: positiveInteger("warmup", values.warmup, 2),
    postgresUrl,
    cpuProfDir: values["cpu-prof"] ? path.resolve(values["cpu-prof"]) : undefined,
    only,
  };
}

installExitHandlers();

// --- seeding -----------------------------------------------------------------------------------

/** Migrates, creates the key and the users, and closes the database again before Wisp opens it. */
async function seed(target: Target, dataDir: string): Promise<Seeded> {
  const database = openDatabase({ dataDir, databaseUrl: target.url });
  try {
    await migrate(database);
    const core = createCore(database, { publicUrl: "http://localhost" });
    // PostgreSQL may be shared: use an account of our own there and remove it afterwards.
    const account =
      target.database === "postgres"
        ? await core.accounts.create(`bench-${Date.now().toString(36)}-${process.pid}`)
        : await core.accounts.resolve(undefined);
    const { key } = await core.keys.create(account, { name: "bench", rateLimit: MAX_KEY_RATE_LIMIT });
    const rows = Array.from({ length: SEEDED_USERS }, (_, i) => ({
      account_id: account.id,
      ...benchUser(i + 1),
    }));
    await database.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += 200) {
        await trx
          .insertInto("users")
          .values(rows.slice(i, i + 200))
          .execute();
      }
    });
    const userIds = (
      await database.db
        .selectFrom("users")
        .select("id")
        .where("account_id", "=", account.id)
        .orderBy("id")
        .execute()
    ).map((r) => r.id);
    return {
      key,
      userIds,
      async cleanup() {
        if (target.database !== "postgres") return;
        const again = openDatabase({ dataDir, databaseUrl: target.url });
        try {
          await again.db.deleteFrom("users").where("account_id", "=", account.id).execute();
          await again.db.deleteFrom("api_keys").where("account_id", "=", account.id).execute();
          await again.db.deleteFrom("accounts").where("id", "=", account.id).execute();
        } finally {
          await again.close();
        }
      },
    };
  } finally {
    await database.close();
  }
}

// --- measuring ---------------------------------------------------------------------------------

const endpoints: Endpoint[] = [
  {
    id: "id",
    name: "GET /api/users/{id}",
    requests(ids) {
      const step = Math.max(1, Math.floor(ids.length / ID_SPREAD));
      const picked = ids.filter((_, i) => i % step === 0).slice(0, ID_SPREAD);
      return picked.map((id) => ({ path: `/api/users/${id}` }));
    },
    check(body) {
      const user = body as { id?: unknown; username?: unknown };
      return typeof user.id === "number" && typeof user.username === "string" ? null : "not a user object";
    },
  },
  {
    id: "list",
    name: `GET /api/users?limit=${LIST_LIMIT}`,
    requests: () => [{ path: `/api/users?limit=${LIST_LIMIT}` }],
    check(body) {
      const page = body as { data?: unknown[]; total?: unknown };
      if (!Array.isArray(page.data) || page.data.length !== LIST_LIMIT)
        return `data is not ${LIST_LIMIT} users`;
      return page.total === SEEDED_USERS ? null : `total is ${String(page.total)}, not ${SEEDED_USERS}`;
    },
  },
];

function statusSummary(result: Result): string {
  return Object.entries(result.statusCodeStats)
    .map(([code, { count }]) => `${code}: ${count}`)
    .join(", ");
}

async function load(
  server: HttpChild,
  requests: { path: string }[],
  headers: Record<string, string>,
  settings: Settings,
  duration: number,
): Promise<Measure> {
  const cpuBefore = cpuMicroseconds(server);
  const result = await autocannon({
    url: server.url,
    connections: settings.connections,
    pipelining: 1,
    duration,
    headers,
    requests: requests.map((r) => ({ method: "GET", path: r.path })),
  });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result["2xx"] === 0) {
    throw new BenchError(
      `${server.name} ${requests[0]?.path ?? ""}: ${result.non2xx} non-2xx, ${result.errors} errors, ` +
        `${result.timeouts} timeouts out of ${result.requests.sent} requests (status codes ${statusSummary(result)}); ` +
        "a benchmark of failures measures nothing",
    );
  }
  const cpuUsPerRequest = (cpuMicroseconds(server) - cpuBefore) / result["2xx"];
  return { rps: result.requests.average, p99Ms: result.latency.p99, cpuUsPerRequest };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function summarize(rounds: Measure[]): Summary {
  return {
    rps: median(rounds.map((r) => r.rps)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    cpuUsPerRequest: median(rounds.map((r) => r.cpuUsPerRequest)),
    rounds,
  };
}

async function firstAnswer(
  server: HttpChild,
  path: string,
  headers: Record<string, string>,
): Promise<unknown> {
  const response = await fetch(server.url + path, { headers });
  const text = await response.text();
  if (response.status !== 200) {
    throw new BenchError(`${server.name} answered ${path} with ${response.status}: ${text.slice(0, 300)}`);
  }
  return JSON.parse(text);
}

async function benchTarget(target: Target, bare: HttpChild, settings: Settings): Promise<Row[]> {
  const dataDir = makeTempDir("users");
  console.log(
    `[${target.database}] seeding ${SEEDED_USERS} users and a key (rate limit ${MAX_KEY_RATE_LIMIT}/min)`,
  );
  const seeded = await seed(target, dataDir);
  const env: NodeJS.ProcessEnv = {
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    RADIUS_AUTH_PORT: "0",
    RADIUS_ACCT_PORT: "0",
  };
  if (target.url) env.DATABASE_URL = target.url;
  const flags = settings.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${settings.cpuProfDir}`] : [];
  const wisp = await startHttpChild(`wisp (${target.database})`, "src/main.ts", env, flags);
  const auth = { authorization: `Bearer ${seeded.key}` };
  const rows: Row[] = [];
  try {
    for (const endpoint of endpoints) {
      if (settings.only && endpoint.id !== settings.only) continue;
      const requests = endpoint.requests(seeded.userIds);
      const firstPath = requests[0]!.path;
      const problem = endpoint.check(await firstAnswer(wisp, firstPath, auth));
      if (problem) throw new BenchError(`${wisp.name} ${firstPath}: ${problem}`);
      const bareProblem = endpoint.check(await firstAnswer(bare, firstPath, {}));
      if (bareProblem) throw new BenchError(`${bare.name} ${firstPath}: ${bareProblem}`);

      console.log(`[${target.database}] ${endpoint.name}: warm-up ${settings.warmup} s each`);
      await load(bare, requests, {}, settings, settings.warmup);
      await load(wisp, requests, auth, settings, settings.warmup);
      const bareRounds: Measure[] = [];
      const wispRounds: Measure[] = [];
      for (let round = 1; round <= settings.rounds; round++) {
        const b = await load(bare, requests, {}, settings, settings.duration);
        bareRounds.push(b);
        const w = await load(wisp, requests, auth, settings, settings.duration);
        wispRounds.push(w);
        console.log(
          `[${target.database}] ${endpoint.name}: round ${round}/${settings.rounds} ` +
            `bare ${b.rps.toFixed(0)} rps p99 ${b.p99Ms} ms ${b.cpuUsPerRequest.toFixed(1)} µs CPU/req, ` +
            `wisp ${w.rps.toFixed(0)} rps p99 ${w.p99Ms} ms ${w.cpuUsPerRequest.toFixed(1)} µs CPU/req`,
        );
      }
      const wispSummary = summarize(wispRounds);
      const bareSummary = summarize(bareRounds);
      const ratio = wispSummary.rps / bareSummary.rps;
      rows.push({
        endpoint: endpoint.name,
        database: target.database,
        wisp: wispSummary,
        bare: bareSummary,
        ratio,
        target: TARGET_RATIO,
        pass: ratio >= TARGET_RATIO,
      });
    }
  } finally {
    // autocannon hangs up with requests still queued in Wisp (PostgreSQL pool); let them finish first.
    await new Promise((r) => setTimeout(r, 1_000));
    await stopChild(wisp.child);
    await seeded.cleanup();
    removeTempDir(dataDir);
  }
  return rows;
}

// --- output ------------------------------------------------------------------------------------

function machine() {
  const cpus = os.cpus();
  return { node: process.version, cpu: cpus[0]?.model.trim() ?? "unknown", cores: cpus.length };
}

function printTable(rows: Row[], withDatabase: boolean): void {
  const header = [
    "endpoint",
    "Wisp rps",
    "Wisp p99 ms",
    "Wisp µs CPU/req",
    "bare rps",
    "bare p99 ms",
    "bare µs CPU/req",
    "ratio",
    "target",
  ];
  const lines = rows.map((r) => [
    withDatabase ? `${r.endpoint} [${r.database}]` : r.endpoint,
    r.wisp.rps.toFixed(0),
    String(r.wisp.p99Ms),
    r.wisp.cpuUsPerRequest.toFixed(1),
    r.bare.rps.toFixed(0),
    String(r.bare.p99Ms),
    r.bare.cpuUsPerRequest.toFixed(1),
    `${r.ratio.toFixed(2)}x`,
    `>= ${r.target}x ${r.pass ? "PASS" : "BELOW"}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ");
  console.log();
  console.log(format(header));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const line of lines) console.log(format(line));
}

async function main(): Promise<void> {
  const settings = readSettings();
  const targets: Target[] = [{ database: "sqlite", url: undefined }];
  if (settings.postgresUrl) targets.push({ database: "postgres", url: settings.postgresUrl });
  if (settings.cpuProfDir) fs.mkdirSync(settings.cpuProfDir, { recursive: true });

  const bare = await startHttpChild("bare fastify", "bench/bare-server.ts", { LOG_LEVEL: "warn" });
  const rows: Row[] = [];
  try {
    for (const target of targets) rows.push(...(await benchTarget(target, bare, settings)));
  } finally {
    await stopChild(bare.child);
  }

  const info = machine();
  printTable(rows, targets.length > 1);
  console.log(
    `\nnode ${info.node} | CPU ${info.cpu} | ${info.cores} cores | ${settings.connections} connections, ` +
      `pipelining 1, ${settings.rounds} rounds x ${settings.duration} s (median) after ${settings.warmup} s warm-up`,
  );

  const report = {
    date: new Date().toISOString(),
    ...info,
    settings: {
      duration: settings.duration,
      rounds: settings.rounds,
      connections: settings.connections,
      pipelining: 1,
      warmup: settings.warmup,
      seededUsers: SEEDED_USERS,
    },
    results: rows,
  };
  writeResults("users", report);
}

runBench(main);

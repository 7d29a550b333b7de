// What metrics cost: two Wisp servers on copies of one seeded database, one with METRICS_TOKEN
// (every HTTP request, RADIUS packet and database statement counted) and one without (nothing
// counted), measured alternately in the same run. RADIUS: PAP Access-Requests/s with radclient
// (1,000 users, 10 % wrong passwords, 1 % unknown users; bench/radius-load.ts) and the server's
// CPU per request. HTTP: GET /api/users/{id} with autocannon, req/s and CPU per request.
// Usage: node --import tsx bench/metrics.ts [--rounds 3] [--packets 20000] [--seconds 5]
import fs from "node:fs";
import path from "node:path";
import autocannon from "autocannon";
import { createCore } from "../src/core/index.ts";
import { MAX_KEY_RATE_LIMIT } from "../src/core/keys/service.ts";
import { openDatabase } from "../src/db/database.ts";
import { authFiles, runRadclient, seed, USERS } from "./radius-load.ts";
import {
  BenchError,
  installExitHandlers,
  makeTempDir,
  processTicks,
  type RadiusTarget,
  runBench,
  startWisp,
  TICKS_PER_SECOND,
  writeResults,
} from "./radius-servers.ts";

const TOKEN = "bench-metrics-token-0123456789";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!(value > 0)) throw new BenchError(`--${name} must be a positive number`);
  return value;
}

interface Round {
  rps: number;
  cpuUsPerRequest: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const ticks = (target: RadiusTarget) => processTicks(target.pid) ?? 0;
const cpuUs = (tickCount: number) => (tickCount / TICKS_PER_SECOND) * 1e6;

async function radiusRound(
  target: RadiusTarget,
  file: string,
  filter: string,
  packets: number,
): Promise<Round> {
  const before = ticks(target);
  const run = await runRadclient({
    port: target.authPort,
    kind: "auth",
    file,
    filter,
    repeat: 1,
    parallel: 64,
    expected: packets,
    timeoutSeconds: 5,
  });
  if (run.lost > 0 || run.wrongVerdicts > 0) {
    throw new BenchError(`${target.name}: ${run.lost} lost, ${run.wrongVerdicts} wrong verdicts`);
  }
  return { rps: packets / run.seconds, cpuUsPerRequest: cpuUs(ticks(target) - before) / packets };
}

async function httpRound(target: RadiusTarget, key: string, seconds: number): Promise<Round> {
  const before = ticks(target);
  const result = await autocannon({
    url: `http://127.0.0.1:${target.httpPort}`,
    connections: 16,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
    requests: [{ method: "GET", path: "/api/users/1" }],
  });
  if (result.non2xx > 0 || result.errors > 0 || result["2xx"] === 0) {
    throw new BenchError(`${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return { rps: result.requests.average, cpuUsPerRequest: cpuUs(ticks(target) - before) / result["2xx"] };
}

async function main(): Promise<void> {
  installExitHandlers();
  const rounds = option("rounds", 3);
  const packets = option("packets", 20_000);
  const seconds = option("seconds", 5);
  const work = makeTempDir(process.env.TMPDIR ?? "/tmp", "metrics");
  const seeded = path.join(work, "seeded");
  console.log(`seeding ${USERS} users, one network and an API key`);
  await seed(seeded);
  const database = openDatabase({ dataDir: seeded });
  let key: string;
  try {
    const core = createCore(database, { publicUrl: "http://localhost" });
    const account = await core.accounts.resolve(undefined);
    key = (await core.keys.create(account, { name: "bench", rateLimit: MAX_KEY_RATE_LIMIT })).key;
  } finally {
    await database.close();
  }
  fs.cpSync(seeded, path.join(work, "off"), { recursive: true });
  fs.cpSync(seeded, path.join(work, "on"), { recursive: true });
  const files = authFiles(USERS, packets);
  const requests = path.join(work, "auth.txt");
  const filter = path.join(work, "auth-filter.txt");
  fs.writeFileSync(requests, files.requests);
  fs.writeFileSync(filter, files.filter(true));

  const off = await startWisp(path.join(work, "off"), undefined);
  const on = await startWisp(path.join(work, "on"), undefined, { env: { METRICS_TOKEN: TOKEN } });
  const targets = [
    { label: "metrics off", target: off },
    { label: "metrics on", target: on },
  ];
  const results = new Map(targets.map((t) => [t.label, { radius: [] as Round[], http: [] as Round[] }]));
  try {
    // Warm-up: JIT and caches, then alternate so the machine's load falls on both alike.
    for (const { target } of targets) {
      await radiusRound(target, requests, filter, packets);
      await httpRound(target, key, 1);
    }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const { label, target } of order) {
        const radius = await radiusRound(target, requests, filter, packets);
        const http = await httpRound(target, key, seconds);
        results.get(label)!.radius.push(radius);
        results.get(label)!.http.push(http);
        console.log(
          `round ${round + 1} ${label}: RADIUS ${radius.rps.toFixed(0)}/s, ${radius.cpuUsPerRequest.toFixed(1)} µs CPU; ` +
            `HTTP ${http.rps.toFixed(0)}/s, ${http.cpuUsPerRequest.toFixed(1)} µs CPU`,
        );
      }
    }
    // The counted server saw every packet: its counters must add up (else the figures mean nothing).
    const scraped = await (
      await fetch(`http://127.0.0.1:${on.httpPort}/metrics`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).text();
    const counted = scraped
      .split("\n")
      .filter((l) => l.startsWith('wisp_radius_requests_total{type="Access-Request"'))
      .reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
    const sent = packets * (rounds + 1);
    if (counted !== sent)
      throw new BenchError(`metrics counted ${counted} Access-Requests, ${sent} were sent`);
    console.log(`metrics on: /metrics counted all ${counted} Access-Requests`);
  } finally {
    await off.stop();
    await on.stop();
  }

  const summary = (label: string, kind: "radius" | "http") => {
    const list = results.get(label)![kind];
    return {
      rps: median(list.map((r) => r.rps)),
      cpuUsPerRequest: median(list.map((r) => r.cpuUsPerRequest)),
    };
  };
  const report: Record<string, unknown> = { rounds, packets, seconds, date: new Date().toISOString() };
  for (const kind of ["radius", "http"] as const) {
    const base = summary("metrics off", kind);
    const with_ = summary("metrics on", kind);
    report[kind] = {
      off: base,
      on: with_,
      rpsRatio: with_.rps / base.rps,
      cpuRatio: with_.cpuUsPerRequest / base.cpuUsPerRequest,
    };
    console.log(
      `${kind === "radius" ? "RADIUS PAP" : "HTTP GET /api/users/{id}"} (medians of ${rounds}): metrics on ` +
        `${with_.rps.toFixed(0)}/s, ${with_.cpuUsPerRequest.toFixed(1)} µs CPU per request; baseline (metrics off, same run) ` +
        `${base.rps.toFixed(0)}/s, ${base.cpuUsPerRequest.toFixed(1)} µs; ratio ${(with_.rps / base.rps).toFixed(3)}x req/s, ` +
        `${(with_.cpuUsPerRequest / base.cpuUsPerRequest).toFixed(3)}x CPU`,
    );
  }
  writeResults("metrics", report);
}

runBench(main);

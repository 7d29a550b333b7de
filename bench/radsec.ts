// RadSec (RADIUS over TLS) throughput and handshake cost, in one run:
// - PAP Access-Requests/s to Wisp over UDP, over RadSec through 1 TLS connection and through 16,
//   and to FreeRADIUS 3.2's RadSec listener (`listen { proto = tcp; tls { } }`, rlm_sql on the
//   same SQLite database, no post-auth logging: bench/radius.ts's baseline) through 1 and 16.
//   The same pipelined client drives every target (bench/radsec-clients.ts), --window requests in
//   flight in total, split over the connections; every answer is checked (Accept with the user's
//   own Session-Timeout and the group's Idle-Timeout, or Reject for wrong passwords and unknown
//   users): 0 wrong, 0 lost is required. FreeRADIUS 3.2.1's TLS listener stops answering a
//   connection with 3 or more requests in flight, so it is compared at 2 per connection (Wisp too).
// - TLS handshakes/s, full and resumed (TLS 1.3 ticket), mutual TLS with the network's certificate,
//   against Wisp's RadSec listener and against `openssl s_server` with the same certificate, key,
//   client CA and TLS version; the server's CPU per handshake from /proc.
//
//   node --import tsx bench/radsec.ts [--requests 20000] [--warmup 4000] [--window 128]
//     [--rounds 2] [--handshake-seconds 5] [--handshake-concurrency 8] [--tls 1.3|1.2] [--tsx]
//
// Wisp runs compiled (dist/, built first) unless --tsx. Its handshake limits are lifted for the
// run (RADSEC_HANDSHAKES_PER_SECOND*): the bench measures the TLS cost, not the flood guard.
// The machine is shared: each run prints the cores other processes used meanwhile.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { freeradiusUnavailable } from "../test/support/freeradius-lab.ts";
import { freePort } from "../test/support/processes.ts";
import { authPacket, GROUP_REPLY, SECRET, seed, USERS } from "./radius-load.ts";
import {
  BenchError,
  freeradiusVersion,
  installExitHandlers,
  machineTicks,
  makeTempDir,
  processTicks,
  runBench,
  startFreeRadius,
  startWisp,
  TICKS_PER_SECOND,
  writeResults,
} from "./radius-servers.ts";
import { handshakeLoop, RadsecClient, sessionOf, type TlsPeer, UdpClient } from "./radsec-clients.ts";
import { freeradiusListener, type Material, prepare, startOpensslServer } from "./radsec-servers.ts";

const TARGET_UDP_RATIO = 0.8;
const TARGET_FREERADIUS_RATIO = 1.0;

interface Settings {
  requests: number;
  warmup: number;
  window: number;
  rounds: number;
  handshakeSeconds: number;
  handshakeConcurrency: number;
  tls: "TLSv1.3" | "TLSv1.2";
  tsx: boolean;
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      requests: { type: "string" },
      warmup: { type: "string" },
      window: { type: "string" },
      rounds: { type: "string" },
      "handshake-seconds": { type: "string" },
      "handshake-concurrency": { type: "string" },
      tls: { type: "string" },
      tsx: { type: "boolean" },
    },
    strict: true,
  });
  const whole = (name: string, raw: string | undefined, fallback: number, max = 10_000_000) => {
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max)
      throw new BenchError(`--${name} must be a whole number from 1 to ${max}`);
    return Number(raw);
  };
  if (values.tls !== undefined && !["1.2", "1.3"].includes(values.tls))
    throw new BenchError("--tls must be 1.2 or 1.3");
  return {
    requests: whole("requests", values.requests, 20_000),
    warmup: whole("warmup", values.warmup, 4000),
    // 16 connections x 16 in flight; one connection carries at most 256 (one per Identifier).
    window: whole("window", values.window, 128, 256),
    rounds: whole("rounds", values.rounds, 2, 20),
    handshakeSeconds: whole("handshake-seconds", values["handshake-seconds"], 5, 600),
    handshakeConcurrency: whole("handshake-concurrency", values["handshake-concurrency"], 8, 64),
    tls: values.tls === "1.2" ? "TLSv1.2" : "TLSv1.3",
    tsx: values.tsx ?? false,
  };
}

interface LoadRun {
  target: string;
  round: number;
  requests: number;
  seconds: number;
  perSecond: number;
  serverCpuMsPer1000: number;
  otherCores: number;
  wrong: number;
  lost: number;
}

type Client = UdpClient | RadsecClient;

/** Sends `requests` Access-Requests with `window` in flight over the clients; checks every answer. */
async function drive(clients: Client[], requests: number, window: number, offset: number, cap = 256) {
  let next = 0;
  let wrong = 0;
  let lost = 0;
  const perClient = Math.min(cap, Math.max(1, Math.floor(window / clients.length)));
  await Promise.all(
    clients.flatMap((client) =>
      Array.from({ length: perClient }, async () => {
        while (next < requests) {
          const packet = authPacket(offset + next++, USERS);
          const answer = await client.request(packet.attributes);
          if (!answer) lost++;
          else if (!answerIsRight(packet, answer)) wrong++;
        }
      }),
    ),
  );
  return { wrong, lost };
}

function answerIsRight(
  packet: ReturnType<typeof authPacket>,
  answer: NonNullable<Awaited<ReturnType<Client["request"]>>>,
): boolean {
  const value = (name: string) => answer.attributes.find((a) => a.name === name)?.value;
  if (!packet.accept) return answer.type === "Access-Reject";
  if (answer.type !== "Access-Accept") return false;
  if (value("Session-Timeout") !== String(packet.user.sessionTimeout)) return false;
  return packet.user.inGroup ? value(GROUP_REPLY.attribute) === GROUP_REPLY.value : true;
}

interface LoadTarget {
  id: string;
  pid: number;
  /** Requests in flight per connection at most (FreeRADIUS 3.2.1 stalls with 3 or more). */
  perConnection?: number;
  connect(): Promise<Client[]>;
}

let sent = 0;

async function measureLoad(target: LoadTarget, round: number, requests: number, window: number) {
  const clients = await target.connect().catch((error: Error) => {
    throw new BenchError(`${target.id}: could not connect: ${error.message}`);
  });
  try {
    const [cpu0, machine0, self0] = [processTicks(target.pid) ?? 0, machineTicks(), process.cpuUsage()];
    const started = performance.now();
    const { wrong, lost } = await drive(clients, requests, window, sent, target.perConnection);
    sent += requests;
    const seconds = (performance.now() - started) / 1000;
    const serverTicks = (processTicks(target.pid) ?? 0) - cpu0;
    const machine = machineTicks();
    const self = process.cpuUsage(self0);
    const selfTicks = ((self.user + self.system) / 1e6) * TICKS_PER_SECOND;
    const other = machine.busy - machine0.busy - serverTicks - selfTicks;
    const run: LoadRun = {
      target: target.id,
      round,
      requests,
      seconds: Number(seconds.toFixed(2)),
      perSecond: Math.round(requests / seconds),
      serverCpuMsPer1000: Number((((serverTicks / TICKS_PER_SECOND) * 1e6) / requests).toFixed(1)),
      otherCores: Number(Math.max(0, other / TICKS_PER_SECOND / seconds).toFixed(2)),
      wrong,
      lost,
    };
    return run;
  } finally {
    for (const client of clients) client.close();
  }
}

function loadTargets(
  wisp: { pid: number; authPort: number; radsecPort: number },
  freeradius: { pid: number; radsecPort: number },
  m: Material,
  tls: Settings["tls"],
): LoadTarget[] {
  const read = (file: string) => fs.readFileSync(file, "utf8");
  const peer = (port: number): TlsPeer => ({
    host: "127.0.0.1",
    port,
    cert: read(m.nas.cert),
    key: read(m.nas.key),
    ca: read(m.serverCa),
    maxVersion: tls,
  });
  const radsec = (port: number, n: number) => () =>
    Promise.all(Array.from({ length: n }, () => RadsecClient.connect(peer(port))));
  return [
    {
      id: "wisp-udp",
      pid: wisp.pid,
      connect: async () => [await UdpClient.connect("127.0.0.1", wisp.authPort, SECRET)],
    },
    { id: "wisp-radsec-1", pid: wisp.pid, connect: radsec(wisp.radsecPort, 1) },
    { id: "wisp-radsec-16", pid: wisp.pid, connect: radsec(wisp.radsecPort, 16) },
    // FreeRADIUS 3.2.1's TLS listener stops answering a connection that has 3 or more requests in
    // flight (seen here: 2 work, 3 lose every answer): 2 per connection, and Wisp likewise to compare.
    { id: "wisp-radsec-1x2", pid: wisp.pid, connect: radsec(wisp.radsecPort, 1), perConnection: 2 },
    { id: "wisp-radsec-16x2", pid: wisp.pid, connect: radsec(wisp.radsecPort, 16), perConnection: 2 },
    {
      id: "freeradius-radsec-1x2",
      pid: freeradius.pid,
      connect: radsec(freeradius.radsecPort, 1),
      perConnection: 2,
    },
    {
      id: "freeradius-radsec-16x2",
      pid: freeradius.pid,
      connect: radsec(freeradius.radsecPort, 16),
      perConnection: 2,
    },
  ];
}

interface HandshakeResult {
  server: string;
  kind: "full" | "resumed";
  perSecond: number;
  handshakes: number;
  resumed: number;
  failed: number;
  serverCpuMsPerHandshake: number;
  protocol: string | undefined;
}

async function measureHandshakes(
  server: { id: string; pid: number; peer: TlsPeer },
  kind: "full" | "resumed",
  settings: Settings,
): Promise<HandshakeResult> {
  const session = kind === "resumed" ? await sessionOf(server.peer) : undefined;
  const cpu0 = processTicks(server.pid) ?? 0;
  const run = await handshakeLoop(
    server.peer,
    settings.handshakeSeconds,
    settings.handshakeConcurrency,
    session,
  );
  const cpu = (processTicks(server.pid) ?? 0) - cpu0;
  return {
    server: server.id,
    kind,
    perSecond: run.perSecond,
    handshakes: run.handshakes,
    resumed: run.resumed,
    failed: run.failed,
    serverCpuMsPerHandshake: Number(
      ((cpu / TICKS_PER_SECOND / Math.max(1, run.handshakes)) * 1000).toFixed(2),
    ),
    protocol: run.protocol,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

function printLoad(runs: LoadRun[]): Record<string, number> {
  const ids = [...new Set(runs.map((r) => r.target))];
  const rates: Record<string, number> = {};
  console.log("\ntarget                 Access-Requests/s (median)  server CPU ms/1000  wrong  lost");
  for (const id of ids) {
    const of = runs.filter((r) => r.target === id);
    rates[id] = median(of.map((r) => r.perSecond));
    const cpu = median(of.map((r) => r.serverCpuMsPer1000));
    const wrong = of.reduce((s, r) => s + r.wrong, 0);
    const lost = of.reduce((s, r) => s + r.lost, 0);
    console.log(
      `${id.padEnd(22)} ${String(rates[id]).padStart(27)} ${String(cpu).padStart(19)} ${String(wrong).padStart(6)} ${String(lost).padStart(5)}`,
    );
  }
  const ratio = (a: string, b: string) => Number(((rates[a] ?? 0) / (rates[b] ?? 1)).toFixed(2));
  for (const n of ["1", "16"]) {
    const udp = ratio(`wisp-radsec-${n}`, "wisp-udp");
    const fr = ratio(`wisp-radsec-${n}x2`, `freeradius-radsec-${n}x2`);
    console.log(
      `Wisp RadSec through ${n.padStart(2)}: ${udp}x Wisp UDP (target >= ${TARGET_UDP_RATIO}); ` +
        `2 in flight per connection: ${fr}x FreeRADIUS RadSec (target >= ${TARGET_FREERADIUS_RATIO})`,
    );
  }
  return rates;
}

async function main(): Promise<void> {
  const settings = readSettings();
  const missing = freeradiusUnavailable();
  if (missing) throw new BenchError(missing);
  installExitHandlers();
  const dir = makeTempDir(os.tmpdir(), "radsec");
  const dataDir = path.join(dir, "data");
  fs.mkdirSync(dataDir);
  console.log(`seeding ${USERS} users and a network in ${dataDir}`);
  await seed(dataDir);
  const material = await prepare(dataDir, dir);
  if (!settings.tsx) execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" });
  const radsecPort = await freePort();
  const wisp = await startWisp(dataDir, undefined, {
    script: settings.tsx ? "src/main.ts" : "dist/main.js",
    env: {
      LOG_LEVEL: "error",
      RADSEC_PORT: String(radsecPort),
      RADSEC_HOST: "127.0.0.1",
      RADSEC_CERT_FILE: material.serverCert,
      RADSEC_KEY_FILE: material.serverKey,
      RADSEC_HANDSHAKES_PER_SECOND: "1000000",
      RADSEC_HANDSHAKES_PER_SECOND_PER_ADDRESS: "1000000",
      RADSEC_MAX_CONNECTIONS_PER_ADDRESS: "1000",
    },
  });
  const frRadsecPort = await freePort();
  const freeradius = await startFreeRadius({
    parentDir: dir,
    databaseFile: path.join(dataDir, "wisp.db"),
    postAuthLogging: false,
    sites: { radsec: freeradiusListener(frRadsecPort, material, settings.tls) },
  });
  const openssl = await startOpensslServer(material, settings.tls);
  const targets = loadTargets(
    { pid: wisp.pid, authPort: wisp.authPort, radsecPort },
    { pid: freeradius.pid, radsecPort: frRadsecPort },
    material,
    settings.tls,
  );
  const loadRuns: LoadRun[] = [];
  const handshakeRuns: HandshakeResult[] = [];
  try {
    // Warm-up: SQLite pages and V8's JIT on Wisp's hot paths; FreeRADIUS's SQL connections.
    for (const target of targets) await measureLoad(target, 0, settings.warmup, settings.window);
    for (let round = 1; round <= settings.rounds; round++) {
      const order = round % 2 ? targets : [...targets].reverse();
      for (const target of order) {
        const run = await measureLoad(target, round, settings.requests, settings.window);
        loadRuns.push(run);
        console.log(
          `round ${round} ${run.target.padEnd(21)} ${String(run.perSecond).padStart(6)} req/s, server ${run.serverCpuMsPer1000} ms CPU/1000, ` +
            `other processes ${run.otherCores} cores, ${run.wrong} wrong, ${run.lost} lost`,
        );
      }
    }
    handshakeRuns.push(...(await handshakes(wisp.pid, radsecPort, openssl, material, settings)));
  } finally {
    await openssl.stop();
    await freeradius.stop();
    await wisp.stop();
  }
  const rates = printLoad(loadRuns);
  printHandshakes(handshakeRuns);
  const bad = loadRuns.reduce((s, r) => s + r.wrong + r.lost, 0);
  writeResults("radsec", {
    date: new Date().toISOString(),
    freeradius: freeradiusVersion(),
    openssl: execFileSync("openssl", ["version"], { encoding: "utf8" }).trim(),
    settings,
    rates,
    loadRuns,
    handshakeRuns,
  });
  if (bad > 0) throw new BenchError(`${bad} answers were wrong or lost`);
}

async function handshakes(
  wispPid: number,
  wispPort: number,
  openssl: { port: number; pid: number },
  m: Material,
  settings: Settings,
): Promise<HandshakeResult[]> {
  const read = (file: string) => fs.readFileSync(file, "utf8");
  const peer = (port: number): TlsPeer => ({
    host: "127.0.0.1",
    port,
    cert: read(m.nas.cert),
    key: read(m.nas.key),
    ca: read(m.serverCa),
    minVersion: settings.tls,
    maxVersion: settings.tls,
  });
  const servers = [
    { id: "wisp", pid: wispPid, peer: peer(wispPort) },
    { id: "openssl-s_server", pid: openssl.pid, peer: peer(openssl.port) },
  ];
  const results: HandshakeResult[] = [];
  for (const kind of ["full", "resumed"] as const) {
    for (const server of servers) {
      const result = await measureHandshakes(server, kind, settings);
      results.push(result);
      console.log(
        `${kind.padEnd(7)} handshakes ${server.id.padEnd(16)} ${result.perSecond}/s (${result.protocol}), ` +
          `${result.resumed} of ${result.handshakes} resumed, ${result.failed} failed, server ${result.serverCpuMsPerHandshake} ms CPU each`,
      );
    }
  }
  return results;
}

function printHandshakes(results: HandshakeResult[]): void {
  console.log("\nhandshakes  server            per second  resumed  failed  server CPU ms each");
  for (const r of results) {
    console.log(
      `${r.kind.padEnd(11)} ${r.server.padEnd(17)} ${String(r.perSecond).padStart(10)} ${String(r.resumed).padStart(8)} ${String(r.failed).padStart(7)} ${String(r.serverCpuMsPerHandshake).padStart(19)}`,
    );
  }
  for (const kind of ["full", "resumed"]) {
    const wisp = results.find((r) => r.kind === kind && r.server === "wisp");
    const openssl = results.find((r) => r.kind === kind && r.server === "openssl-s_server");
    if (wisp && openssl)
      console.log(
        `${kind} handshakes: Wisp ${(wisp.perSecond / openssl.perSecond).toFixed(2)}x openssl s_server`,
      );
  }
}

runBench(main);

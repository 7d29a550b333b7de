// Start-up of the compiled build (npm run build: dist/main.js, dist/cli.js) beside the TypeScript
// sources run through tsx (the way Wisp ran before the build, and still runs in development), in
// the same run, alternating, each figure the median of several rounds:
// - time from spawning the server to its first 200 from /healthz (and the CPU it spent by then),
// - resident memory (VmRSS) after a few requests and a few seconds idle, beside a bare Node HTTP
//   server's (the floor: the node binary's pages, V8's empty heap),
// - wall time of one CLI command (`wisp accounts list` on the same database).
// The server starts on a database migrated and started once beforehand (a restart, as an
// operator's: the first start made the EAP CA), on SQLite, with RADIUS on free UDP ports and the
// worker on: everything `npm start` runs.
//
//   npx tsx bench/startup.ts [--rounds 5] [--idle-ms 3000]
import { spawn } from "node:child_process";
import dgram from "node:dgram";
import fs from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import { freePort } from "../test/support/processes.ts";
import {
  BenchError,
  buildDist,
  cleanEnv,
  installExitHandlers,
  makeTempDir,
  ROOT,
  runBench,
  stopChild,
  track,
  writeResults,
} from "./processes.ts";

const TARGETS = { healthzMs: 1000, idleRssMb: 100, cliMs: 400 };
/** Linux's clock ticks per second for /proc/<pid>/stat (USER_HZ: 100 on every usual kernel). */
const TICKS_PER_SECOND = 100;

interface Variant {
  name: string;
  server: string[];
  cli: string[];
}

const VARIANTS: Variant[] = [
  { name: "compiled", server: ["dist/main.js"], cli: ["bin/wisp.mjs"] },
  { name: "tsx", server: ["--import", "tsx", "src/main.ts"], cli: ["--import", "tsx", "src/cli/main.ts"] },
];

/** The baseline of the idle RSS: node:http answering every request, nothing else loaded. */
const BARE_SERVER = [
  "-e",
  'require("node:http").createServer((q, s) => s.end("ok")).listen(Number(process.env.PORT), process.env.HOST)',
];

/** What a monitor and a first visitor ask before the server sits idle. */
const FIRST_REQUESTS = ["/healthz", "/console/login", "/portal/", "/api/users", "/healthz"];

interface ServerRound {
  healthzMs: number;
  cpuMsAtHealthz: number;
  idleRssMb: number;
}

/** A UDP port nobody is bound to at the moment of asking (for the RADIUS ports). */
function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket("udp4");
    socket.on("error", reject);
    socket.bind(0, "127.0.0.1", () => {
      const port = socket.address().port;
      socket.close(() => resolve(port));
    });
  });
}

/** user + system CPU time of a process so far, from /proc/<pid>/stat (fields 14 and 15). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

function rssMb(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!line) throw new BenchError(`no VmRSS for process ${pid}`);
  return Number(line[1]) / 1024;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** A copy of the migrated template, so every round starts on the same database. */
function freshDataDir(template: string): string {
  const dir = makeTempDir("startup-data");
  fs.cpSync(template, dir, { recursive: true });
  return dir;
}

async function serverRound(
  variant: Pick<Variant, "name" | "server">,
  dataDir: string,
  idleMs: number,
): Promise<ServerRound> {
  const [port, authPort, acctPort] = [await freePort(), await freeUdpPort(), await freeUdpPort()];
  const env = {
    ...cleanEnv(),
    DATA_DIR: dataDir,
    HOST: "127.0.0.1",
    PORT: String(port),
    RADIUS_AUTH_PORT: String(authPort),
    RADIUS_ACCT_PORT: String(acctPort),
    LOG_LEVEL: "warn",
  };
  const started = performance.now();
  const child = track(
    spawn(process.execPath, variant.server, { cwd: ROOT, env, stdio: ["ignore", "ignore", "inherit"] }),
  );
  const url = `http://127.0.0.1:${port}/healthz`;
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new BenchError(`${variant.name} server exited (code ${child.exitCode})`);
      const ok = await fetch(url).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) break;
      if (performance.now() - started > 60_000) throw new BenchError(`${variant.name}: no /healthz in 60 s`);
      await sleep(5);
    }
    const healthzMs = performance.now() - started;
    const cpuMsAtHealthz = cpuMs(child.pid!);
    for (const path of FIRST_REQUESTS) await (await fetch(`http://127.0.0.1:${port}${path}`)).arrayBuffer();
    await sleep(idleMs);
    return { healthzMs, cpuMsAtHealthz, idleRssMb: rssMb(child.pid!) };
  } finally {
    await stopChild(child);
  }
}

/** Wall time of `wisp accounts list` (reads, opens the database, prints a table). */
async function cliRound(variant: Variant, dataDir: string): Promise<{ wallMs: number; cpuMs: number }> {
  childCpuMs(); // the children reaped so far (the server just stopped) are not this command's
  const started = performance.now();
  const child = track(
    spawn(process.execPath, [...variant.cli, "accounts", "list"], {
      cwd: ROOT,
      env: { ...cleanEnv(), DATA_DIR: dataDir },
      stdio: ["ignore", "ignore", "inherit"],
    }),
  );
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const wallMs = performance.now() - started;
  if (code !== 0) throw new BenchError(`${variant.name} CLI exited with ${code}`);
  return { wallMs, cpuMs: childCpuMs() };
}

/** CPU of the children waited for so far; read before and after one child to get its share. */
let childCpuSeen = 0;
function childCpuMs(): number {
  // process.resourceUsage() is this process's only; /proc/self/stat fields 16 and 17 are the
  // children's user and system time once they have been waited for (Node reaps them).
  const fields = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  const total = ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
  const mine = total - childCpuSeen;
  childCpuSeen = total;
  return mine;
}

async function main(): Promise<void> {
  installExitHandlers();
  const { values } = parseArgs({
    options: { rounds: { type: "string", default: "5" }, "idle-ms": { type: "string", default: "3000" } },
  });
  const rounds = Number(values.rounds);
  const idleMs = Number(values["idle-ms"]);
  if (!(rounds >= 1) || !(idleMs >= 0))
    throw new BenchError("--rounds must be 1 or more, --idle-ms 0 or more");
  buildDist();
  // One migrated database, copied for every round.
  const template = makeTempDir("startup-template");
  const migrate = await new Promise<number | null>((resolve) =>
    track(
      spawn(process.execPath, ["dist/cli.js", "accounts", "create", "bench"], {
        cwd: ROOT,
        env: { ...cleanEnv(), DATA_DIR: template },
        stdio: "ignore",
      }),
    ).once("exit", resolve),
  );
  if (migrate !== 0) throw new BenchError("could not make the template database");
  // One start of the server on the template itself: a deployment's first start makes its EAP CA
  // (and loads the certificate code to do it); every round then starts as a restart does.
  await serverRound(VARIANTS[0]!, template, 0);
  childCpuMs();

  const server = new Map<string, ServerRound[]>(VARIANTS.map((v) => [v.name, []]));
  const bare: ServerRound[] = [];
  const cli = new Map<string, { wallMs: number; cpuMs: number }[]>(VARIANTS.map((v) => [v.name, []]));
  for (let round = 0; round < rounds; round++) {
    bare.push(await serverRound({ name: "bare", server: BARE_SERVER }, freshDataDir(template), idleMs));
    // Alternate which goes first, so neither always meets the other's leftovers.
    const order = round % 2 ? [...VARIANTS].reverse() : VARIANTS;
    for (const variant of order) {
      const figures = await serverRound(variant, freshDataDir(template), idleMs);
      server.get(variant.name)!.push(figures);
      const command = await cliRound(variant, template);
      cli.get(variant.name)!.push(command);
      console.log(
        `round ${round + 1} ${variant.name.padEnd(8)} /healthz ${figures.healthzMs.toFixed(0)} ms ` +
          `(CPU ${figures.cpuMsAtHealthz.toFixed(0)} ms), idle RSS ${figures.idleRssMb.toFixed(1)} MB, ` +
          `CLI ${command.wallMs.toFixed(0)} ms (CPU ${command.cpuMs.toFixed(0)} ms) | load ${os.loadavg()[0]!.toFixed(2)}`,
      );
    }
  }

  const summary = Object.fromEntries(
    VARIANTS.map(({ name }) => {
      const s = server.get(name)!;
      const c = cli.get(name)!;
      return [
        name,
        {
          healthzMs: median(s.map((r) => r.healthzMs)),
          cpuMsAtHealthz: median(s.map((r) => r.cpuMsAtHealthz)),
          idleRssMb: median(s.map((r) => r.idleRssMb)),
          cliMs: median(c.map((r) => r.wallMs)),
          cliCpuMs: median(c.map((r) => r.cpuMs)),
          rounds: { server: s, cli: c },
        },
      ];
    }),
  );
  const compiled = summary.compiled!;
  const baseline = summary.tsx!;
  const row = (label: string, key: "healthzMs" | "idleRssMb" | "cliMs", unit: string, target: number) => {
    const met = compiled[key] < target ? "met" : "NOT met";
    console.log(
      `${label.padEnd(26)} ${`${compiled[key].toFixed(0)} ${unit}`.padStart(9)}   ${`${baseline[key].toFixed(0)} ${unit}`.padStart(9)}   under ${target} ${unit}: ${met}`,
    );
  };
  const cpus = os.cpus();
  console.log(
    `\nnode ${process.version} | CPU ${cpus[0]?.model.trim()} | ${cpus.length} cores | load ${os.loadavg()[0]?.toFixed(2)} | medians of ${rounds}`,
  );
  console.log(`${"".padEnd(26)} ${"compiled".padStart(9)}   ${"tsx".padStart(9)}`);
  row("first /healthz", "healthzMs", "ms", TARGETS.healthzMs);
  console.log(
    `${"  (CPU spent by then)".padEnd(26)} ${`${compiled.cpuMsAtHealthz.toFixed(0)} ms`.padStart(9)}   ${`${baseline.cpuMsAtHealthz.toFixed(0)} ms`.padStart(9)}`,
  );
  row("idle RSS", "idleRssMb", "MB", TARGETS.idleRssMb);
  const bareRss = median(bare.map((r) => r.idleRssMb));
  console.log(`${"  (bare node:http server)".padEnd(26)} ${`${bareRss.toFixed(0)} MB`.padStart(9)}`);
  row("CLI command (wall)", "cliMs", "ms", TARGETS.cliMs);
  console.log(
    `${"  (CPU)".padEnd(26)} ${`${compiled.cliCpuMs.toFixed(0)} ms`.padStart(9)}   ${`${baseline.cliCpuMs.toFixed(0)} ms`.padStart(9)}`,
  );
  writeResults("startup", {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    loadAverage: os.loadavg()[0],
    settings: { rounds, idleMs },
    targets: TARGETS,
    results: summary,
    bareServer: { idleRssMb: bareRss, rounds: bare },
  });
}

runBench(main);

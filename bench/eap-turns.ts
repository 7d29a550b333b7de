// Wisp's CPU per EAP login against how many conversations share a turn of its event loop (issue 32):
// the compiled server (dist/main.js, as `npm start` runs it), RSA 2048 and TLS 1.2 as bench/eap.ts,
// driven by the tests' supplicant (test/support/eap-supplicant.ts: node's TLS client, EAP-TTLS with
// inner PAP) from this process, one login at a time and eight at a time. One at a time, every
// packet finds the server asleep in epoll_wait and is handled on its own; eight at a time, packets
// arrive while it works and several are handled in one turn. bench/eap.ts's 16 eapol_test
// processes sit between the two: how close to which depends on how fast eapol_test runs on the
// machine (its packets per second).
// The baseline, measured the same way in the same rounds: a bare node UDP echo server, the
// machine's own cost of waking a node process for a packet.
//   node --import tsx bench/eap-turns.ts
//   BENCH_TURNS_LOGINS (300) logins per run; BENCH_TURNS_ROUNDS (2); BENCH_TURNS_WARMUP (1000);
//   BENCH_TURNS_AT_ONCE (1,8) the logins at a time measured; BENCH_CPU_PROF=dir: Wisp's --cpu-prof there
import { spawn } from "node:child_process";
import dgram from "node:dgram";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import type { EapTestServer } from "../test/support/eap-server.ts";
import { Supplicant, TTLS, ttlsPap } from "../test/support/eap-supplicant.ts";
import { makeCertificates } from "./eap-certs.ts";
import { buildDist } from "./processes.ts";
import { median, radiusBenchUser, SECRET, seed } from "./radius-load.ts";
import {
  installExitHandlers,
  makeTempDir,
  processTimes,
  runBench,
  startWisp,
  stopChild,
  TICKS_PER_SECOND,
  track,
  writeResults,
} from "./radius-servers.ts";

const ECHO_PACKETS = 20_000;

function setting(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number above 0`);
  return value;
}

/** User and system CPU ticks of a process (all threads), and its main thread's context switches. */
function usage(pid: number) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const count = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return {
    ...processTimes(pid),
    switches: count("voluntary_ctxt_switches") + count("nonvoluntary_ctxt_switches"),
  };
}

/** Runs `work` `count` times, `parallel` at once. */
async function pool(count: number, parallel: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** The server's CPU (all threads) per unit of what `run` does (`count` units), and the rate. */
async function measure(pid: number, count: number, run: () => Promise<void>) {
  const before = usage(pid);
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  const after = usage(pid);
  const ms = (ticks: number) => Number(((ticks * 1000) / TICKS_PER_SECOND / count).toFixed(3));
  return {
    cpuMs: ms(after.user + after.system - before.user - before.system),
    userMs: ms(after.user - before.user),
    systemMs: ms(after.system - before.system),
    switches: Number(((after.switches - before.switches) / count).toFixed(2)),
    perSecond: Math.round(count / seconds),
  };
}

/** A bare node UDP echo server in a process of its own: its port and pid. */
async function startEcho() {
  const code = `const s = require("node:dgram").createSocket("udp4");
s.on("message", (m, r) => s.send(m, r.port, r.address));
s.bind(0, "127.0.0.1", () => console.log(JSON.stringify({ port: s.address().port, pid: process.pid })));`;
  const child = track(spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] }));
  const line = await new Promise<string>((resolve) =>
    readline.createInterface({ input: child.stdout! }).once("line", resolve),
  );
  return { ...(JSON.parse(line) as { port: number; pid: number }), stop: () => stopChild(child) };
}

/** One request-answer stream to the echo server: each packet waits for the answer to the last. */
async function echoStream(port: number, packets: number): Promise<void> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const payload = Buffer.alloc(200);
  for (let i = 0; i < packets; i++)
    await new Promise((resolve) => {
      socket.once("message", resolve);
      socket.send(payload, port, "127.0.0.1");
    });
  socket.close();
}

async function main(): Promise<void> {
  installExitHandlers();
  const logins = setting("BENCH_TURNS_LOGINS", 300);
  const rounds = setting("BENCH_TURNS_ROUNDS", 2);
  const warmup = setting("BENCH_TURNS_WARMUP", 1000);
  const dir = makeTempDir(os.tmpdir(), "eap-turns");
  const certs = makeCertificates(dir, "rsa");
  const dataDir = path.join(dir, "data");
  fs.mkdirSync(dataDir);
  await seed(dataDir);
  buildDist();
  const atOnce = (process.env.BENCH_TURNS_AT_ONCE ?? "1,8").split(",").map(Number);
  if (atOnce.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error("BENCH_TURNS_AT_ONCE lists whole numbers");
  const wisp = await startWisp(dataDir, process.env.BENCH_CPU_PROF || undefined, {
    script: "dist/main.js",
    env: {
      EAP_CERT_FILE: certs.cert,
      EAP_KEY_FILE: certs.key,
      EAP_CA_FILE: certs.ca,
      EAP_FRAGMENT_SIZE: "1024",
      LOG_LEVEL: "error",
    },
  });
  const echo = await startEcho();
  // What the supplicant reads of a lab: the port, the network's secret, the CA to trust.
  const lab = {
    authPort: wisp.authPort,
    secret: SECRET,
    certs: { caPem: fs.readFileSync(certs.ca, "utf8") },
  };
  const login = async (i: number) => {
    const user = radiusBenchUser(1 + (i % 1000));
    const peer = new Supplicant(lab as unknown as EapTestServer, TTLS);
    try {
      await peer.handshake();
      const answer = await peer.inner(ttlsPap(user.username, user.password));
      if (answer.type !== "Access-Accept") throw new Error(`${user.username}: ${answer.type}`);
    } finally {
      peer.close();
    }
  };
  const runs: Record<string, unknown>[] = [];
  try {
    await pool(warmup, 4, login);
    for (let round = 1; round <= rounds; round++) {
      for (const parallel of round % 2 ? atOnce : [...atOnce].reverse()) {
        const wispRun = await measure(wisp.pid, logins, () => pool(logins, parallel, login));
        const echoRun = await measure(echo.pid, ECHO_PACKETS, () =>
          pool(parallel, parallel, () => echoStream(echo.port, ECHO_PACKETS / parallel)),
        );
        const run = { round, parallel, wisp: wispRun, echoUsPerPacket: echoRun.cpuMs * 1000 };
        runs.push(run);
        console.log(
          `round ${round}, ${parallel} at a time: Wisp ${wispRun.cpuMs} ms CPU/login (user ${wispRun.userMs}, ` +
            `system ${wispRun.systemMs}), ${wispRun.switches} context switches/login, ${wispRun.perSecond} ` +
            `logins/s; node UDP echo ${run.echoUsPerPacket.toFixed(1)} µs CPU/packet`,
        );
      }
    }
  } finally {
    await wisp.stop();
    await echo.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const medians = atOnce.map((parallel) => {
    const of = runs.filter((r) => r.parallel === parallel) as {
      wisp: { cpuMs: number };
      echoUsPerPacket: number;
    }[];
    return {
      parallel,
      wispMsPerLogin: median(of.map((r) => r.wisp.cpuMs)),
      echoUsPerPacket: median(of.map((r) => r.echoUsPerPacket)),
    };
  });
  console.log("\nmedians:");
  for (const m of medians)
    console.log(
      `  ${m.parallel} at a time: Wisp ${m.wispMsPerLogin} ms CPU/login; node UDP echo ${m.echoUsPerPacket.toFixed(1)} µs CPU/packet`,
    );
  const [first, last] = [medians[0]!, medians.at(-1)!];
  if (first !== last)
    console.log(
      `  ${first.parallel} against ${last.parallel} at a time: Wisp ${(first.wispMsPerLogin / last.wispMsPerLogin).toFixed(2)}x, ` +
        `the echo ${(first.echoUsPerPacket / last.echoUsPerPacket).toFixed(2)}x`,
    );
  writeResults("eap-turns", { logins, rounds, warmup, runs, medians });
}

runBench(main);

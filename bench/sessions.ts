// Sessions and their control (issue 15), two figures:
// 1. Accounting packets/s with quotas enforced against the same load without: one Wisp, two sets of
//    users (with a daily data and a daily time quota; without any), sessions of Start, three
//    Interim-Updates and a Stop sent by radclient; rounds alternate, medians reported, nothing may
//    be lost. The quota check runs after each Interim-Update is answered, so Wisp's CPU time per
//    packet is reported beside the rate. Target: at least 0.8x.
// 2. The disconnect round trip (p50, p99) against a Dynamic Authorization Server: the RADIUS door's
//    DasClient alone, and the whole API call (POST /api/sessions/{id}/disconnect: read the session,
//    send, wait for the ACK, record it). The DAS is a small one in this process (hostapd needs root
//    and namespaces; test/sessions/hostapd.test.ts runs the real one).
// Usage: npx tsx bench/sessions.ts [--sessions 500] [--rounds 3]
import fs from "node:fs";
import path from "node:path";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { DasClient } from "../src/radius/das-client.ts";
import { startTestDas } from "../test/support/das.ts";
import { BenchError, makeTempDir, onCleanup, removeTempDir, runBench, writeResults } from "./processes.ts";
import { runRadclient, SECRET } from "./radius-load.ts";
import { processTicks, startWisp, TICKS_PER_SECOND } from "./radius-servers.ts";

const USERS = 500;
const TARGET_RATIO = 0.8;

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

const username = (kind: "plain" | "quota", n: number) => `${kind}${String(n).padStart(4, "0")}`;

async function seed(dataDir: string, dasPort: number): Promise<string> {
  const database = openDatabase({ dataDir });
  try {
    await migrate(database);
    const core = createCore(database, { publicUrl: "http://localhost" });
    const account = await core.accounts.resolve(undefined);
    for (let n = 1; n <= USERS; n++) {
      await core.users.create(account.id, { username: username("plain", n), password: "pw" });
      const user = await core.users.create(account.id, { username: username("quota", n), password: "pw" });
      for (const [attribute, value] of [
        ["Wisp-Max-Daily-Octets", "1000000000000"],
        ["Max-Daily-Session", "86400"],
      ]) {
        await core.attributes.addToUser(account.id, {
          userid: user.id,
          table: "radcheck",
          attribute: attribute!,
          operator: ":=",
          value: value!,
        });
      }
    }
    await core.networks.create(account.id, {
      name: "bench",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      coa_enabled: true,
      coa_port: dasPort,
    });
    return (await core.keys.create(account, { name: "bench", rateLimit: 1_000_000 })).key;
  } finally {
    await database.close();
  }
}

function packet(pairs: [string, string | number][]): string {
  return pairs
    .map(([name, value]) => (typeof value === "number" ? `${name} = ${value}` : `${name} = "${value}"`))
    .join("\n");
}

/** Per session: Start, three Interim-Updates with growing counters, Stop (in that order, by phase). */
function acctFile(kind: "plain" | "quota", tag: string, sessions: number): string {
  const phases: string[][] = [[], [], [], [], []];
  for (let i = 0; i < sessions; i++) {
    const base: [string, string | number][] = [
      ["Acct-Session-Id", `${tag}-${i}`],
      ["User-Name", username(kind, (i % USERS) + 1)],
      ["NAS-IP-Address", "127.0.0.1"],
      ["NAS-Port", i],
      ["Called-Station-Id", "AA-BB-CC-00-00-01:bench"],
      [
        "Calling-Station-Id",
        `02-00-00-${String((i >> 16) & 255).padStart(2, "0")}-${((i >> 8) & 255).toString(16).padStart(2, "0")}-${(i & 255).toString(16).padStart(2, "0")}`,
      ],
    ];
    phases[0]!.push(packet([["Acct-Status-Type", "Start"], ...base]));
    for (let k = 1; k <= 3; k++) {
      phases[k]!.push(
        packet([
          ["Acct-Status-Type", "Interim-Update"],
          ...base,
          ["Acct-Session-Time", 60 * k],
          ["Acct-Input-Octets", 100_000 * k],
          ["Acct-Output-Octets", 1_000_000 * k],
        ]),
      );
    }
    phases[4]!.push(
      packet([
        ["Acct-Status-Type", "Stop"],
        ...base,
        ["Acct-Session-Time", 240],
        ["Acct-Input-Octets", 400_000],
        ["Acct-Output-Octets", 4_000_000],
        ["Acct-Terminate-Cause", "User-Request"],
      ]),
    );
  }
  return `${phases.flat().join("\n\n")}\n`;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

async function main(): Promise<void> {
  const sessions = option("sessions", 500);
  const rounds = option("rounds", 3);
  const dir = makeTempDir("sessions-bench");
  onCleanup(() => removeTempDir(dir));
  const das = await startTestDas(SECRET);
  onCleanup(() => void das.close());
  const dataDir = path.join(dir, "data");
  fs.mkdirSync(dataDir);
  console.log(`seeding ${USERS} users with quotas and ${USERS} without...`);
  const key = await seed(dataDir, das.port);
  const wisp = await startWisp(dataDir, undefined);
  onCleanup(() => void wisp.stop());

  const results: Record<"plain" | "quota", { rate: number; cpuUsPerPacket: number; lost: number }[]> = {
    plain: [],
    quota: [],
  };
  for (let round = 0; round < rounds * 2; round++) {
    const kind = round % 2 === 0 ? "plain" : "quota";
    const file = path.join(dir, `acct-${round}.txt`);
    fs.writeFileSync(file, acctFile(kind, `r${round}`, sessions));
    const expected = sessions * 5;
    const before = processTicks(wisp.pid) ?? 0;
    const run = await runRadclient({
      port: wisp.acctPort,
      kind: "acct",
      file,
      repeat: 1,
      parallel: 64,
      expected,
      timeoutSeconds: 5,
    });
    // The quota checks run after the answers: let them finish before reading the CPU time.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const ticks = (processTicks(wisp.pid) ?? 0) - before;
    const rate = expected / run.seconds;
    const cpuUsPerPacket = ((ticks / TICKS_PER_SECOND) * 1e6) / expected;
    results[kind].push({ rate, cpuUsPerPacket, lost: run.lost });
    console.log(
      `${kind}: ${rate.toFixed(0)} packets/s, ${cpuUsPerPacket.toFixed(0)} µs CPU/packet, lost ${run.lost}`,
    );
  }
  const summary = (kind: "plain" | "quota") => ({
    packetsPerSecond: Math.round(median(results[kind].map((r) => r.rate))),
    cpuUsPerPacket: Math.round(median(results[kind].map((r) => r.cpuUsPerPacket))),
    lost: results[kind].reduce((sum, r) => sum + r.lost, 0),
  });
  const plain = summary("plain");
  const quota = summary("quota");
  const ratio = quota.packetsPerSecond / plain.packetsPerSecond;
  // CPU per packet is steadier than packets/s on a shared machine: the same ratio, from CPU time.
  const cpuRatio = plain.cpuUsPerPacket / quota.cpuUsPerPacket;
  console.log(
    `accounting with quotas: ${quota.packetsPerSecond}/s (${quota.cpuUsPerPacket} µs CPU), without: ` +
      `${plain.packetsPerSecond}/s (${plain.cpuUsPerPacket} µs CPU): ${ratio.toFixed(2)}x (target ${TARGET_RATIO}x), ` +
      `lost ${quota.lost + plain.lost}; by CPU per packet ${cpuRatio.toFixed(2)}x`,
  );

  // Disconnect round trips: the door's client alone, then the whole API call.
  const client = new DasClient({ timeoutMs: 1000, retries: 0 });
  const doorTimes: number[] = [];
  for (let i = 0; i < 500; i++) {
    const started = process.hrtime.bigint();
    const answer = await client.send("disconnect", { host: "127.0.0.1", port: das.port, secret: SECRET }, [
      ["User-Name", "plain0001"],
      ["Acct-Session-Id", `rt-${i}`],
      ["Event-Timestamp", Math.floor(Date.now() / 1000)],
    ]);
    if (answer.result !== "ack") throw new BenchError(`the DAS answered ${answer.result}`);
    doorTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  // Open sessions to disconnect through the API (plain users; no quota disconnects in the way).
  const openFile = path.join(dir, "open.txt");
  fs.writeFileSync(openFile, acctFile("plain", "open", 200).split("\n\n").slice(0, 200).join("\n\n"));
  await runRadclient({
    port: wisp.acctPort,
    kind: "acct",
    file: openFile,
    repeat: 1,
    parallel: 16,
    expected: 200,
    timeoutSeconds: 5,
  });
  const apiBase = `http://127.0.0.1:${wisp.httpPort}`;
  const list = (await (
    await fetch(`${apiBase}/api/sessions?status=active&limit=200`, {
      headers: { authorization: `Bearer ${key}` },
    })
  ).json()) as { data: { id: number }[] };
  const apiTimes: number[] = [];
  for (const { id } of list.data) {
    const started = process.hrtime.bigint();
    const response = await fetch(`${apiBase}/api/sessions/${id}/disconnect`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: "{}",
    });
    const body = (await response.json()) as { disconnect?: { result: string } };
    if (body.disconnect?.result !== "ack") throw new BenchError(`disconnect ${id}: ${JSON.stringify(body)}`);
    apiTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const door = { p50: percentile(doorTimes, 50), p99: percentile(doorTimes, 99), n: doorTimes.length };
  const api = { p50: percentile(apiTimes, 50), p99: percentile(apiTimes, 99), n: apiTimes.length };
  console.log(
    `disconnect round trip: DasClient p50 ${door.p50.toFixed(2)} ms, p99 ${door.p99.toFixed(2)} ms; ` +
      `API call p50 ${api.p50.toFixed(2)} ms, p99 ${api.p99.toFixed(2)} ms (${api.n} sessions)`,
  );
  writeResults("sessions", {
    date: new Date().toISOString(),
    node: process.version,
    sessionsPerRound: sessions,
    packetsPerSession: 5,
    rounds,
    accounting: {
      withQuotas: quota,
      withoutQuotas: plain,
      ratio: Number(ratio.toFixed(3)),
      target: TARGET_RATIO,
    },
    disconnectMs: { dasClient: door, api },
    met: ratio >= TARGET_RATIO && quota.lost + plain.lost === 0,
  });
  if (quota.lost + plain.lost > 0) throw new BenchError("accounting packets were lost");
}

runBench(main);

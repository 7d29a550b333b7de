// MAC authentication (MAB) Access-Requests per second against PAP Access-Requests per second, on
// Wisp's embedded RADIUS server, in the same run (issue 24, point 6; target MAB >= 0.9x PAP, 0
// wrong answers), with 10,000 devices and 1,000 users in one SQLite database.
//
//   node --import tsx bench/mab.ts [--rounds 3] [--repeat 2] [--parallel 100] [--dir <parent>]
//
// PAP: bench/radius-load.ts's file (1,000 users, each with a Session-Timeout reply item, every 4th
// in a group; 10% wrong passwords or unknown users), 10,000 packets. MAB: 10,000 packets, one per
// device, as a CoovaChilli gateway sends them (User-Name and User-Password the MAC as
// AA-BB-CC-DD-EE-FF, Calling-Station-Id the same); every device is in a group with a reply item;
// every 10th packet has a wrong MAB password and every 100th an unknown MAC. Both files come with
// radclient filters stating each answer (verdict and reply items); radclient -r 1 counts what is
// unanswered as lost. Runs alternate PAP, MAB after a warm-up of each; medians are compared.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { authFiles, median, type RadclientRun, runRadclient, seed, wrongOf } from "./radius-load.ts";
import {
  BenchError,
  installExitHandlers,
  makeTempDir,
  runBench,
  startWisp,
  writeResults,
} from "./radius-servers.ts";

const DEVICES = 10_000;
const USERS = 1000;
const TARGET_RATIO = 0.9;
const DEVICE_GROUP = "bench-devices";
const DEVICE_REPLY = { attribute: "Idle-Timeout", value: "900" } as const;

/** Device n's MAC (n from 1): 00:16:3e (a real, universally administered OUI) and n. */
function deviceMac(n: number): string {
  const hex = n.toString(16).padStart(6, "0").toUpperCase();
  return `00-16-3E-${hex.slice(0, 2)}-${hex.slice(2, 4)}-${hex.slice(4)}`;
}

/** The users and network of the RADIUS bench, MAB on, and 10,000 devices in a group (CSV import). */
async function seedDevices(dataDir: string): Promise<void> {
  await seed(dataDir);
  const database = openDatabase({ dataDir });
  try {
    await migrate(database);
    const core = createCore(database, { publicUrl: "http://localhost" });
    const account = await core.accounts.resolve(undefined);
    const group = await core.groups.create(account.id, { name: DEVICE_GROUP });
    await core.attributes.addToGroup(account.id, group.id, {
      table: "radgroupreply",
      attribute: DEVICE_REPLY.attribute,
      operator: ":=",
      value: DEVICE_REPLY.value,
    });
    const network = (await core.networks.listAll(account.id))[0]!;
    await core.networks.update(account.id, network.id, { mab_mode: "devices", mab_password: "mac" });
    const lines = ["mac,name,group"];
    for (let n = 1; n <= DEVICES; n++) lines.push(`${deviceMac(n)},device ${n},${DEVICE_GROUP}`);
    const { created } = await core.devices.importCsv(account.id, Readable.from([`${lines.join("\n")}\n`]));
    if (created !== DEVICES) throw new BenchError(`seeded ${created} devices, not ${DEVICES}`);
  } finally {
    await database.close();
  }
}

/** The MAB request file and its filter: packet k is device k+1's, or a wrong password / unknown MAC. */
function mabFiles(): { requests: string; filter: string; packets: number } {
  const requests: string[] = [];
  const filters: string[] = [];
  for (let k = 0; k < DEVICES; k++) {
    const unknown = k % 100 === 49;
    const wrong = !unknown && k % 10 === 9;
    const mac = unknown
      ? `02-FF-00-00-${(k >> 8).toString(16).padStart(2, "0")}-${(k & 255).toString(16).padStart(2, "0")}`.toUpperCase()
      : deviceMac(k + 1);
    requests.push(
      [
        `User-Name = "${mac}"`,
        `User-Password = "${wrong ? "not-the-mac" : mac}"`,
        `Calling-Station-Id = "${mac}"`,
        'NAS-IP-Address = "127.0.0.1"',
        `NAS-Port = ${k}`,
        'Called-Station-Id = "AA-BB-CC-00-00-01:wisp-bench"',
      ].join("\n"),
    );
    filters.push(
      unknown || wrong
        ? "Response-Packet-Type == Access-Reject"
        : [
            "Response-Packet-Type == Access-Accept",
            "Message-Authenticator =* 0x00",
            `${DEVICE_REPLY.attribute} == ${DEVICE_REPLY.value}`,
          ].join("\n"),
    );
  }
  return { requests: `${requests.join("\n\n")}\n`, filter: `${filters.join("\n\n")}\n`, packets: DEVICES };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "3" },
      repeat: { type: "string", default: "2" },
      parallel: { type: "string", default: "100" },
      dir: { type: "string", default: os.tmpdir() },
    },
  });
  const rounds = Number(values.rounds);
  const repeat = Number(values.repeat);
  const parallel = Number(values.parallel);
  installExitHandlers();
  const dir = makeTempDir(values.dir!, "mab");
  const dataDir = path.join(dir, "data");
  fs.mkdirSync(dataDir);
  console.log(`seeding ${USERS} users and ${DEVICES} devices...`);
  await seedDevices(dataDir);
  const pap = authFiles(USERS, DEVICES);
  const mab = mabFiles();
  const files = {
    pap: { requests: path.join(dir, "pap.txt"), filter: path.join(dir, "pap.filter") },
    mab: { requests: path.join(dir, "mab.txt"), filter: path.join(dir, "mab.filter") },
  };
  fs.writeFileSync(files.pap.requests, pap.requests);
  fs.writeFileSync(files.pap.filter, pap.filter(true));
  fs.writeFileSync(files.mab.requests, mab.requests);
  fs.writeFileSync(files.mab.filter, mab.filter);

  const wisp = await startWisp(dataDir, undefined);
  try {
    const run = (kind: "pap" | "mab", times: number) =>
      runRadclient({
        port: wisp.authPort,
        kind: "auth",
        file: files[kind].requests,
        filter: files[kind].filter,
        repeat: times,
        parallel,
        expected: DEVICES * times,
        timeoutSeconds: 10,
      });
    // Warm-up: JIT, caches, and each device's first last_seen write.
    await run("pap", 1);
    await run("mab", 1);
    const results: { pap: RadclientRun[]; mab: RadclientRun[] } = { pap: [], mab: [] };
    for (let round = 0; round < rounds; round++) {
      for (const kind of round % 2 === 0 ? (["pap", "mab"] as const) : (["mab", "pap"] as const)) {
        const result = await run(kind, repeat);
        results[kind].push(result);
        console.log(
          `round ${round + 1} ${kind.toUpperCase()}: ${(result.sent / result.seconds).toFixed(0)} req/s, ` +
            `${result.accepted} accepted, ${result.rejected} rejected, ${wrongOf(result)} wrong or lost` +
            (result.samples.length ? ` (${result.samples.join(" | ")})` : ""),
        );
      }
    }
    const rate = (runs: RadclientRun[]) => median(runs.map((r) => r.sent / r.seconds));
    const papRate = rate(results.pap);
    const mabRate = rate(results.mab);
    const wrong = [...results.pap, ...results.mab].reduce((sum, r) => sum + wrongOf(r), 0);
    const ratio = mabRate / papRate;
    const report = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
      devices: DEVICES,
      users: USERS,
      packetsPerRun: DEVICES * repeat,
      parallel,
      rounds,
      papPerSecond: Math.round(papRate),
      mabPerSecond: Math.round(mabRate),
      ratio: Number(ratio.toFixed(3)),
      target: TARGET_RATIO,
      wrongOrLost: wrong,
      met: ratio >= TARGET_RATIO && wrong === 0,
      runs: Object.fromEntries(
        Object.entries(results).map(([k, runs]) => [k, runs.map((r) => Math.round(r.sent / r.seconds))]),
      ),
    };
    console.log(
      `PAP ${report.papPerSecond}/s, MAB ${report.mabPerSecond}/s: ${report.ratio}x (target ${TARGET_RATIO}x), ${wrong} wrong or lost`,
    );
    writeResults("mab", report);
    if (!report.met) process.exitCode = 1;
  } finally {
    await wisp.stop();
  }
}

runBench(main);

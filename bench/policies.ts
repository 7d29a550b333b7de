// PAP Access-Requests per second with 50 policies against none, on Wisp's embedded RADIUS server in
// the same run (issue 25 point 7; target >= 0.9x, 0 wrong answers).
//
//   node --import tsx bench/policies.ts [--rounds 3] [--repeat 2] [--parallel 100] [--dir <parent>]
//
// bench/radius-load.ts's users and PAP file (1,000 users, 10,000 packets, 10% wrong passwords or
// unknown users, radclient filters stating each answer). "50 policies": 49 that every request is
// checked against and fails (networks, SSIDs, NAS-Identifiers, methods, days and times, groups:
// the groups condition makes each login read the user's groups), then one that matches every PAP
// login and adds nothing, so answers are the same with and without. The bench switches the list
// on and off between runs through the service (a login reads the list at each request); runs
// alternate, after a warm-up of each; medians are compared.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { authFiles, median, type RadclientRun, runRadclient, seed, wrongOf } from "./radius-load.ts";
import { installExitHandlers, makeTempDir, runBench, startWisp, writeResults } from "./radius-servers.ts";

const USERS = 1000;
const PACKETS = 10_000;
const POLICIES = 50;
const TARGET_RATIO = 0.9;

type Core = ReturnType<typeof createCore>;

/** 49 rules no bench request meets (each fails on a different kind of condition), then one it meets. */
async function addPolicies(core: Core, accountId: number): Promise<void> {
  const group = await core.groups.create(accountId, { name: "bench-nobody" });
  const otherNetwork = (await core.networks.create(accountId, { name: "elsewhere", nas_ip: "192.0.2.77" }))
    .network.id;
  const misses = [
    { networks: [otherNetwork] },
    { ssids: ["Guest*", "Lobby-?"] },
    { nas_identifiers: ["lobby-*"] },
    { methods: ["CHAP", "PEAP"] },
    { groups: [group.id] },
    { device: "registered" },
  ];
  for (let i = 1; i < POLICIES; i++) {
    await core.policies.create(accountId, {
      name: `bench ${i}`,
      conditions: {
        ...misses[i % misses.length],
        days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
        times: ["00:00-24:00"],
      },
      outcome: { action: "accept", vlan: 100 + i },
    });
  }
  await core.policies.create(accountId, {
    name: "bench last",
    conditions: { methods: ["PAP"] },
    outcome: { action: "accept" },
  });
}

async function withCore<T>(dataDir: string, fn: (core: Core, accountId: number) => Promise<T>): Promise<T> {
  const database = openDatabase({ dataDir });
  try {
    await migrate(database);
    const core = createCore(database, { publicUrl: "http://localhost" });
    return await fn(core, (await core.accounts.resolve(undefined)).id);
  } finally {
    await database.close();
  }
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
  const dir = makeTempDir(values.dir!, "policies");
  const dataDir = path.join(dir, "data");
  fs.mkdirSync(dataDir);
  console.log(`seeding ${USERS} users...`);
  await seed(dataDir);
  const pap = authFiles(USERS, PACKETS);
  const files = { requests: path.join(dir, "pap.txt"), filter: path.join(dir, "pap.filter") };
  fs.writeFileSync(files.requests, pap.requests);
  fs.writeFileSync(files.filter, pap.filter(true));
  // The rules are made once; "none" keeps them aside under another account's id (moved back and forth).
  const saved = await withCore(dataDir, async (core, accountId) => {
    await addPolicies(core, accountId);
    const spare = await core.accounts.create("bench-spare");
    return { accountId, spare: spare.id };
  });
  const policiesOn = (on: boolean) =>
    withCore(dataDir, async (core) => {
      const [from, to] = on ? [saved.spare, saved.accountId] : [saved.accountId, saved.spare];
      await core.database.db
        .updateTable("policies")
        .set({ account_id: to })
        .where("account_id", "=", from)
        .execute();
      const count = (await core.policies.list(saved.accountId)).total;
      if (count !== (on ? POLICIES : 0))
        throw new Error(`${count} policies in the account, not ${on ? POLICIES : 0}`);
    });

  const wisp = await startWisp(dataDir, undefined);
  try {
    const run = () =>
      runRadclient({
        port: wisp.authPort,
        kind: "auth",
        file: files.requests,
        filter: files.filter,
        repeat,
        parallel,
        expected: PACKETS * repeat,
        timeoutSeconds: 10,
      });
    const results: { none: RadclientRun[]; fifty: RadclientRun[] } = { none: [], fifty: [] };
    await policiesOn(false);
    await run();
    await policiesOn(true);
    await run();
    for (let round = 0; round < rounds; round++) {
      for (const kind of round % 2 === 0 ? (["none", "fifty"] as const) : (["fifty", "none"] as const)) {
        await policiesOn(kind === "fifty");
        const result = await run();
        results[kind].push(result);
        console.log(
          `round ${round + 1} ${kind === "none" ? "no policies" : `${POLICIES} policies`}: ` +
            `${(result.sent / result.seconds).toFixed(0)} req/s, ${result.accepted} accepted, ` +
            `${result.rejected} rejected, ${wrongOf(result)} wrong or lost`,
        );
      }
    }
    const rate = (runs: RadclientRun[]) => median(runs.map((r) => r.sent / r.seconds));
    const none = rate(results.none);
    const fifty = rate(results.fifty);
    const wrong = [...results.none, ...results.fifty].reduce((sum, r) => sum + wrongOf(r), 0);
    const ratio = fifty / none;
    const report = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
      users: USERS,
      policies: POLICIES,
      packetsPerRun: PACKETS * repeat,
      parallel,
      rounds,
      nonePerSecond: Math.round(none),
      fiftyPerSecond: Math.round(fifty),
      ratio: Number(ratio.toFixed(3)),
      target: TARGET_RATIO,
      wrongOrLost: wrong,
      met: ratio >= TARGET_RATIO && wrong === 0,
      runs: Object.fromEntries(
        Object.entries(results).map(([k, runs]) => [k, runs.map((r) => Math.round(r.sent / r.seconds))]),
      ),
    };
    console.log(
      `no policies ${report.nonePerSecond}/s | ${POLICIES} policies ${report.fiftyPerSecond}/s | ${report.ratio}x (target ${TARGET_RATIO}x), ${wrong} wrong or lost`,
    );
    writeResults("policies", report);
    if (!report.met) process.exitCode = 1;
  } finally {
    await wisp.stop();
  }
}

runBench(main);

// What the RADIUS benchmark sends, and how: the seeded users, radclient request files (PAP
// Access-Requests with some wrong passwords and unknown users; accounting Starts then Stops with
// distinct session ids), radclient filter files that state the expected answer to each request,
// and a radclient run whose summary and per-reply failures are read back.
import { spawn } from "node:child_process";
import { createCore } from "../src/core/index.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrate.ts";
import { BenchError, processTicks, TICKS_PER_SECOND, track } from "./radius-servers.ts";

export const SECRET = "wisp-bench-secret-0123";
export const USERS = 1000;
export const GROUP = "bench-staff";
export const GROUP_REPLY = { attribute: "Idle-Timeout", value: "600" } as const;
const CALLED_STATION = "AA-BB-CC-00-00-01:wisp-bench";

export interface RadiusBenchUser {
  username: string;
  password: string;
  /** Each user's own Session-Timeout reply item: a mixed-up answer shows up as a wrong value. */
  sessionTimeout: number;
  /** Member of GROUP, whose reply item GROUP_REPLY is added to the answer. */
  inGroup: boolean;
  callingStation: string;
}

export function radiusBenchUser(n: number): RadiusBenchUser {
  const tag = String(n).padStart(4, "0");
  const hex = n.toString(16).padStart(4, "0").toUpperCase();
  return {
    username: `bench${tag}`,
    password: `Pw-${tag}-radius`,
    sessionTimeout: 1800 + n,
    inGroup: n % 4 === 0,
    callingStation: `02-00-00-00-${hex.slice(0, 2)}-${hex.slice(2)}`,
  };
}

/** 1,000 users with a password and a Session-Timeout reply item, every 4th in a group, one network. */
export async function seed(dataDir: string): Promise<void> {
  const database = openDatabase({ dataDir });
  try {
    await migrate(database);
    const core = createCore(database, { publicUrl: "http://localhost" });
    const account = await core.accounts.resolve(undefined);
    const group = await core.groups.create(account.id, { name: GROUP });
    await core.attributes.addToGroup(account.id, group.id, {
      table: "radgroupreply",
      attribute: GROUP_REPLY.attribute,
      operator: ":=",
      value: GROUP_REPLY.value,
    });
    for (let n = 1; n <= USERS; n++) {
      const spec = radiusBenchUser(n);
      const user = await core.users.create(account.id, { username: spec.username, password: spec.password });
      await core.attributes.addToUser(account.id, {
        userid: user.id,
        table: "radreply",
        attribute: "Session-Timeout",
        operator: ":=",
        value: String(spec.sessionTimeout),
      });
      if (spec.inGroup) await core.groups.addMember(account.id, group.id, { userid: user.id });
    }
    await core.networks.create(account.id, { name: "bench", nas_ip: "127.0.0.1", secret: SECRET });
  } finally {
    await database.close();
  }
}

type PacketKind = "good" | "wrong-password" | "unknown-user";

/** Every 10th packet carries a wrong password, every 100th (offset 49) an unknown username. */
function packetKind(k: number): PacketKind {
  if (k % 10 === 9) return "wrong-password";
  if (k % 100 === 49) return "unknown-user";
  return "good";
}

export type Attributes = [string, string | number][];

function attributes(pairs: Attributes): string {
  return pairs
    .map(([name, value]) => (typeof value === "number" ? `${name} = ${value}` : `${name} = "${value}"`))
    .join("\n");
}

export interface AuthPacket {
  attributes: Attributes;
  accept: boolean;
  user: RadiusBenchUser;
}

/** The k-th Access-Request of the file: the user (k % users) + 1, maybe with a wrong password. */
export function authPacket(k: number, users: number): AuthPacket {
  const user = radiusBenchUser((k % users) + 1);
  const kind = packetKind(k);
  const username = kind === "unknown-user" ? `nobody${k}` : user.username;
  const password = kind === "good" ? user.password : `Wrong-${k}`;
  return {
    attributes: [
      ["User-Name", username],
      ["User-Password", password],
      ["NAS-IP-Address", "127.0.0.1"],
      ["NAS-Port", k],
      ["NAS-Port-Type", "Wireless-802.11"],
      ["Called-Station-Id", CALLED_STATION],
      ["Calling-Station-Id", user.callingStation],
    ],
    accept: kind === "good",
    user,
  };
}

export interface AuthFiles {
  packets: number;
  /** Per repetition of the file. */
  accepts: number;
  rejects: number;
  requests: string;
  /** The filter file, given whether the server's Access-Accepts carry a Message-Authenticator. */
  filter(acceptHasMessageAuthenticator: boolean): string;
}

/** `packets` Access-Requests cycling through `users` seeded users. */
export function authFiles(users: number, packets: number): AuthFiles {
  const all = Array.from({ length: packets }, (_, k) => authPacket(k, users));
  const accepts = all.filter((p) => p.accept).length;
  return {
    packets,
    accepts,
    rejects: packets - accepts,
    requests: `${all.map((p) => attributes(p.attributes)).join("\n\n")}\n`,
    filter(withMa) {
      // A filter with attributes must list every attribute of the reply; a bare
      // Response-Packet-Type checks the verdict only (rejects carry a Reply-Message on Wisp only).
      const filters = all.map(({ accept, user }) => {
        if (!accept) return "Response-Packet-Type == Access-Reject";
        const lines = ["Response-Packet-Type == Access-Accept"];
        if (withMa) lines.push("Message-Authenticator =* 0x00");
        lines.push(`Session-Timeout == ${user.sessionTimeout}`);
        if (user.inGroup) lines.push(`${GROUP_REPLY.attribute} == ${GROUP_REPLY.value}`);
        return lines.join("\n");
      });
      return `${filters.join("\n\n")}\n`;
    },
  };
}

/** Session i's Accounting-Request Start or Stop; session id `<tag>-<i>`. */
export function acctPacket(tag: string, i: number, users: number, status: "Start" | "Stop"): Attributes {
  const user = radiusBenchUser((i % users) + 1);
  const n = i + 1;
  const common: Attributes = [
    ["Acct-Status-Type", status],
    ["Acct-Session-Id", `${tag}-${i}`],
    ["User-Name", user.username],
    ["NAS-IP-Address", "127.0.0.1"],
    ["NAS-Port", i],
    ["NAS-Port-Type", "Wireless-802.11"],
    ["Called-Station-Id", CALLED_STATION],
    ["Calling-Station-Id", user.callingStation],
    ["Framed-IP-Address", `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`],
    ["Acct-Authentic", "RADIUS"],
    ["Acct-Delay-Time", 0],
  ];
  if (status === "Start") return common;
  return [
    ...common,
    ["Acct-Session-Time", 600 + (i % 60)],
    ["Acct-Input-Octets", 100_000 + i],
    ["Acct-Output-Octets", 2_000_000 + i],
    ["Acct-Input-Gigawords", 0],
    ["Acct-Output-Gigawords", 0],
    ["Acct-Terminate-Cause", "User-Request"],
  ];
}

/** `sessions` Accounting-Request Starts, then their Stops. */
export function acctFile(tag: string, users: number, sessions: number): string {
  const packets: string[] = [];
  for (const status of ["Start", "Stop"] as const) {
    for (let i = 0; i < sessions; i++) packets.push(attributes(acctPacket(tag, i, users, status)));
  }
  return `${packets.join("\n\n")}\n`;
}

export interface RadclientRun {
  seconds: number;
  sent: number;
  accepted: number;
  rejected: number;
  /** No answer within the timeout, plus `unaccounted`. */
  lost: number;
  /** Packets the summary leaves out (sent minus accepted, rejected and lost). */
  unaccounted: number;
  passedFilter: number;
  failedFilter: number;
  /** Known-good users rejected, wrong passwords / unknown users accepted (from the filter). */
  wrongVerdicts: number;
  /** Right verdict, wrong reply attributes. */
  wrongReplies: number;
  /** A few failure lines, for the report. */
  samples: string[];
  /** CPU seconds radclient itself used (it busy-loops: about the run's duration). */
  clientCpuSeconds: number;
}

export interface RadclientOptions {
  port: number;
  kind: "auth" | "acct";
  file: string;
  filter?: string | undefined;
  /** -c: each packet of the file is sent this many times. */
  repeat: number;
  parallel: number;
  /** Packets in the file times repeat: what a complete run answers. */
  expected: number;
  timeoutSeconds: number;
}

/**
 * How radclient is scheduled: BENCH_RADCLIENT_PRIORITY = idle (the default: SCHED_IDLE, run only on
 * a CPU nothing else wants), nice (nice 19) or normal. radclient busy-polls while every packet of
 * its window is in flight (its main loop's own FIXME: a pass that sends nothing does not block, it
 * selects with a zero timeout again), so a server that answers in bursts leaves it spinning between
 * them: measured here against Wisp, 81 select calls per request against FreeRADIUS's 11, and 220
 * against 47 µs of radclient CPU per request. At normal priority on a shared 2-core machine that
 * spin takes CPU from the server under test (and from slapd); as SCHED_IDLE it spins only on a CPU
 * that would otherwise idle. Every server gets the same treatment; radclient's CPU is still printed.
 */
export const RADCLIENT_PRIORITY = process.env.BENCH_RADCLIENT_PRIORITY ?? "idle";
const PRIORITY_COMMAND: Record<string, string[]> = {
  idle: ["chrt", "--idle", "0"],
  nice: ["nice", "-n", "19"],
  normal: [],
};
if (!PRIORITY_COMMAND[RADCLIENT_PRIORITY])
  throw new BenchError(`BENCH_RADCLIENT_PRIORITY must be idle, nice or normal, not ${RADCLIENT_PRIORITY}`);

function summaryNumber(text: string, label: string): number {
  const match = new RegExp(`${label}\\s*:\\s*(\\d+)`).exec(text);
  if (!match) throw new BenchError(`radclient printed no "${label}" in its summary:\n${text.slice(-2000)}`);
  return Number(match[1]);
}

/**
 * One radclient run, timed from spawn to exit (radclient itself starts in about 20 ms). Without -q,
 * radclient prints a line per packet sent and received to stdout (kept only as a tail for the summary)
 * and one line per filter failure to stderr, which tells wrong verdicts from wrong reply attributes.
 * -r 1: no retransmissions, so a packet the server drops or answers too late counts as lost.
 */
export function runRadclient(options: RadclientOptions): Promise<RadclientRun> {
  const file = options.filter ? `${options.file}:${options.filter}` : options.file;
  const args = [
    "-s",
    "-r",
    "1",
    "-t",
    String(options.timeoutSeconds),
    "-p",
    String(options.parallel),
    "-c",
    String(options.repeat),
    "-f",
    file,
    `127.0.0.1:${options.port}`,
    options.kind,
    SECRET,
  ];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const command = [...(PRIORITY_COMMAND[RADCLIENT_PRIORITY] ?? []), "radclient"];
    // chrt and nice exec radclient in their own process: the pid (and its /proc CPU time) is radclient's.
    const child = track(
      spawn(command[0]!, [...command.slice(1), ...args], { stdio: ["ignore", "pipe", "pipe"] }),
    );
    // Its CPU time, sampled until it exits (/proc/<pid> is gone once it has been reaped).
    let clientTicks = 0;
    const sampler = setInterval(() => {
      clientTicks = processTicks(child.pid ?? 0) ?? clientTicks;
    }, 50);
    let tail = "";
    let wrongVerdicts = 0;
    let wrongReplies = 0;
    const samples: string[] = [];
    let errText = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      tail = (tail + chunk).slice(-4000);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      errText += chunk;
      const end = errText.lastIndexOf("\n");
      if (end < 0) return;
      for (const line of errText.slice(0, end).split("\n")) {
        if (/Expected Access-\w+ got Access-\w+/.test(line)) wrongVerdicts++;
        else if (line.includes("Response for failed filter")) wrongReplies++;
        else if (!line.trim()) continue;
        if (samples.length < 5) samples.push(line.trim());
      }
      errText = errText.slice(end + 1);
    });
    child.on("error", (error) => {
      clearInterval(sampler);
      reject(error);
    });
    child.on("exit", () => clearInterval(sampler));
    child.on("close", (code, signal) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (signal) return reject(new BenchError(`radclient ended by ${signal}`));
      try {
        const accepted = summaryNumber(tail, "Accepted");
        const rejected = summaryNumber(tail, "Rejected");
        const lost = summaryNumber(tail, "Lost");
        const run: RadclientRun = {
          seconds,
          sent: options.expected,
          accepted,
          rejected,
          lost,
          unaccounted: 0,
          passedFilter: summaryNumber(tail, "Passed filter"),
          failedFilter: summaryNumber(tail, "Failed filter"),
          wrongVerdicts,
          wrongReplies,
          samples,
          clientCpuSeconds: clientTicks / TICKS_PER_SECOND,
        };
        // radclient has been seen to report a few packets fewer than it sent (neither answered nor
        // lost) when FreeRADIUS gives up on requests: they had no usable answer, so they count as lost.
        const unaccounted = options.expected - (accepted + rejected + lost);
        if (unaccounted < 0) {
          throw new BenchError(
            `radclient accounted for ${accepted + rejected + lost} packets, expected ${options.expected}` +
              ` (exit code ${code})`,
          );
        }
        run.unaccounted = unaccounted;
        run.lost += unaccounted;
        resolve(run);
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** The middle of the rounds' figures (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Answers that were wrong, lost or failed radclient's filter in one run. */
export function wrongOf(run: RadclientRun): number {
  return run.wrongVerdicts + run.wrongReplies + run.lost + run.failedFilter;
}

// Reads a V8 CPU profile of the Wisp child (bench/radius.ts --cpu-prof <dir>) and prints where the
// time went: self time by function and by file, and inclusive time of the functions that matter
// for a RADIUS request, each also in microseconds per request when --requests is given.
//
//   node --import tsx bench/radius-profile.ts <file.cpuprofile> [--requests N] [--top 40]
//     [--focus name,name] [--skip-first <seconds>] [--cpu-us <µs per request>]
//
// The profiler samples wall-clock time: on a machine shared with other processes, a descheduled
// thread's samples land on whatever it was running, which inflates every figure alike. --cpu-us
// scales the per-request figures to the CPU time the bench measured for the server process
// (/proc), so they add up to it; the shares (%) are unaffected. --skip-first leaves out the
// start-up (module loading, schema compilation) before the load began.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Functions whose inclusive time is shown by default (the request's path through Wisp). */
const FOCUS = [
  "receive",
  "answer",
  "decodePacket",
  "encodePacket",
  "authenticate",
  "account",
  "findUser",
  "userItems",
  "decideLogin",
  "authorize",
  "recordAttempt",
  "insertEvents",
  "flush",
  "executeQuery",
  "compileQuery",
  "compile",
  "transformQuery",
  "run",
  "all",
  "get",
  "prepare",
];

function shortUrl(url: string): string {
  if (!url) return "(native)";
  const clean = url.replace(/^file:\/\//, "");
  const nm = clean.lastIndexOf("node_modules/");
  if (nm >= 0) return clean.slice(nm + "node_modules/".length);
  const root = process.cwd();
  return clean.startsWith(root) ? path.relative(root, clean) : clean;
}

function label(frame: CallFrame): string {
  const name = frame.functionName || "(anonymous)";
  if (!frame.url) return name;
  return `${name} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
}

function main(): void {
  const { values, positionals } = parseArgs({
    options: {
      requests: { type: "string" },
      top: { type: "string" },
      focus: { type: "string" },
      "skip-first": { type: "string" },
      "cpu-us": { type: "string" },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (!file) throw new Error("usage: radius-profile.ts <file.cpuprofile> [--requests N]");
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile;
  const requests = values.requests ? Number(values.requests) : 0;
  const top = values.top ? Number(values.top) : 40;
  const focus = values.focus ? values.focus.split(",") : FOCUS;

  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const skipUs = Number(values["skip-first"] ?? 0) * 1e6;
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at - profile.startTime < skipUs) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const totalUs = profile.endTime - profile.startTime - Math.min(skipUs, profile.endTime - profile.startTime);
  let idleUs = 0;
  const selfByFunction = new Map<string, number>();
  const selfByFile = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const frame = node.callFrame;
    if (frame.functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    const fn = label(frame);
    selfByFunction.set(fn, (selfByFunction.get(fn) ?? 0) + us);
    const fileKey = frame.url ? shortUrl(frame.url) : `(${frame.functionName || "native"})`;
    selfByFile.set(fileKey, (selfByFile.get(fileKey) ?? 0) + us);
    // Inclusive: every distinct focused function on the stack gets the sample once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)?.callFrame;
      if (!f || !focus.includes(f.functionName)) continue;
      const key = label(f);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const busyUs = totalUs - idleUs;
  const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  const pct = (us: number) => `${((us / busyUs) * 100).toFixed(1).padStart(5)}%`;
  const cpuUs = values["cpu-us"] ? Number(values["cpu-us"]) : undefined;
  // µs per request: as sampled, or scaled so that the busy total equals the measured CPU time.
  const scale = cpuUs !== undefined && requests ? (cpuUs * requests) / busyUs : 1;
  const per = (us: number) => (requests ? `${((us * scale) / requests).toFixed(1).padStart(7)} µs/req` : "");
  const print = (title: string, entries: Map<string, number>, limit: number) => {
    console.log(`\n${title}`);
    for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
      console.log(`${ms(us)} ${pct(us)} ${per(us)}  ${name}`);
    }
  };
  console.log(
    `profile ${path.basename(file)}: ${ms(totalUs).trim()} wall, ${ms(busyUs).trim()} busy` +
      (requests ? `, ${requests} requests: ${(busyUs / requests).toFixed(1)} µs sampled per request` : "") +
      (cpuUs !== undefined ? `, scaled to the measured ${cpuUs} µs CPU per request` : ""),
  );
  print("self time by file", selfByFile, 25);
  print("self time by function", selfByFunction, top);
  print("inclusive time of request-path functions", inclusive, top);
}

main();

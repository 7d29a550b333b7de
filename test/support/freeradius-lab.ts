// A private FreeRADIUS 3.2 serving a Wisp SQLite database through rlm_sql, configured by
// deploy/freeradius/configure.sh (the same script operators use), on loopback ports of its own.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./databases.ts";

const STOCK_RADDB = "/etc/freeradius/3.0";
const CONFIGURE = path.resolve(import.meta.dirname, "../../deploy/freeradius/configure.sh");

function hasCommand(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** null when FreeRADIUS and radclient can be used here, otherwise why not. */
export function freeradiusUnavailable(): string | null {
  if (!hasCommand("freeradius")) return "freeradius is not installed (Debian package freeradius)";
  if (!hasCommand("radclient")) return "radclient is not installed (Debian package freeradius-utils)";
  if (!fs.existsSync(STOCK_RADDB)) return `${STOCK_RADDB} is missing`;
  return null;
}

/** libfaketime's thread-safe build (Debian package faketime), preloaded with FAKETIME set. */
function fakeTimeEnv(faketime: string): Record<string, string> {
  const library = fs
    .readdirSync("/usr/lib")
    .map((dir) => path.join("/usr/lib", dir, "faketime/libfaketimeMT.so.1"))
    .find((file) => fs.existsSync(file));
  if (!library) throw new Error("libfaketime is not installed (Debian package faketime)");
  return { LD_PRELOAD: library, FAKETIME: faketime, FAKETIME_DONT_FAKE_MONOTONIC: "1" };
}

/** A UDP port nobody listens on right now. */
export async function freeUdpPort(): Promise<number> {
  const { createSocket } = await import("node:dgram");
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

export interface FreeRadiusLab {
  authPort: number;
  acctPort: number;
  logFile: string;
  /** The server process (CPU time from /proc/<pid>/stat in benchmarks). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * env: configure.sh's variables, e.g. EAP_CERT_FILE, EAP_KEY_FILE, EAP_CA_FILE for WPA-Enterprise.
 * faketime: libfaketime's FAKETIME (e.g. "+3600": an hour ahead); the server runs with it preloaded
 * (not under the faketime(1) wrapper, which does not pass SIGTERM on).
 */
export async function startFreeRadius(
  databaseFile: string,
  options: { env?: Record<string, string>; faketime?: string } = {},
): Promise<FreeRadiusLab> {
  const dir = tempDir("freeradius");
  const raddb = path.join(dir, "raddb");
  fs.cpSync(STOCK_RADDB, raddb, { recursive: true, dereference: false });
  const authPort = await freeUdpPort();
  const acctPort = await freeUdpPort();
  execFileSync(CONFIGURE, [raddb, databaseFile, String(authPort), String(acctPort), "127.0.0.1", "--lab"], {
    env: { ...process.env, ...options.env },
  });
  const logFile = path.join(dir, "radius.log");
  const env =
    options.faketime === undefined ? process.env : { ...process.env, ...fakeTimeEnv(options.faketime) };
  const child: ChildProcess = spawn("freeradius", ["-f", "-d", raddb, "-l", logFile], {
    stdio: "ignore",
    env,
  });
  const deadline = Date.now() + 15_000;
  while (!fs.existsSync(logFile) || !fs.readFileSync(logFile, "utf8").includes("Ready to process requests")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "(no log)";
      child.kill("SIGKILL");
      throw new Error(`FreeRADIUS did not start:\n${log.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    authPort,
    acctPort,
    logFile,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RadclientReply {
  code: string;
  attributes: [string, string][];
}

/** Sends one packet with radclient and returns the answer's code and attributes. */
export async function radclient(
  port: number,
  kind: "auth" | "acct" | "status",
  secret: string,
  attributes: [string, string][],
): Promise<RadclientReply> {
  const input = attributes
    .map(([name, value]) => `${name} = "${value.replace(/(["\\])/g, "\\$1")}"`)
    .join("\n");
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn("radclient", ["-x", "-r", "1", "-t", "2", `127.0.0.1:${port}`, kind, secret]);
    let text = "";
    child.stdout.on("data", (chunk) => {
      text += chunk;
    });
    child.stderr.on("data", (chunk) => {
      text += chunk;
    });
    child.on("error", reject);
    child.on("close", () => resolve(text));
    child.stdin.end(`${input}\n`);
  });
  const received = /Received (\S+) Id \d+ from/.exec(output);
  if (!received) return { code: "timeout", attributes: [] };
  const after = output.slice(received.index).split("\n").slice(1);
  const replied: [string, string][] = [];
  for (const line of after) {
    const match = /^\t(\S+) = (.*)$/.exec(line);
    if (!match) break;
    replied.push([match[1]!, match[2]!.replace(/^"(.*)"$/, "$1")]);
  }
  return { code: received[1]!, attributes: replied };
}

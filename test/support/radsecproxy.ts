// Debian's radsecproxy as the NAS-side proxy in front of Wisp's RadSec listener: it takes plain
// RADIUS on a loopback UDP port and forwards every realm over TLS, presenting a client certificate
// (see ../shared/design/radsec-lab.md). Run in the foreground (-f) with a private config in a temp
// dir; stopped by its PID.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./databases.ts";
import { freeUdpPort } from "./freeradius-lab.ts";

/** null when radsecproxy can be run here, otherwise why not. */
export function radsecproxyUnavailable(): string | null {
  try {
    execFileSync("sh", ["-c", "command -v radsecproxy"], { stdio: "ignore" });
    return null;
  } catch {
    return "radsecproxy is not installed (Debian package radsecproxy)";
  }
}

/** "1.9.2", from `radsecproxy -v` ("radsecproxy revision 1.9.2"). */
export function radsecproxyVersion(): string {
  // It prints to stderr.
  const run = spawnSync("radsecproxy", ["-v"], { encoding: "utf8" });
  const out = `${run.stdout}${run.stderr}`;
  const version = /revision (\S+)/.exec(out)?.[1];
  if (!version) throw new Error(`radsecproxy -v printed no version: ${out}`);
  return version;
}

export interface RadsecproxyOptions {
  /** Wisp's RadSec listener. */
  target: { host: string; port: number };
  /** PEM texts: the CA that signed Wisp's server certificate, the NAS certificate and its key. */
  ca: string;
  cert: string;
  key: string;
  /** The plain-RADIUS side: address it listens on and the secret its UDP clients use. */
  listenHost?: string;
  clientSecret?: string;
  /** A regular expression the server certificate's SAN DNS must match (pinning Wisp by name). */
  serverName?: string;
}

export interface RunningRadsecproxy {
  udpHost: string;
  udpPort: number;
  clientSecret: string;
  pid: number;
  /** radsecproxy's log so far. */
  log(): string;
  stop(): Promise<void>;
}

function config(options: RadsecproxyOptions, dir: string, udpHost: string, udpPort: number): string {
  const match = options.serverName
    ? `\tMatchCertificateAttribute SubjectAltName:DNS:/^${options.serverName.replace(/\./g, "\\.")}$/\n`
    : "";
  return `ListenUDP ${udpHost}:${udpPort}
LogLevel 5
tls wisp {
\tCACertificateFile ${dir}/ca.pem
\tCertificateFile ${dir}/nas.pem
\tCertificateKeyFile ${dir}/nas.key
}
client ${udpHost} {
\ttype udp
\tsecret ${options.clientSecret ?? "testing123"}
}
server wisp {
\thost ${options.target.host}
\tport ${options.target.port}
\ttype tls
\tsecret radsec
\ttls wisp
\t# The host is an address: the name Wisp's certificate carries is matched instead (or nothing).
\tCertificateNameCheck off
${match}}
realm * {
\tserver wisp
\taccountingServer wisp
}
`;
}

export async function startRadsecproxy(options: RadsecproxyOptions): Promise<RunningRadsecproxy> {
  const dir = tempDir("radsecproxy");
  fs.writeFileSync(path.join(dir, "ca.pem"), options.ca);
  fs.writeFileSync(path.join(dir, "nas.pem"), options.cert);
  fs.writeFileSync(path.join(dir, "nas.key"), options.key, { mode: 0o600 });
  const udpHost = options.listenHost ?? "127.0.0.1";
  const udpPort = await freeUdpPort();
  const file = path.join(dir, "radsecproxy.conf");
  fs.writeFileSync(file, config(options, dir, udpHost, udpPort));
  const child: ChildProcess = spawn("radsecproxy", ["-f", "-c", file], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  // In the foreground (-f) radsecproxy logs to stderr.
  const log = () => stderr;
  // Ready once its TLS connection to Wisp is up ("tlsconnect: TLS connection to ... up").
  const deadline = Date.now() + 15_000;
  while (!/TLS connection to .* up/.test(log())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`radsecproxy did not connect to Wisp (exit ${child.exitCode}):\n${log().slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    udpHost,
    udpPort,
    clientSecret: options.clientSecret ?? "testing123",
    pid: child.pid!,
    log,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        process.kill(child.pid!, "SIGTERM");
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

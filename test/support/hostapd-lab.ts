// A real 802.1X access point on one machine (shared/design/8021x-lab.md): a veth pair, hostapd's
// wired driver as the authenticator on one end, wpa_supplicant as the station in a network
// namespace on the other. hostapd's authentication server is configurable; until Wisp speaks EAP
// it is a private FreeRADIUS doing EAP-MD5 from a users file (no certificates needed on a wire).
// Wisp is the accounting server and the Dynamic Authorization client: hostapd's accounting opens
// the session in Wisp, and Wisp's Disconnect-Request reaches hostapd's DAS (RFC 5176).
// Names are unique per run; stop() removes the namespace, the link, the processes and the files.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./databases.ts";
import { freeUdpPort } from "./freeradius-lab.ts";

const run = (command: string, args: string[]) => execFileSync(command, args, { stdio: "pipe" }).toString();

function hasCommand(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** null when the lab can run here, otherwise why not (printed as the skip reason). */
export function hostapdLabUnavailable(): string | null {
  if (process.getuid?.() !== 0) return "the 802.1X lab needs root (network namespaces, veth links)";
  for (const [command, pkg] of [
    ["hostapd", "hostapd"],
    ["hostapd_cli", "hostapd"],
    ["wpa_supplicant", "wpasupplicant"],
    ["wpa_cli", "wpasupplicant"],
    ["freeradius", "freeradius"],
    ["ip", "iproute2"],
  ]) {
    if (!hasCommand(command!)) return `${command} is not installed (Debian package ${pkg})`;
  }
  const probe = `wispprobe${randomBytes(3).toString("hex")}`;
  try {
    run("ip", ["netns", "add", probe]);
    run("ip", ["netns", "del", probe]);
  } catch (error) {
    return `network namespaces cannot be made here: ${(error as Error).message.split("\n")[0]}`;
  }
  return null;
}

export interface HostapdLabOptions {
  /** hostapd's shared secret with Wisp (accounting, DAS) and with the auth server. */
  secret: string;
  /** Wisp's accounting port on 127.0.0.1. */
  acctPort: number;
  /** The authentication server; default: a private FreeRADIUS with `user`/`password` (EAP-MD5). */
  auth?: { port: number; secret: string };
  user: string;
  password: string;
  /**
   * The station's EAP lines in its wpa_supplicant network block; default EAP-MD5 with user/password.
   * With Wisp as the auth server (once it speaks EAP): e.g. eap=PEAP, identity, password,
   * phase2="autheap=MSCHAPV2", ca_cert="<Wisp's CA>".
   */
  stationEap?: string[];
  /** Acct-Interim-Interval hostapd uses when the Access-Accept carries none (seconds). */
  interimInterval?: number;
}

export interface HostapdLab {
  /** hostapd's DAS port on 127.0.0.1. */
  dasPort: number;
  /** The station's MAC, as hostapd sends it in Calling-Station-Id (XX-XX-XX-XX-XX-XX). */
  stationMac: string;
  nasIdentifier: string;
  /** Starts wpa_supplicant and waits until hostapd has authorized the station. */
  connect(): Promise<void>;
  /** hostapd_cli all_sta: the stations hostapd knows, with their flags. */
  stations(): string;
  authorized(): boolean;
  /** hostapd's log, for assertions and failure messages. */
  log(): string;
  stop(): Promise<void>;
}

async function waitFor(what: string, check: () => boolean, timeoutMs: number, context: () => string) {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n${context().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function startDaemon(command: string, args: string[], log: string): ChildProcess {
  const out = fs.openSync(log, "a");
  return spawn(command, args, { stdio: ["ignore", out, out] });
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
  await exited;
  clearTimeout(timer);
}

/** A private FreeRADIUS answering EAP-MD5 for one user from its users file, on a loopback port. */
async function startEapMd5Server(dir: string, secret: string, user: string, password: string) {
  const raddb = path.join(dir, "raddb");
  fs.cpSync("/etc/freeradius/3.0", raddb, { recursive: true });
  const port = await freeUdpPort();
  for (const site of fs.readdirSync(path.join(raddb, "sites-enabled"))) {
    fs.rmSync(path.join(raddb, "sites-enabled", site));
  }
  fs.writeFileSync(
    path.join(raddb, "sites-enabled", "lab"),
    `server lab {
  listen {
    type = auth
    ipaddr = 127.0.0.1
    port = ${port}
  }
  authorize {
    eap { ok = return }
    files
  }
  authenticate {
    Auth-Type EAP {
      eap
    }
  }
}
`,
  );
  fs.writeFileSync(
    path.join(raddb, "mods-enabled", "eap"),
    "eap {\n  default_eap_type = md5\n  timer_expire = 60\n  md5 {\n  }\n}\n",
  );
  fs.writeFileSync(
    path.join(raddb, "clients.conf"),
    `client lab {\n  ipaddr = 127.0.0.1\n  secret = ${secret}\n}\n`,
  );
  fs.writeFileSync(
    path.join(raddb, "mods-config", "files", "authorize"),
    `${user} Cleartext-Password := "${password}"\n`,
  );
  const conf = path.join(raddb, "radiusd.conf");
  fs.writeFileSync(
    conf,
    fs
      .readFileSync(conf, "utf8")
      .replace(/^(\s*)(user|group) = freerad/gm, "$1#$2 = freerad")
      .replace(/^logdir = .*/m, `logdir = ${dir}`)
      .replace(/^run_dir = .*/m, `run_dir = ${dir}`),
  );
  const log = path.join(dir, "freeradius.log");
  const child = spawn("freeradius", ["-f", "-d", raddb, "-l", log], { stdio: "ignore" });
  await waitFor(
    "FreeRADIUS",
    () => fs.existsSync(log) && fs.readFileSync(log, "utf8").includes("Ready to process requests"),
    15_000,
    () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "(no log)"),
  );
  return { port, child };
}

export async function startHostapdLab(options: HostapdLabOptions): Promise<HostapdLab> {
  const id = randomBytes(3).toString("hex");
  const names = { ns: `wispsta${id}`, ap: `wap${id}`, sta: `wsta${id}` };
  const dir = tempDir("hostapd");
  fs.chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  const cleanup = async () => {
    for (const child of children.reverse()) await stopChild(child);
    for (const [command, args] of [
      ["ip", ["link", "del", names.ap]],
      ["ip", ["netns", "del", names.ns]],
    ] as const) {
      try {
        run(command, [...args]);
      } catch {
        // already gone
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    run("ip", ["netns", "add", names.ns]);
    run("ip", ["link", "add", names.ap, "type", "veth", "peer", "name", names.sta]);
    run("ip", ["link", "set", names.sta, "netns", names.ns]);
    run("ip", ["link", "set", names.ap, "up"]);
    run("ip", ["netns", "exec", names.ns, "ip", "link", "set", names.sta, "up"]);
    const stationMac = run("ip", ["netns", "exec", names.ns, "cat", `/sys/class/net/${names.sta}/address`])
      .trim()
      .toUpperCase()
      .replace(/:/g, "-");

    let auth = options.auth;
    if (!auth) {
      const server = await startEapMd5Server(dir, options.secret, options.user, options.password);
      children.push(server.child);
      auth = { port: server.port, secret: options.secret };
    }
    const dasPort = await freeUdpPort();
    const nasIdentifier = `wisp-lab-${id}`;
    const apCtrl = path.join(dir, "hostapd-ctrl");
    const apConf = path.join(dir, "hostapd.conf");
    fs.writeFileSync(
      apConf,
      [
        `interface=${names.ap}`,
        "driver=wired",
        "ieee8021x=1",
        "eap_reauth_period=0",
        "use_pae_group_addr=1",
        "own_ip_addr=127.0.0.1",
        `nas_identifier=${nasIdentifier}`,
        "auth_server_addr=127.0.0.1",
        `auth_server_port=${auth.port}`,
        `auth_server_shared_secret=${auth.secret}`,
        "acct_server_addr=127.0.0.1",
        `acct_server_port=${options.acctPort}`,
        `acct_server_shared_secret=${options.secret}`,
        `radius_acct_interim_interval=${options.interimInterval ?? 0}`,
        `radius_das_port=${dasPort}`,
        `radius_das_client=127.0.0.1 ${options.secret}`,
        "radius_das_require_event_timestamp=1",
        "radius_das_require_message_authenticator=1",
        `ctrl_interface=${apCtrl}`,
        "logger_stdout=-1",
        "logger_stdout_level=1",
        "",
      ].join("\n"),
    );
    const apLog = path.join(dir, "hostapd.log");
    children.push(startDaemon("hostapd", ["-d", apConf], apLog));
    const readLog = () => (fs.existsSync(apLog) ? fs.readFileSync(apLog, "utf8") : "");
    await waitFor(
      "hostapd",
      () => readLog().includes("ENABLED") || readLog().includes("interface state"),
      10_000,
      readLog,
    );
    const staCtrl = path.join(dir, "wpa-ctrl");
    const staConf = path.join(dir, "wpa_supplicant.conf");
    fs.writeFileSync(
      staConf,
      [
        `ctrl_interface=${staCtrl}`,
        "ap_scan=0",
        "network={",
        "  key_mgmt=IEEE8021X",
        ...(
          options.stationEap ?? ["eap=MD5", `identity="${options.user}"`, `password="${options.password}"`]
        ).map((line) => `  ${line}`),
        "  eapol_flags=0",
        "}",
        "",
      ].join("\n"),
    );
    const staLog = path.join(dir, "wpa_supplicant.log");
    const stations = () => {
      try {
        return run("hostapd_cli", ["-p", apCtrl, "-i", names.ap, "all_sta"]);
      } catch {
        return "";
      }
    };
    const authorized = () => /flags=\[AUTHORIZED/.test(stations()) || /AUTHORIZED\]/.test(stations());
    return {
      dasPort,
      stationMac,
      nasIdentifier,
      async connect() {
        children.push(
          startDaemon(
            "ip",
            ["netns", "exec", names.ns, "wpa_supplicant", "-D", "wired", "-i", names.sta, "-c", staConf],
            staLog,
          ),
        );
        await waitFor(
          "the station to be authorized",
          authorized,
          15_000,
          () => `${readLog()}\n${stations()}`,
        );
      },
      stations,
      authorized,
      log: readLog,
      stop: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

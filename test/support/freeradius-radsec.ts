// FreeRADIUS 3.2 as a RadSec client: a private FreeRADIUS on loopback UDP ports proxies everything
// it gets (Proxy-To-Realm) to a `home_server` with `proto = tcp` and a `tls { }` block (Debian's
// sites-available/tls shows the shape), presenting a client certificate: the way an operator puts
// older gear behind a FreeRADIUS that speaks RadSec to Wisp.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./databases.ts";
import { freeUdpPort } from "./freeradius-lab.ts";

const STOCK_RADDB = "/etc/freeradius/3.0";

export interface FreeRadiusRadsecClientOptions {
  target: { host: string; port: number };
  /** PEM texts: the CA of Wisp's server certificate, the client certificate and its (clear) key. */
  ca: string;
  cert: string;
  key: string;
  /** The UDP clients' secret. */
  secret?: string;
}

export interface FreeRadiusRadsecClient {
  authPort: number;
  acctPort: number;
  secret: string;
  logFile: string;
  pid: number;
  stop(): Promise<void>;
}

function proxyConf(options: FreeRadiusRadsecClientOptions, dir: string): string {
  return `proxy server {
	default_fallback = no
}
home_server wisp {
	ipaddr = ${options.target.host}
	port = ${options.target.port}
	type = auth+acct
	secret = radsec
	proto = tcp
	status_check = none
	response_window = 10
	tls {
		private_key_file = ${dir}/nas.key
		certificate_file = ${dir}/nas.pem
		ca_file = ${dir}/ca.pem
		fragment_size = 8192
		cipher_list = "DEFAULT"
		tls_min_version = "1.2"
		tls_max_version = "1.3"
		connect_timeout = 10
	}
}
home_server_pool wisp {
	type = fail-over
	home_server = wisp
}
realm wisp {
	auth_pool = wisp
	acct_pool = wisp
	nostrip
}
`;
}

/** Every Access-Request and Accounting-Request goes to the realm `wisp`, untouched. */
function site(authPort: number, acctPort: number): string {
  return `server default {
listen {
	type = auth
	ipaddr = 127.0.0.1
	port = ${authPort}
}
listen {
	type = acct
	ipaddr = 127.0.0.1
	port = ${acctPort}
}
authorize {
	update control {
		&Proxy-To-Realm := "wisp"
	}
}
authenticate {
}
preacct {
	update control {
		&Proxy-To-Realm := "wisp"
	}
}
accounting {
}
}
`;
}

function configure(raddb: string, options: FreeRadiusRadsecClientOptions, ports: [number, number]): void {
  fs.cpSync(STOCK_RADDB, raddb, { recursive: true });
  const conf = path.join(raddb, "radiusd.conf");
  // Run as the test's user (FreeRADIUS would drop to freerad and not read the temp dir).
  fs.writeFileSync(conf, fs.readFileSync(conf, "utf8").replace(/^(\s*)(user|group) = freerad/gm, "$1# $2"));
  for (const name of fs.readdirSync(path.join(raddb, "sites-enabled")))
    fs.rmSync(path.join(raddb, "sites-enabled", name));
  for (const name of ["eap", "detail", "detail.log", "linelog", "radutmp", "sradutmp", "unix"])
    fs.rmSync(path.join(raddb, "mods-enabled", name), { force: true });
  const dir = path.dirname(raddb);
  fs.writeFileSync(path.join(dir, "ca.pem"), options.ca);
  fs.writeFileSync(path.join(dir, "nas.pem"), options.cert);
  fs.writeFileSync(path.join(dir, "nas.key"), options.key, { mode: 0o600 });
  fs.writeFileSync(path.join(raddb, "proxy.conf"), proxyConf(options, dir));
  fs.writeFileSync(
    path.join(raddb, "clients.conf"),
    `client localhost {\n\tipaddr = 127.0.0.1\n\tsecret = ${options.secret ?? "testing123"}\n}\n`,
  );
  fs.writeFileSync(path.join(raddb, "sites-enabled", "radsec-client"), site(...ports));
}

export async function startFreeRadiusRadsecClient(
  options: FreeRadiusRadsecClientOptions,
): Promise<FreeRadiusRadsecClient> {
  const dir = tempDir("freeradius-radsec");
  const raddb = path.join(dir, "raddb");
  const ports: [number, number] = [await freeUdpPort(), await freeUdpPort()];
  configure(raddb, options, ports);
  const logFile = path.join(dir, "radius.log");
  const child: ChildProcess = spawn("freeradius", ["-f", "-d", raddb, "-l", logFile], { stdio: "ignore" });
  const deadline = Date.now() + 15_000;
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "");
  while (!log().includes("Ready to process requests")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`FreeRADIUS (RadSec client) did not start:\n${log().slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    authPort: ports[0],
    acctPort: ports[1],
    secret: options.secret ?? "testing123",
    logFile,
    pid: child.pid!,
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

// The "original" FreeRADIUS an operator moves from: Debian's stock FreeRADIUS 3.2 configuration
// (default and inner-tunnel sites, stock modules) with rlm_sql on MySQL/MariaDB reading its
// clients from the nas table, changed only to run as a private lab: loopback ports of its own, logs
// in a temp folder, no privilege drop, no reject delay. Needs Debian's freeradius-mysql.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./databases.ts";
import { type FreeRadiusLab, freeUdpPort } from "./freeradius-lab.ts";
import { type MariaDbLab, RADIUS_PASSWORD, RADIUS_USER } from "./mariadb-lab.ts";

const STOCK_RADDB = "/etc/freeradius/3.0";
const MYSQL_DRIVER = "/usr/lib/freeradius/rlm_sql_mysql.so";

/** null when FreeRADIUS can read MySQL here, otherwise why not. */
export function freeradiusMysqlUnavailable(): string | null {
  return fs.existsSync(MYSQL_DRIVER) ? null : `${MYSQL_DRIVER} is missing (Debian package freeradius-mysql)`;
}

/** Edits a file's text in place. */
function edit(file: string, change: (text: string) => string): void {
  const before = fs.readFileSync(file, "utf8");
  const after = change(before);
  if (after === before) throw new Error(`freeradius-mysql: no change made to ${file}`);
  fs.writeFileSync(file, after);
}

/** The default site's listen sections: IPv4 on 127.0.0.1 and our ports; the IPv6 ones removed. */
function listenSections(text: string, authPort: number, acctPort: number): string {
  return text.replace(/^listen \{[\s\S]*?^\}/gm, (block) => {
    if (/^\s*ipv6addr\s*=/m.test(block)) return "";
    const port = /^\s*type = acct/m.test(block) ? acctPort : authPort;
    return block
      .replace(/^(\s*)ipaddr = \*/m, "$1ipaddr = 127.0.0.1")
      .replace(/^(\s*)port = 0/m, `$1port = ${port}`);
  });
}

function configure(raddb: string, state: string, mariadb: MariaDbLab, database: string, ports: number[]) {
  const [authPort, acctPort, innerPort] = ports as [number, number, number];
  edit(path.join(raddb, "radiusd.conf"), (t) =>
    t
      .replace(/^logdir = .*/m, `logdir = ${state}/log`)
      .replace(/^run_dir = .*/m, `run_dir = ${state}/run`)
      .replace(/^(\s*)user = freerad/m, "$1#user = freerad")
      .replace(/^(\s*)group = freerad/m, "$1#group = freerad")
      .replace(/^(\s*)reject_delay = 1$/m, "$1reject_delay = 0")
      .replace(/^proxy_requests\s*=.*/m, "proxy_requests = no"),
  );
  edit(path.join(raddb, "sites-available/default"), (t) => listenSections(t, authPort, acctPort));
  edit(path.join(raddb, "sites-available/inner-tunnel"), (t) =>
    t.replace("port = 18120", `port = ${innerPort}`),
  );
  edit(path.join(raddb, "mods-available/sql"), (t) =>
    t
      .replace('dialect = "sqlite"', 'dialect = "mysql"')
      .replace('driver = "rlm_sql_null"', 'driver = "rlm_sql_mysql"')
      // The stock mysql section asks for TLS with client certificates that do not exist.
      .replace(/(\tmysql \{[\s\S]*?)\t\ttls \{[\s\S]*?\n\t\t\}/, "$1")
      .replace('#\tserver = "localhost"', '\tserver = "127.0.0.1"')
      .replace("#\tport = 3306", `\tport = ${mariadb.port}`)
      .replace('#\tlogin = "radius"', `\tlogin = "${RADIUS_USER}"`)
      .replace('#\tpassword = "radpass"', `\tpassword = "${RADIUS_PASSWORD}"`)
      .replace('\tradius_db = "radius"', `\tradius_db = "${database}"`)
      .replace("#\tread_clients = yes", "\tread_clients = yes"),
  );
  fs.symlinkSync("../mods-available/sql", path.join(raddb, "mods-enabled/sql"));
  // Clients come from the nas table: the stock localhost client would clash with a 127.0.0.1 row.
  fs.writeFileSync(path.join(raddb, "clients.conf"), "# clients come from the nas table\n");
  fs.mkdirSync(path.join(state, "log"), { recursive: true });
  fs.mkdirSync(path.join(state, "run"), { recursive: true });
  execFileSync("chmod", ["-R", "a+rX", raddb]);
}

/** Starts the stock FreeRADIUS on a MariaDB database (its nas table is read now, at start). */
export async function startFreeRadiusOnMysql(mariadb: MariaDbLab, database: string): Promise<FreeRadiusLab> {
  const dir = tempDir("freeradius-mysql");
  const raddb = path.join(dir, "raddb");
  // verbatimSymlinks: the copy's sites-enabled and mods-enabled must point into the copy, not /etc.
  fs.cpSync(STOCK_RADDB, raddb, { recursive: true, verbatimSymlinks: true });
  const ports = [await freeUdpPort(), await freeUdpPort(), await freeUdpPort()];
  configure(raddb, dir, mariadb, database, ports);
  const logFile = path.join(dir, "radius.log");
  const child: ChildProcess = spawn("freeradius", ["-f", "-d", raddb, "-l", logFile], { stdio: "ignore" });
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(logFile) || !fs.readFileSync(logFile, "utf8").includes("Ready to process requests")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "(no log)";
      child.kill("SIGKILL");
      throw new Error(`FreeRADIUS on MySQL did not start:\n${log.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    authPort: ports[0]!,
    acctPort: ports[1]!,
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

// A private MariaDB server for import tests and benchmarks (Debian's mariadb-server): its own data
// directory in a temp folder, a socket there, a TCP port on 127.0.0.1, started once per test file
// and stopped by its PID. Holds a `radius` database with FreeRADIUS 3.2's own MySQL schema, and a
// `radius` user (password "radpass") as FreeRADIUS's sql module would log in.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import mysql from "mysql2/promise";
import { tempDir } from "./databases.ts";

const MARIADBD = "/usr/sbin/mariadbd";
export const FREERADIUS_MYSQL_SCHEMA = "/etc/freeradius/3.0/mods-config/sql/main/mysql/schema.sql";

export const RADIUS_USER = "radius";
export const RADIUS_PASSWORD = "radpass";

/** null when a MariaDB server can be started here, otherwise why not. */
export function mariadbUnavailable(): string | null {
  if (!fs.existsSync(MARIADBD)) return `${MARIADBD} is missing (Debian package mariadb-server)`;
  try {
    execFileSync("sh", ["-c", "command -v mariadb-install-db && command -v mariadb"], { stdio: "ignore" });
  } catch {
    return "mariadb-install-db or the mariadb client is missing (Debian packages mariadb-server, mariadb-client)";
  }
  if (!fs.existsSync(FREERADIUS_MYSQL_SCHEMA))
    return `${FREERADIUS_MYSQL_SCHEMA} is missing (Debian package freeradius)`;
  return null;
}

/** A TCP port nobody listens on right now, on 127.0.0.1. */
export async function freeTcpPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface MariaDbLab {
  port: number;
  socket: string;
  pid: number;
  /** mysql://radius:radpass@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  /** Runs SQL text (several statements, comments) with the mariadb client as root. */
  exec(sqlText: string, database?: string): void;
  /** A root connection to a database (multiple statements allowed). */
  connect(database?: string): Promise<mysql.Connection>;
  /** A fresh database with FreeRADIUS's schema, readable and writable by the radius user. */
  createRadiusDatabase(name: string): void;
  stop(): Promise<void>;
}

const SERVER_OPTIONS = [
  "--no-defaults",
  "--skip-name-resolve",
  "--skip-log-bin",
  "--innodb-buffer-pool-size=128M",
  "--innodb-log-file-size=64M",
  // A throwaway server: durability is not wanted, speed is.
  "--innodb-flush-log-at-trx-commit=0",
  "--innodb-doublewrite=0",
  "--sync-frm=0",
  "--character-set-server=utf8mb4",
  "--collation-server=utf8mb4_general_ci",
];

export async function startMariaDb(): Promise<MariaDbLab> {
  const dir = tempDir("mariadb");
  const data = path.join(dir, "data");
  const socket = path.join(dir, "mysqld.sock");
  const user = process.getuid?.() === 0 ? "root" : (process.env.USER ?? "mysql");
  execFileSync(
    "mariadb-install-db",
    [
      "--no-defaults",
      `--datadir=${data}`,
      `--user=${user}`,
      "--auth-root-authentication-method=normal",
      "--skip-test-db",
      "--innodb-flush-log-at-trx-commit=0",
    ],
    { stdio: "ignore" },
  );
  const port = await freeTcpPort();
  const log = path.join(dir, "server.log");
  const child: ChildProcess = spawn(
    MARIADBD,
    [
      ...SERVER_OPTIONS,
      `--datadir=${data}`,
      `--user=${user}`,
      `--socket=${socket}`,
      `--port=${port}`,
      "--bind-address=127.0.0.1",
      `--pid-file=${path.join(dir, "mariadbd.pid")}`,
      `--log-error=${log}`,
    ],
    { stdio: "ignore" },
  );
  const client = (args: string[], input?: string) =>
    execFileSync("mariadb", ["--no-defaults", `--socket=${socket}`, "-uroot", ...args], {
      input,
      stdio: ["pipe", "pipe", "pipe"],
    });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      client(["-e", "select 1"]);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "(no log)";
        throw new Error(`MariaDB did not start:\n${text.slice(-3000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  client(["-e", `create user '${RADIUS_USER}'@'%' identified by '${RADIUS_PASSWORD}'`]);
  const lab: MariaDbLab = {
    port,
    socket,
    pid: child.pid!,
    url: (database = "radius") => `mysql://${RADIUS_USER}:${RADIUS_PASSWORD}@127.0.0.1:${port}/${database}`,
    exec: (sqlText, database) => void client(database ? [database] : [], sqlText),
    connect: (database = "radius") =>
      mysql.createConnection({ socketPath: socket, user: "root", database, multipleStatements: true }),
    createRadiusDatabase(name) {
      client(["-e", `create database ${name}; grant all on ${name}.* to '${RADIUS_USER}'@'%'`]);
      client([name], fs.readFileSync(FREERADIUS_MYSQL_SCHEMA, "utf8"));
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return lab;
}

/** daloRADIUS 1.x's userinfo table (the columns an import reads, and some it leaves alone). */
export const DALORADIUS_USERINFO = `
CREATE TABLE userinfo (
  id int(11) unsigned NOT NULL auto_increment,
  username varchar(128) default NULL,
  firstname varchar(200) default NULL,
  lastname varchar(200) default NULL,
  email varchar(200) default NULL,
  department varchar(200) default NULL,
  company varchar(200) default NULL,
  workphone varchar(200) default NULL,
  homephone varchar(200) default NULL,
  mobilephone varchar(200) default NULL,
  address varchar(200) default NULL,
  city varchar(200) default NULL,
  state varchar(200) default NULL,
  country varchar(100) default NULL,
  zip varchar(200) default NULL,
  notes varchar(200) default NULL,
  changeuserinfo varchar(128) default NULL,
  portalloginpassword varchar(128) default '',
  enableportallogin int(32) default 0,
  creationdate datetime default '0000-00-00 00:00:00',
  creationby varchar(128) default NULL,
  updatedate datetime default '0000-00-00 00:00:00',
  updateby varchar(128) default NULL,
  PRIMARY KEY (id),
  KEY username (username)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
`;

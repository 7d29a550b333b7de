// A real OpenLDAP directory for the LDAP tests and bench/ldap.ts: Debian's slapd started as our own
// process on loopback ports, from a slapd.conf generated in a temp dir, with an mdb database seeded
// by slapadd (fast, before the server starts). ldap:// and ldaps:// on their own ports; the TLS
// certificate names 127.0.0.1 and localhost (or another name, to test a mismatch).
// Debian has no samba schema in /etc/ldap/schema: a minimal one with sambaNTPassword (samba's own
// OID) and AD's userAccountControl is defined here.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { tempDir } from "./databases.ts";
import { freePort } from "./processes.ts";

export const SUFFIX = "dc=wisp,dc=test";
export const ADMIN_DN = `cn=admin,${SUFFIX}`;
export const ADMIN_PASSWORD = "admin-Secret-1";
export const SERVICE_DN = `cn=radius,ou=services,${SUFFIX}`;
export const SERVICE_PASSWORD = "service-Secret-2";
export const PEOPLE = `ou=people,${SUFFIX}`;
export const GROUPS = `ou=groups,${SUFFIX}`;

const TEST_SCHEMA = `# Minimal samba and AD attributes (tests only)
attributetype ( 1.3.6.1.4.1.7165.2.1.25 NAME 'sambaNTPassword'
  EQUALITY caseIgnoreIA5Match SYNTAX 1.3.6.1.4.1.1466.115.121.1.26{32} SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.4.8 NAME 'userAccountControl'
  EQUALITY integerMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.7165.2.2.6 NAME 'sambaSamAccount' SUP top AUXILIARY
  MAY ( sambaNTPassword ) )
objectclass ( 1.3.6.1.4.1.99999.1.2.1 NAME 'wispTestAdUser' SUP top AUXILIARY
  MAY ( userAccountControl ) )
`;

export interface LdapUser {
  uid: string;
  password: string;
  cn?: string;
  mail?: string;
  /** Hex NT hash, stored as sambaNTPassword. */
  ntHash?: string;
  userAccountControl?: number;
}

export interface LdapGroup {
  cn: string;
  members: string[];
}

export interface SlapdOptions {
  users?: LdapUser[];
  groups?: LdapGroup[];
  /** Extra LDIF appended to the seed (referrals...). */
  extraLdif?: string;
  /** The name the TLS certificate carries (default 127.0.0.1 and localhost). */
  certName?: string;
  /** A generated LDIF file to load instead of `users` (the 10,000-user test). */
  ldifFile?: string;
}

export interface Slapd {
  url: string;
  ldapsUrl: string;
  port: number;
  ldapsPort: number;
  caPem: string;
  dir: string;
  stop(): Promise<void>;
  /** Starts it again on the same ports (after stop()). */
  start(): Promise<void>;
}

export const userDn = (uid: string) => `uid=${uid},${PEOPLE}`;

export function userLdif(u: LdapUser): string {
  const classes = ["inetOrgPerson"];
  if (u.ntHash) classes.push("sambaSamAccount");
  if (u.userAccountControl !== undefined) classes.push("wispTestAdUser");
  const lines = [
    `dn: ${userDn(u.uid)}`,
    ...classes.map((c) => `objectClass: ${c}`),
    `uid: ${u.uid}`,
    `cn: ${u.cn ?? u.uid}`,
    `sn: ${u.uid}`,
    `userPassword: ${u.password}`,
  ];
  if (u.mail) lines.push(`mail: ${u.mail}`);
  if (u.ntHash) lines.push(`sambaNTPassword: ${u.ntHash}`);
  if (u.userAccountControl !== undefined) lines.push(`userAccountControl: ${u.userAccountControl}`);
  return `${lines.join("\n")}\n\n`;
}

function baseLdif(options: SlapdOptions): string {
  let ldif = `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: wisp\no: Wisp test\n\n`;
  for (const ou of ["people", "groups", "services"]) {
    ldif += `dn: ou=${ou},${SUFFIX}\nobjectClass: organizationalUnit\nou: ${ou}\n\n`;
  }
  ldif += `dn: ${SERVICE_DN}\nobjectClass: person\ncn: radius\nsn: radius\nuserPassword: ${SERVICE_PASSWORD}\n\n`;
  for (const u of options.users ?? []) ldif += userLdif(u);
  for (const g of options.groups ?? []) {
    ldif += `dn: cn=${g.cn},${GROUPS}\nobjectClass: groupOfNames\ncn: ${g.cn}\n`;
    for (const m of g.members.length ? g.members : [ADMIN_DN]) ldif += `member: ${m}\n`;
    ldif += "\n";
  }
  return ldif + (options.extraLdif ?? "");
}

function makeCert(dir: string, name: string | undefined): void {
  const run = (args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key"]);
  run([
    "req",
    "-x509",
    "-new",
    "-key",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "3",
    "-subj",
    "/CN=LDAP test CA",
  ]);
  run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "server.key"]);
  const cn = name ?? "127.0.0.1";
  run(["req", "-new", "-key", "server.key", "-out", "server.csr", "-subj", `/CN=${cn}`]);
  const san = name ? `DNS:${name}` : "IP:127.0.0.1,DNS:localhost";
  fs.writeFileSync(path.join(dir, "server.ext"), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  run([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  ]);
  // slapd runs as us; the key must be readable by it only.
  fs.chmodSync(path.join(dir, "server.key"), 0o600);
}

function slapdConf(dir: string): string {
  return `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include ${dir}/test.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile ${dir}/slapd.pid
TLSCACertificateFile ${dir}/ca.pem
TLSCertificateFile ${dir}/server.pem
TLSCertificateKeyFile ${dir}/server.key
sizelimit unlimited
access to attrs=userPassword by anonymous auth by * none
access to attrs=sambaNTPassword by dn.exact="${SERVICE_DN}" read by * none
access to * by users read by anonymous auth
database mdb
maxsize 1073741824
directory ${dir}/db
suffix "${SUFFIX}"
rootdn "${ADMIN_DN}"
rootpw ${ADMIN_PASSWORD}
index uid,cn,mail eq
index member eq
index objectClass eq
`;
}

function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve();
      });
      socket.once("error", () => {
        socket.destroy();
        if (Date.now() > until) reject(new Error(`slapd did not listen on ${port}`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

export async function startSlapd(options: SlapdOptions = {}): Promise<Slapd> {
  const dir = tempDir("slapd");
  fs.mkdirSync(path.join(dir, "db"));
  fs.writeFileSync(path.join(dir, "test.schema"), TEST_SCHEMA);
  makeCert(dir, options.certName);
  const conf = path.join(dir, "slapd.conf");
  fs.writeFileSync(conf, slapdConf(dir));
  const seed = path.join(dir, "seed.ldif");
  fs.writeFileSync(seed, baseLdif(options));
  execFileSync("slapadd", ["-q", "-f", conf, "-l", seed], { stdio: ["ignore", "ignore", "pipe"] });
  if (options.ldifFile) {
    execFileSync("slapadd", ["-q", "-f", conf, "-l", options.ldifFile], {
      stdio: ["ignore", "ignore", "pipe"],
    });
  }
  const port = await freePort();
  const ldapsPort = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const urls = `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${ldapsPort}/`;
    // -d 0: stays in the foreground (its pid is ours to stop), logs nothing.
    child = spawn("slapd", ["-f", conf, "-h", urls, "-d", "0"], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    const exited = new Promise<never>((_, reject) =>
      child?.once("exit", (code) => reject(new Error(`slapd exited (${code}): ${stderr.slice(-500)}`))),
    );
    await Promise.race([waitForPort(port, 10_000), exited]);
    await waitForPort(ldapsPort, 10_000);
  };
  await start();
  return {
    url: `ldap://127.0.0.1:${port}`,
    ldapsUrl: `ldaps://127.0.0.1:${ldapsPort}`,
    port,
    ldapsPort,
    caPem: fs.readFileSync(path.join(dir, "ca.pem"), "utf8"),
    dir,
    start,
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const gone = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGTERM");
      const timer = setTimeout(() => running.kill("SIGKILL"), 5000);
      await gone;
      clearTimeout(timer);
    },
  };
}

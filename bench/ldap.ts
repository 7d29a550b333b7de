// LDAP-backed PAP logins per second (issue 30 point 6), all in one run against one slapd:
//   - Wisp, local users (the baseline: no directory involved),
//   - Wisp, directory users with the group cache (group_cache_seconds 300),
//   - Wisp, directory users without it (group_cache_seconds 0: a group search per login),
//   - FreeRADIUS 3.2 rlm_ldap (user search + bind as the user, a group lookup per request), the anchor.
// Load: radclient -p <parallel> over a file of Access-Requests cycling through the users, after a
// warm-up pass (Wisp writes a shadow user on first login). Run: node --import tsx bench/ldap.ts
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freeUdpPort } from "../test/support/freeradius-lab.ts";
import { startTestServer } from "../test/support/server.ts";
import {
  GROUPS,
  PEOPLE,
  SERVICE_DN,
  SERVICE_PASSWORD,
  startSlapd,
  userDn,
  userLdif,
} from "../test/support/slapd.ts";
import { runRadclient, SECRET } from "./radius-load.ts";
import { BenchError, stopChild, track } from "./radius-servers.ts";

const USERS = Number(process.env.LDAP_BENCH_USERS ?? 500);
const PACKETS = Number(process.env.LDAP_BENCH_PACKETS ?? 4000);
const PARALLEL = Number(process.env.LDAP_BENCH_PARALLEL ?? 32);
const name = (prefix: string, n: number) => `${prefix}${String(n).padStart(5, "0")}`;
const password = (n: number) => `Pw-${n}-x`;

function requestFile(dir: string, prefix: string): string {
  const lines: string[] = [];
  for (let k = 0; k < USERS; k++) {
    lines.push(
      `User-Name = "${name(prefix, k)}"\nUser-Password = "${password(k)}"\nNAS-IP-Address = 127.0.0.1\n`,
    );
  }
  const file = path.join(dir, `${prefix}.txt`);
  fs.writeFileSync(file, lines.join("\n"));
  return file;
}

/** FreeRADIUS 3.2 with rlm_ldap only: search as the service, bind as the user, groups per request. */
async function startFreeRadiusLdap(dir: string, ldapPort: number) {
  const raddb = path.join(dir, "raddb");
  fs.cpSync("/etc/freeradius/3.0", raddb, { recursive: true, dereference: false });
  for (const site of fs.readdirSync(path.join(raddb, "sites-enabled")))
    fs.rmSync(path.join(raddb, "sites-enabled", site));
  const port = await freeUdpPort();
  fs.writeFileSync(
    path.join(raddb, "sites-enabled", "ldap"),
    `server ldap {
	listen {
		type = auth
		ipaddr = 127.0.0.1
		port = ${port}
	}
	authorize {
		ldap
		if ((ok || updated) && User-Password) {
			update control {
				&Auth-Type := ldap
			}
		}
	}
	authenticate {
		Auth-Type LDAP {
			ldap
		}
	}
}
`,
  );
  // No EAP here (its stock config wants the inner-tunnel site): PAP only.
  fs.rmSync(path.join(raddb, "mods-enabled", "eap"), { force: true });
  fs.rmSync(path.join(raddb, "mods-enabled", "ldap"), { force: true });
  fs.writeFileSync(
    path.join(raddb, "mods-enabled", "ldap"),
    `ldap {
	server = "127.0.0.1"
	port = ${ldapPort}
	identity = "${SERVICE_DN}"
	password = ${SERVICE_PASSWORD}
	base_dn = "${PEOPLE}"
	user {
		base_dn = "${PEOPLE}"
		filter = "(&(objectClass=inetOrgPerson)(uid=%{%{Stripped-User-Name}:-%{User-Name}}))"
		scope = "sub"
	}
	group {
		base_dn = "${GROUPS}"
		filter = "(objectClass=groupOfNames)"
		scope = "sub"
		name_attribute = cn
		membership_filter = "(member=%{control:Ldap-UserDn})"
		cacheable_name = "yes"
		cacheable_dn = "no"
	}
	options {
		chase_referrals = no
		res_timeout = 3
		srv_timelimit = 3
		net_timeout = 2
	}
	pool {
		start = 8
		min = 8
		max = 32
		spare = 8
		uses = 0
		retry_delay = 1
		lifetime = 0
		idle_timeout = 60
	}
}
`,
  );
  fs.writeFileSync(
    path.join(raddb, "clients.conf"),
    `client bench {\n\tipaddr = 127.0.0.1\n\tsecret = ${SECRET}\n}\n`,
  );
  for (const d of ["log", "run"]) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const conf = path.join(raddb, "radiusd.conf");
  fs.writeFileSync(
    conf,
    fs
      .readFileSync(conf, "utf8")
      .replace(/^logdir = .*/m, `logdir = ${dir}/log`)
      .replace(/^run_dir = .*/m, `run_dir = ${dir}/run`)
      .replace(/^(\s*)(user|group) = freerad/gm, "$1#$2 = freerad")
      .replace(/^(\s*)reject_delay = 1$/m, "$1reject_delay = 0")
      .replace(/^(\s*)proxy_requests\s*=.*/m, "$1proxy_requests = no"),
  );
  const logFile = path.join(dir, "radius.log");
  const child = track(spawn("freeradius", ["-f", "-d", raddb, "-l", logFile], { stdio: "ignore" }));
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "");
  const deadline = Date.now() + 15_000;
  while (!log().includes("Ready to process requests")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stopChild(child);
      throw new BenchError(`FreeRADIUS (ldap) did not start:\n${log().slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, stop: () => stopChild(child) };
}

async function measure(label: string, port: number, file: string) {
  const repeat = Math.max(1, Math.round(PACKETS / USERS));
  const base = { port, kind: "auth" as const, file, parallel: PARALLEL, timeoutSeconds: 5 };
  await runRadclient({ ...base, repeat: 1, expected: USERS }); // warm-up: pools, shadows, caches
  const run = await runRadclient({ ...base, repeat, expected: USERS * repeat });
  const rate = run.accepted / run.seconds;
  return { label, rate, accepted: run.accepted, rejected: run.rejected, lost: run.lost };
}

async function main() {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "wisp-ldap-bench-"));
  let ldif = "";
  for (let n = 0; n < USERS; n++) ldif += userLdif({ uid: name("ldap", n), password: password(n) });
  ldif += `dn: cn=wifi,${GROUPS}\nobjectClass: groupOfNames\ncn: wifi\n`;
  for (let n = 0; n < USERS; n++) ldif += `member: ${userDn(name("ldap", n))}\n`;
  fs.writeFileSync(path.join(dir, "users.ldif"), `${ldif}\n`);
  const slapd = await startSlapd({ ldifFile: path.join(dir, "users.ldif") });
  const authPort = await freeUdpPort();
  const server = await startTestServer({
    env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(authPort), RADIUS_ACCT_PORT: "0", WORKER: "0" },
  });
  const freeradius = await startFreeRadiusLdap(path.join(dir, "fr"), slapd.port);
  const results = [];
  try {
    const accountId = (await server.account("default")).id;
    await server.core.networks.create(accountId, { name: "bench", nas_ip: "127.0.0.1", secret: SECRET });
    await server.core.groups.create(accountId, { name: "wifi-users" });
    for (let n = 0; n < USERS; n++)
      await server.core.users.create(accountId, { username: name("local", n), password: password(n) });
    await server.core.directories.create(accountId, {
      name: "bench",
      servers: [slapd.url],
      bind_dn: SERVICE_DN,
      bind_password: SERVICE_PASSWORD,
      user_base: PEOPLE,
      user_filter: "(objectClass=inetOrgPerson)",
      group_base: GROUPS,
      group_filter: "(objectClass=groupOfNames)",
      group_mappings: [{ directory_group: "wifi", group: "wifi-users" }],
      group_cache_seconds: 300,
      pool_size: 8,
    });
    const localFile = requestFile(dir, "local");
    const ldapFile = requestFile(dir, "ldap");
    results.push(await measure("Wisp, local users", authPort, localFile));
    results.push(await measure("Wisp, LDAP users, group cache 300 s", authPort, ldapFile));
    await server.core.directories.update(accountId, "bench", { group_cache_seconds: 0 });
    results.push(await measure("Wisp, LDAP users, no group cache", authPort, ldapFile));
    results.push(await measure("FreeRADIUS 3.2 rlm_ldap (anchor)", freeradius.port, ldapFile));
  } finally {
    await freeradius.stop();
    await server.stop();
    await slapd.stop();
  }
  const anchor = results.at(-1)!.rate;
  console.log(`\nLDAP PAP logins/s: ${USERS} users, ${PACKETS} requests per run, radclient -p ${PARALLEL}`);
  for (const r of results) {
    const line = `${r.label.padEnd(40)} ${r.rate.toFixed(0).padStart(7)}/s  ${(r.rate / anchor).toFixed(2)}x rlm_ldap`;
    console.log(`${line}  (accepted ${r.accepted}, rejected ${r.rejected}, lost ${r.lost})`);
  }
}

await main();

// FreeRADIUS 3.2 in its fastest setup for the EAP benchmark (issue 32 point 1): the bench users
// in rlm_files (mods-config/files/authorize, read into memory at start), rlm_eap with the same
// eap.conf, certificate, fragment size and TLS versions as the SQL setup (deploy/freeradius/), and
// no logging modules (no sql, detail, linelog or auth log in any section). What an operator who
// wants the cheapest FreeRADIUS would run; it records nothing per attempt.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { freeUdpPort } from "../test/support/freeradius-lab.ts";
import { radiusBenchUser, SECRET, USERS } from "./radius-load.ts";
import {
  BenchError,
  makeTempDir,
  type RadiusTarget,
  ROOT,
  removeTempDir,
  stopChild,
  track,
} from "./radius-servers.ts";

const STOCK_RADDB = "/etc/freeradius/3.0";

export interface EapFiles {
  cert: string;
  key: string;
  ca: string;
  fragmentSize: number;
}

/** What both sites authorize and authenticate with: users from `files`, no logging modules. */
const MODULES = `		chap
		mschap
		eap {
			ok = return
		}
		files
		expiration
		pap
	}
	authenticate {
		Auth-Type PAP {
			pap
		}
		Auth-Type CHAP {
			chap
		}
		Auth-Type MS-CHAP {
			mschap
		}
		eap
	}
`;

/** The outer site: EAP, or PAP/CHAP/MS-CHAP for a non-EAP request, users from `files`. */
function outerSite(port: number): string {
  return `server wisp {
	listen {
		type = auth
		ipaddr = 127.0.0.1
		port = ${port}
	}
	authorize {
		preprocess
${MODULES}	post-auth {
		# The inner reply items, kept by wisp-inner in the session-state (as the SQL setup).
		update {
			&reply: += &session-state:
		}
		Post-Auth-Type REJECT {
			attr_filter.access_reject
		}
	}
}
`;
}

/** The inner tunnel of PEAP and TTLS (eap.conf names it wisp-inner): the same modules, no listener. */
const INNER_SITE = `server wisp-inner {
	authorize {
${MODULES}	post-auth {
		update reply {
			&User-Name !* ANY
			&Message-Authenticator !* ANY
			&EAP-Message !* ANY
			&Proxy-State !* ANY
			&MS-MPPE-Encryption-Types !* ANY
			&MS-MPPE-Encryption-Policy !* ANY
			&MS-MPPE-Send-Key !* ANY
			&MS-MPPE-Recv-Key !* ANY
		}
		update {
			&outer.session-state: += &reply:
		}
		Post-Auth-Type REJECT {
			attr_filter.access_reject
		}
	}
}
`;

/** The bench users as rlm_files entries: password and their own Session-Timeout reply item. */
function usersFile(): string {
  const entries: string[] = [];
  for (let n = 1; n <= USERS; n++) {
    const user = radiusBenchUser(n);
    entries.push(
      `${user.username} Cleartext-Password := "${user.password}"\n\tSession-Timeout := ${user.sessionTimeout}\n`,
    );
  }
  return entries.join("\n");
}

function eapModule(files: EapFiles): string {
  const template = fs.readFileSync(path.join(ROOT, "deploy", "freeradius", "eap.conf"), "utf8");
  return template
    .replace("@DEFAULT_EAP_TYPE@", "peap")
    .replace("@CERT_FILE@", files.cert)
    .replace("@KEY_FILE@", files.key)
    .replace("@CA_FILE@", files.ca)
    .replace("@FRAGMENT_SIZE@", String(files.fragmentSize))
    .replace("@TLS_MAX_VERSION@", "1.2");
}

/** Writes the raddb: stock modules (instantiated, not called), the two sites, users, one client. */
function writeRaddb(raddb: string, state: string, port: number, files: EapFiles): void {
  fs.cpSync(STOCK_RADDB, raddb, { recursive: true, dereference: false });
  for (const site of fs.readdirSync(path.join(raddb, "sites-enabled"))) {
    fs.rmSync(path.join(raddb, "sites-enabled", site));
  }
  fs.writeFileSync(path.join(raddb, "sites-enabled", "wisp"), outerSite(port));
  fs.writeFileSync(path.join(raddb, "sites-enabled", "wisp-inner"), INNER_SITE);
  fs.rmSync(path.join(raddb, "mods-enabled", "eap"), { force: true });
  fs.writeFileSync(path.join(raddb, "mods-enabled", "eap"), eapModule(files));
  fs.writeFileSync(path.join(raddb, "mods-config", "files", "authorize"), usersFile());
  fs.writeFileSync(
    path.join(raddb, "clients.conf"),
    `client bench {\n\tipaddr = 127.0.0.1\n\tsecret = ${SECRET}\n}\n`,
  );
  fs.mkdirSync(path.join(state, "log"), { recursive: true });
  fs.mkdirSync(path.join(state, "run"), { recursive: true });
  const conf = path.join(raddb, "radiusd.conf");
  // As configure.sh --lab: no privilege drop, no reject delay (Wisp answers rejects at once).
  const text = fs
    .readFileSync(conf, "utf8")
    .replace(/^logdir = .*/m, `logdir = ${state}/log`)
    .replace(/^run_dir = .*/m, `run_dir = ${state}/run`)
    .replace(/^(\s*)(user|group) = freerad/gm, "$1#$2 = freerad")
    .replace(/^(\s*)reject_delay = 1$/m, "$1reject_delay = 0")
    .replace(/^(\s*)proxy_requests\s*=.*/m, "$1proxy_requests = no");
  if (!/^\s*reject_delay = 0\s*$/m.test(text)) throw new BenchError("could not set reject_delay = 0");
  fs.writeFileSync(conf, text);
}

export async function startFreeRadiusFiles(parentDir: string, files: EapFiles): Promise<RadiusTarget> {
  const dir = makeTempDir(parentDir, "fr-files");
  const raddb = path.join(dir, "raddb");
  const authPort = await freeUdpPort();
  writeRaddb(raddb, dir, authPort, files);
  const logFile = path.join(dir, "radius.log");
  const child = track(spawn("freeradius", ["-f", "-d", raddb, "-l", logFile], { stdio: "ignore" }));
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "");
  const deadline = Date.now() + 15_000;
  while (!log().includes("Ready to process requests")) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stopChild(child);
      throw new BenchError(`FreeRADIUS (files) did not start:\n${log().slice(-3000) || "(no log)"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    id: "fr-files",
    name: "FreeRADIUS rlm_eap + rlm_files, no logging",
    authPort,
    acctPort: 0,
    recordsAttempts: false,
    pid: child.pid ?? 0,
    async stop() {
      await stopChild(child);
      removeTempDir(dir);
    },
  };
}

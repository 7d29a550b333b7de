// Wisp's certificates where they are used: a private FreeRADIUS 3.2 runs PEAP and EAP-TLS with
// Wisp's generated server certificate and CA, and eapol_test (wpa_supplicant) checks the server
// against the CA and domain_match and logs in with a PKCS#12 from `issue`. This proves the files
// independently of Wisp's own EAP engine: EKU, SAN name, key and PKCS#12 as real supplicants need.
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { tempDir, withDatabase } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";

const STOCK_RADDB = "/etc/freeradius/3.0";
const SERVER_NAME = "radius.lab.example";
const P12_PASSWORD = "p12 password";
const SECRET = "testing123"; // the stock clients.conf's secret for localhost

function missing(): string | false {
  for (const command of ["freeradius", "eapol_test"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    } catch {
      const reason = `${command} is not installed (Debian packages freeradius, eapoltest)`;
      console.log(`# skipping EAP interop with Wisp's certificates: ${reason}`);
      return reason;
    }
  }
  return fs.existsSync(STOCK_RADDB) ? false : `${STOCK_RADDB} is missing`;
}

/** eap-lab.md's recipe: PEAP default, TLS 1.2, fragment 1024, check_cert_cn, one loopback site. */
function configure(raddb: string, dir: string, port: number): void {
  fs.cpSync(STOCK_RADDB, raddb, { recursive: true });
  const conf = path.join(raddb, "radiusd.conf");
  // Run as the test's user: FreeRADIUS would drop to freerad and fail to read the temp dir (trap 4).
  fs.writeFileSync(conf, fs.readFileSync(conf, "utf8").replace(/^(\s*)(user|group) = freerad/gm, "$1# $2"));
  for (const name of fs.readdirSync(path.join(raddb, "sites-enabled")))
    fs.rmSync(path.join(raddb, "sites-enabled", name));
  for (const name of ["eap", "detail", "detail.log", "linelog", "radutmp", "sradutmp", "unix"]) {
    fs.rmSync(path.join(raddb, "mods-enabled", name), { force: true });
  }
  fs.writeFileSync(
    path.join(raddb, "mods-enabled", "eap"),
    `eap {
  default_eap_type = peap
  timer_expire = 60
  ignore_unknown_eap_types = no
  cisco_accounting_username_bug = no
  max_sessions = \${max_requests}
  tls-config tls-common {
    private_key_file = ${dir}/server.key
    certificate_file = ${dir}/server.pem
    ca_file = ${dir}/ca.pem
    fragment_size = 1024
    include_length = yes
    cipher_list = "DEFAULT"
    tls_min_version = "1.2"
    tls_max_version = "1.2"
    check_cert_cn = %{User-Name}
    cache {
      enable = no
    }
    ocsp {
      enable = no
    }
  }
  tls {
    tls = tls-common
  }
  peap {
    tls = tls-common
    default_eap_type = mschapv2
    virtual_server = "inner-tunnel"
  }
  mschapv2 {
  }
}
`,
  );
  const site = (name: string, listen: string, inner: string) =>
    `server ${name} {\n${listen}  authorize {\n    eap {\n      ok = return\n    }\n    files\n${inner}  }\n` +
    `  authenticate {\n    Auth-Type MS-CHAP {\n      mschap\n    }\n    eap\n  }\n  post-auth {\n  }\n}\n`;
  fs.writeFileSync(
    path.join(raddb, "sites-enabled", "lab"),
    site("default", `  listen {\n    type = auth\n    ipaddr = 127.0.0.1\n    port = ${port}\n  }\n`, "") +
      site("inner-tunnel", "", "    mschap\n"),
  );
  fs.writeFileSync(
    path.join(raddb, "mods-config", "files", "authorize"),
    'alice Cleartext-Password := "alice-pw"\n',
  );
}

function eapolTest(
  dir: string,
  port: number,
  name: string,
  network: string,
): Promise<{ code: number; output: string }> {
  const file = path.join(dir, `${name}.conf`);
  fs.writeFileSync(file, `network={\n  key_mgmt=WPA-EAP\n${network}}\n`);
  const args = ["-c", file, "-a", "127.0.0.1", "-p", String(port), "-s", SECRET, "-t", "10", "-n"];
  return new Promise((resolve) => {
    execFile("eapol_test", args, { maxBuffer: 4 << 20 }, (error, stdout) => {
      resolve({ code: error ? Number(error.code ?? -1) : 0, output: stdout });
    });
  });
}

const requests = (output: string) => output.split("code=1 (Access-Request)").length - 1;

describe("Wisp's certificates with FreeRADIUS and eapol_test", { skip: missing() }, () => {
  let dir = "";
  let log = "";
  let port = 0;
  let server: ReturnType<typeof spawn> | undefined;

  before(async () => {
    dir = tempDir("certs-eapol");
    log = path.join(dir, "radius.log");
    await withDatabase("sqlite", async (database) => {
      const core = createCore(database, {
        publicUrl: "http://localhost",
        webhookSecretKey: Buffer.alloc(32, 3).toString("base64"),
        eapServerName: SERVER_NAME,
      });
      const credentials = await core.certs.serverCredentials();
      fs.writeFileSync(path.join(dir, "server.pem"), credentials.cert);
      fs.writeFileSync(path.join(dir, "server.key"), credentials.key, { mode: 0o600 });
      fs.writeFileSync(path.join(dir, "ca.pem"), credentials.ca.join(""));
      const account = await core.accounts.resolve(undefined);
      await core.users.create(account.id, { username: "alice", password: "alice-pw" });
      const issued = await core.certs.issue(account.id, { username: "alice", password: P12_PASSWORD });
      fs.writeFileSync(path.join(dir, "alice.p12"), issued.pkcs12, { mode: 0o600 });
    });
    port = await freeUdpPort();
    const raddb = path.join(dir, "raddb");
    configure(raddb, dir, port);
    server = spawn("freeradius", ["-f", "-d", raddb, "-l", log], { stdio: "ignore" });
    const deadline = Date.now() + 15_000;
    while (!fs.existsSync(log) || !fs.readFileSync(log, "utf8").includes("Ready to process requests")) {
      if (server.exitCode !== null || Date.now() > deadline) {
        throw new Error(
          `FreeRADIUS did not start: ${fs.existsSync(log) ? fs.readFileSync(log, "utf8").slice(-2000) : "no log"}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("PEAP and EAP-TLS succeed; a wrong server name or an identity not in the certificate fails", async () => {
    const trust = `  ca_cert="${dir}/ca.pem"\n`;
    const peap =
      '  eap=PEAP\n  identity="alice"\n  anonymous_identity="anonymous"\n  password="alice-pw"\n  phase2="autheap=MSCHAPV2"\n';
    const tlsFor = (user: string) =>
      `  eap=TLS\n  identity="${user}"\n  private_key="${dir}/alice.p12"\n  private_key_passwd="${P12_PASSWORD}"\n`;
    const [peapOk, wrongName, tlsOk, tlsBob] = await Promise.all([
      eapolTest(dir, port, "peap", `${peap}${trust}  domain_match="${SERVER_NAME}"\n`),
      eapolTest(dir, port, "wrong-name", `${peap}${trust}  domain_match="other.example"\n`),
      eapolTest(dir, port, "tls", `${tlsFor("alice")}${trust}  domain_match="${SERVER_NAME}"\n`),
      eapolTest(dir, port, "tls-bob", `${tlsFor("bob")}${trust}  domain_match="${SERVER_NAME}"\n`),
    ]);
    assert.equal(peapOk.code, 0, peapOk.output.slice(-3000));
    assert.match(peapOk.output, /CTRL-EVENT-EAP-PEER-ALT depth=0 DNS:radius\.lab\.example/);
    assert.equal(tlsOk.code, 0, tlsOk.output.slice(-3000));
    assert.notEqual(wrongName.code, 0, "domain_match refuses another name");
    assert.match(wrongName.output, /FAILURE\s*$/);
    assert.notEqual(tlsBob.code, 0, "check_cert_cn refuses an identity that is not the CN");
    assert.match(
      fs.readFileSync(log, "utf8"),
      /Certificate CN \(alice\) does not match specified value \(bob\)/,
    );
    // P-256: PEAP in 9 round trips and EAP-TLS in 6 here, against 10 and 8 for eap-lab.md's RSA 2048.
    console.log(
      `# Access-Requests per login: PEAP ${requests(peapOk.output)}, EAP-TLS ${requests(tlsOk.output)}`,
    );
  });
});

// MAC normalisation side by side with FreeRADIUS 3.2's rewrite_calling_station_id policy
// (raddb/policy.d/canonicalization), on the same packets: a private FreeRADIUS runs the stock
// policy and answers with the Calling-Station-Id it rewrote; Wisp, with MAB on and one device
// registered, gets the same packet (User-Name and Calling-Station-Id the text under test, the
// MAC as password). Wisp must take exactly the texts FreeRADIUS rewrites, as the same address.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { canonicalMac, rfc3580Mac } from "../../src/core/devices/mac.ts";
import { tempDir } from "../support/databases.ts";
import { freeradiusUnavailable, freeUdpPort, radclient } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "testing123";
const DEVICE = "aa:bb:cc:dd:ee:ff";

/** Texts gateways send, and texts that only look like MACs. */
const CASES = [
  "aabbccddeeff",
  "AABBCCDDEEFF",
  "AaBbCcDdEeFf",
  "AA-BB-CC-DD-EE-FF",
  "aa:bb:cc:dd:ee:ff",
  "aabb.ccdd.eeff",
  "AABB.CCDD.EEFF",
  "aabbcc-ddeeff",
  "aabbcc:ddeeff",
  "aa bb cc dd ee ff",
  "aa:bb-cc.dd ee/ff",
  "aa:bb:cc:dd:ee",
  "aa:bb:cc:dd:ee:ff:00",
  "aa::bb:cc:dd:ee:ff",
  "a:b:c:d:e:f",
  "aabbccddeef",
  "aabbccddeeffa",
  "gg:bb:cc:dd:ee:ff",
  " aabbccddeeff",
  "aabbccddeeff ",
  "aa:bb:cc:dd:ee:ff:SSID",
  "aabbccddeeffX",
];

interface Lab {
  port: number;
  stop(): Promise<void>;
}

/** A FreeRADIUS whose only site applies rewrite_calling_station_id and echoes the result. */
async function startPolicyLab(): Promise<Lab> {
  const dir = tempDir("freeradius-mab");
  const raddb = path.join(dir, "raddb");
  fs.cpSync("/etc/freeradius/3.0", raddb, { recursive: true });
  for (const f of fs.readdirSync(path.join(raddb, "sites-enabled")))
    fs.rmSync(path.join(raddb, "sites-enabled", f));
  fs.rmSync(path.join(raddb, "mods-enabled", "eap"), { force: true });
  const port = await freeUdpPort();
  fs.writeFileSync(
    path.join(raddb, "sites-enabled", "mab-policy"),
    `server mab-policy {
  listen {
    type = auth
    ipaddr = 127.0.0.1
    port = ${port}
  }
  authorize {
    rewrite_calling_station_id
    update control {
      &Auth-Type := Accept
    }
    update reply {
      &Reply-Message := "%{Calling-Station-Id}"
    }
  }
  authenticate {
  }
}
`,
  );
  fs.mkdirSync(path.join(dir, "log"));
  fs.mkdirSync(path.join(dir, "run"));
  const conf = path.join(raddb, "radiusd.conf");
  fs.writeFileSync(
    conf,
    fs
      .readFileSync(conf, "utf8")
      .replace(/^logdir = .*$/m, `logdir = ${dir}/log`)
      .replace(/^run_dir = .*$/m, `run_dir = ${dir}/run`)
      .replace(/^(\s*)user = freerad$/m, "$1#user = freerad")
      .replace(/^(\s*)group = freerad$/m, "$1#group = freerad")
      .replace(/^(\s*)reject_delay = 1$/m, "$1reject_delay = 0")
      .replace(/^proxy_requests\s*=.*$/m, "proxy_requests = no"),
  );
  execFileSync("chmod", ["-R", "a+rX", raddb]);
  const logFile = path.join(dir, "radius.log");
  const child: ChildProcess = spawn("freeradius", ["-f", "-d", raddb, "-l", logFile], { stdio: "ignore" });
  const deadline = Date.now() + 15_000;
  while (!fs.existsSync(logFile) || !fs.readFileSync(logFile, "utf8").includes("Ready to process requests")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(
        `FreeRADIUS did not start: ${fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8").slice(-2000) : ""}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
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

describe("MAC normalisation beside FreeRADIUS 3.2's rewrite_calling_station_id", {
  skip: freeradiusUnavailable() ?? false,
}, () => {
  let lab: Lab;
  let server: TestServer;
  let wispPort: number;

  before(async () => {
    lab = await startPolicyLab();
    wispPort = await freeUdpPort();
    server = await startTestServer({
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(wispPort), RADIUS_ACCT_PORT: "0" },
    });
    const accountId = (await server.account("default")).id;
    await server.core.networks.create(accountId, {
      name: "MAB",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      mab_mode: "devices",
      mab_password: "mac",
    });
    await server.core.devices.create(accountId, { mac: DEVICE });
  });
  after(async () => {
    await server?.stop();
    await lab?.stop();
  });

  test("the same packets: Wisp takes exactly what FreeRADIUS rewrites, as the same address", async () => {
    const rows: string[] = [];
    for (const text of CASES) {
      const packet: [string, string][] = [
        ["User-Name", text],
        ["User-Password", text],
        ["Calling-Station-Id", text],
      ];
      const [free, wisp] = await Promise.all([
        radclient(lab.port, "auth", SECRET, packet),
        radclient(wispPort, "auth", SECRET, packet),
      ]);
      assert.equal(free.code, "Access-Accept", `FreeRADIUS answered ${text}`);
      const rewritten = free.attributes.find(([n]) => n === "Reply-Message")?.[1] ?? "";
      const freeradiusTakes = rewritten !== text || /^[0-9A-F]{2}(-[0-9A-F]{2}){5}$/.test(text);
      const mine = canonicalMac(text);
      rows.push(
        `${JSON.stringify(text)} -> FreeRADIUS ${JSON.stringify(rewritten)}, Wisp ${mine} (${wisp.code})`,
      );
      if (freeradiusTakes) {
        assert.equal(mine && rfc3580Mac(mine), rewritten, text);
        assert.equal(wisp.code, "Access-Accept", `Wisp logs in ${JSON.stringify(text)}`);
      } else {
        assert.equal(mine, null, `FreeRADIUS leaves ${JSON.stringify(text)} as it is; so must Wisp`);
        assert.equal(wisp.code, "Access-Reject", text);
      }
    }
    console.log(rows.map((r) => `# ${r}`).join("\n"));
  });
});

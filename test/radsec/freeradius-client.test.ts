// Interop with FreeRADIUS 3.2 as a RadSec CLIENT: a private FreeRADIUS takes plain RADIUS on
// loopback UDP and proxies it (Proxy-To-Realm) to a home_server with `proto = tcp` and a `tls`
// block presenting a certificate Wisp issued for the network. radclient through it must get the
// same verdicts and reply attributes as UDP straight to Wisp; accounting opens and closes sessions
// of the network; EAP (PEAP) passes through. FreeRADIUS 3.2.1 ignores a Disconnect-Request that
// comes down its proxy connection ("Invalid packet code 40 sent to a proxy port"): checked too.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eventually } from "../support/accounting.ts";
import { tempDir } from "../support/databases.ts";
import { eapolTest, eapolTestUnavailable } from "../support/eapol.ts";
import { freeradiusUnavailable, type RadclientReply, radclient } from "../support/freeradius-lab.ts";
import { type FreeRadiusRadsecClient, startFreeRadiusRadsecClient } from "../support/freeradius-radsec.ts";
import { type RadsecLab, startRadsecLab } from "../support/radsec-lab.ts";

const missing = freeradiusUnavailable() ?? eapolTestUnavailable();
if (missing) console.log(`# skipping FreeRADIUS RadSec client interop: ${missing}`);

/** Code and reply attributes as name=value, without the per-packet Message-Authenticator. */
const verdict = (reply: RadclientReply) => [
  reply.code,
  ...reply.attributes
    .filter(([name]) => name !== "Message-Authenticator")
    .map(([name, value]) => `${name}=${value}`)
    .sort(),
];

describe("FreeRADIUS 3.2 proxying to Wisp over RadSec", { skip: missing ?? false }, () => {
  let lab: RadsecLab;
  let freeradius: FreeRadiusRadsecClient;

  before(async () => {
    lab = await startRadsecLab();
    await lab.reply("Session-Timeout", "3600");
    await lab.reply("Idle-Timeout", "600");
    freeradius = await startFreeRadiusRadsecClient({
      target: { host: "127.0.0.1", port: lab.port },
      ca: lab.serverCa,
      cert: lab.nas.cert,
      key: lab.nas.key,
    });
  });
  after(async () => {
    await freeradius?.stop();
    await lab?.stop();
  });

  const proxied = (attributes: [string, string][]) =>
    radclient(freeradius.authPort, "auth", freeradius.secret, attributes);
  const direct = (attributes: [string, string][]) => radclient(lab.udpPort, "auth", lab.secret, attributes);

  test("PAP and CHAP through FreeRADIUS over RadSec: the verdicts and reply attributes of UDP", async () => {
    const cases: [string, [string, string][], string[]][] = [
      [
        "PAP accept",
        [["User-Password", "alice-pw"]],
        ["Access-Accept", "Idle-Timeout=600", "Session-Timeout=3600"],
      ],
      ["PAP wrong password", [["User-Password", "wrong"]], ["Access-Reject", "Reply-Message=wrong password"]],
      // radclient computes CHAP-Password (RFC 2865 section 5.3) from the clear password.
      [
        "CHAP accept",
        [["CHAP-Password", "alice-pw"]],
        ["Access-Accept", "Idle-Timeout=600", "Session-Timeout=3600"],
      ],
      ["CHAP wrong password", [["CHAP-Password", "nope"]], ["Access-Reject", "Reply-Message=wrong password"]],
    ];
    for (const [what, credentials, expected] of cases) {
      const attributes: [string, string][] = [
        ["User-Name", "alice"],
        ...credentials,
        ["NAS-Identifier", "fr-ap"],
      ];
      const viaRadsec = verdict(await proxied(attributes));
      assert.deepEqual(viaRadsec, expected, what);
      assert.deepEqual(verdict(await direct(attributes)), viaRadsec, `${what}: same as UDP`);
    }
    const unknown: [string, string][] = [
      ["User-Name", "nobody"],
      ["User-Password", "x"],
    ];
    assert.deepEqual(verdict(await proxied(unknown)), verdict(await direct(unknown)));
    assert.deepEqual(verdict(await proxied(unknown)), ["Access-Reject", "Reply-Message=unknown user"]);
    // The RadSec attempts are recorded against the network the certificate names.
    const networks = await eventually(async () => {
      await lab.server.core.aaa.drain();
      const rows = await lab.server.core.database.db
        .selectFrom("radpostauth")
        .select("network_id")
        .where("nas_identifier", "=", "fr-ap")
        .execute();
      return rows.length >= 8 ? new Set(rows.map((row) => row.network_id)) : undefined;
    });
    assert.deepEqual([...networks], [lab.network.id]);
  });

  test("accounting Start and Stop through FreeRADIUS open and close a session of the network", async () => {
    const station: [string, string][] = [
      ["User-Name", "alice"],
      ["Acct-Session-Id", "fr-acct-1"],
      ["Calling-Station-Id", "02-00-00-00-08-01"],
      ["Called-Station-Id", "02-00-00-00-00-02:lab"],
    ];
    const acct = (extra: [string, string][]) =>
      radclient(freeradius.acctPort, "acct", freeradius.secret, [...station, ...extra]);
    assert.equal((await acct([["Acct-Status-Type", "Start"]])).code, "Accounting-Response");
    const open = await eventually(() => sessionNamed("fr-acct-1", "active"));
    assert.equal(open.network_id, lab.network.id);
    const stop = await acct([
      ["Acct-Status-Type", "Stop"],
      ["Acct-Session-Time", "90"],
    ]);
    assert.equal(stop.code, "Accounting-Response");
    const closed = await eventually(() => sessionNamed("fr-acct-1", "closed"));
    assert.equal(closed.id, open.id);
  });

  test("PEAP/MS-CHAPv2 from eapol_test passes through FreeRADIUS and RadSec to Wisp's EAP", async () => {
    const dir = tempDir("fr-radsec-eap");
    try {
      fs.writeFileSync(path.join(dir, "ca.pem"), lab.serverCa);
      const login = (password: string) =>
        eapolTest({
          port: freeradius.authPort,
          secret: freeradius.secret,
          raw: { eap: "PEAP" },
          network: {
            identity: "alice",
            anonymous_identity: "anonymous",
            password,
            phase2: "autheap=MSCHAPV2",
            ca_cert: path.join(dir, "ca.pem"),
          },
          timeoutSeconds: 15,
        });
      const [ok, wrong] = await Promise.all([login("alice-pw"), login("wrong-pw")]);
      assert.equal(ok.code, 0, ok.output.slice(-1500));
      assert.ok(ok.success && ok.mppeOk, "SUCCESS with MPPE keys OK (re-encrypted by FreeRADIUS)");
      assert.equal(wrong.code, 252, wrong.output.slice(-800));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("FreeRADIUS 3.2.1 ignores a Disconnect-Request down its proxy connection, and keeps it", async () => {
    const start: [string, string][] = [
      ["User-Name", "alice"],
      ["Acct-Session-Id", "fr-dm-1"],
      ["Acct-Status-Type", "Start"],
    ];
    const started = await radclient(freeradius.acctPort, "acct", freeradius.secret, start);
    assert.equal(started.code, "Accounting-Response");
    const session = await eventually(() => sessionNamed("fr-dm-1", "active"));
    const res = await lab.server.call("POST", `/api/sessions/${session.id}/disconnect`, {
      key: lab.key,
      body: {},
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.disconnect.result, "timeout", res.text);
    assert.match(
      fs.readFileSync(freeradius.logFile, "utf8"),
      /Invalid packet code 40 sent to a proxy port from home server/,
    );
    const after = await proxied([
      ["User-Name", "alice"],
      ["User-Password", "alice-pw"],
    ]);
    assert.equal(after.code, "Access-Accept", "the connection still carries requests");
  });

  async function sessionNamed(acctSessionId: string, status: "active" | "closed") {
    const res = await lab.server.call("GET", `/api/sessions?status=${status}`, { key: lab.key });
    assert.equal(res.status, 200, res.text);
    return res.body.data.find((s: { acct_session_id: string }) => s.acct_session_id === acctSessionId);
  }
});

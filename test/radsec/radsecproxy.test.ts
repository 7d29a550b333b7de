// Interop with a real NAS-side RadSec peer: Debian's radsecproxy takes plain RADIUS on a loopback
// UDP port and forwards it over TLS to Wisp's RadSec listener, presenting a certificate Wisp issued
// for the network (and pinning Wisp's server certificate by its SAN DNS name). Through it: radclient
// PAP and accounting, eapol_test PEAP/MS-CHAPv2, TTLS/PAP and EAP-TLS. radsecproxy 1.9.2 does not
// relay Disconnect/CoA (RFC 5176) from the server side: that is checked here too, so a newer
// radsecproxy that relays them makes this suite say so (reverse CoA over one connection is tested
// with our own client in logins.test.ts / the lead's tests).
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eventually } from "../support/accounting.ts";
import { tempDir } from "../support/databases.ts";
import { type EapolResult, eapolTest, eapolTestUnavailable } from "../support/eapol.ts";
import { freeradiusUnavailable, radclient } from "../support/freeradius-lab.ts";
import { type RadsecLab, startRadsecLab } from "../support/radsec-lab.ts";
import {
  type RunningRadsecproxy,
  radsecproxyUnavailable,
  radsecproxyVersion,
  startRadsecproxy,
} from "../support/radsecproxy.ts";

const missing = radsecproxyUnavailable() ?? freeradiusUnavailable() ?? eapolTestUnavailable();
if (missing) console.log(`# skipping radsecproxy interop: ${missing}`);

const P12_PASSWORD = "alice p12 password";

/** Reply attributes as name=value, without the per-packet Message-Authenticator. */
const replyOf = (attributes: [string, string][]) =>
  attributes
    .filter(([name]) => name !== "Message-Authenticator")
    .map(([name, value]) => `${name}=${value}`)
    .sort();

describe("radsecproxy in front of Wisp's RadSec listener", { skip: missing ?? false }, () => {
  let lab: RadsecLab;
  let proxy: RunningRadsecproxy;
  let dir: string;
  let serverName: string;

  before(async () => {
    lab = await startRadsecLab();
    await lab.reply("Session-Timeout", "3600");
    const credentials = await lab.server.core.certs.serverCredentials();
    serverName = /DNS:([^,\s]+)/.exec(new X509Certificate(credentials.cert).subjectAltName ?? "")![1]!;
    dir = tempDir("radsecproxy-eap");
    fs.writeFileSync(path.join(dir, "ca.pem"), lab.serverCa);
    const issued = await lab.server.core.certs.issue(lab.accountId, {
      username: "alice",
      password: P12_PASSWORD,
    });
    fs.writeFileSync(path.join(dir, "alice.p12"), issued.pkcs12, { mode: 0o600 });
    proxy = await startRadsecproxy({
      target: { host: "127.0.0.1", port: lab.port },
      ca: lab.serverCa,
      cert: lab.nas.cert,
      key: lab.nas.key,
      serverName,
    });
    console.log(
      `# radsecproxy ${radsecproxyVersion()}, Wisp's server certificate pinned as DNS:${serverName}`,
    );
  });
  after(async () => {
    await proxy?.stop();
    await lab?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const viaProxy = (kind: "auth" | "acct", attributes: [string, string][]) =>
    radclient(proxy.udpPort, kind, proxy.clientSecret, attributes);

  test("radclient PAP through radsecproxy: the verdicts and reply attributes of UDP straight to Wisp", async () => {
    const login = (password: string): [string, string][] => [
      ["User-Name", "alice"],
      ["User-Password", password],
      ["NAS-Identifier", "rsp-ap"],
    ];
    const accept = await viaProxy("auth", login("alice-pw"));
    assert.equal(accept.code, "Access-Accept");
    assert.deepEqual(replyOf(accept.attributes), ["Session-Timeout=3600"]);
    const reject = await viaProxy("auth", login("wrong"));
    assert.equal(reject.code, "Access-Reject");
    assert.deepEqual(replyOf(reject.attributes), ["Reply-Message=wrong password"]);
    const direct = (password: string) => radclient(lab.udpPort, "auth", lab.secret, login(password));
    assert.deepEqual(replyOf((await direct("alice-pw")).attributes), replyOf(accept.attributes));
    assert.deepEqual(replyOf((await direct("wrong")).attributes), replyOf(reject.attributes));
    // Recorded against the network the certificate names (radsecproxy's address plays no part).
    const rows = await eventually(async () => {
      await lab.server.core.aaa.drain();
      const found = await lab.server.core.database.db
        .selectFrom("radpostauth")
        .select(["reply", "network_id"])
        .where("nas_identifier", "=", "rsp-ap")
        .execute();
      return found.length >= 4 ? found : undefined;
    });
    assert.ok(rows.every((row) => row.network_id === lab.network.id));
  });

  test("accounting Start and Stop through radsecproxy open and close a session of the network", async () => {
    const station: [string, string][] = [
      ["User-Name", "alice"],
      ["Acct-Session-Id", "rsp-acct-1"],
      ["Calling-Station-Id", "02-00-00-00-07-01"],
      ["Called-Station-Id", "02-00-00-00-00-01:lab"],
    ];
    const start = await viaProxy("acct", [...station, ["Acct-Status-Type", "Start"]]);
    assert.equal(start.code, "Accounting-Response");
    const open = await eventually(() => sessionNamed("rsp-acct-1", "active"));
    assert.equal(open.network_id, lab.network.id);
    const stop = await viaProxy("acct", [
      ...station,
      ["Acct-Status-Type", "Stop"],
      ["Acct-Session-Time", "120"],
      ["Acct-Input-Octets", "1000"],
    ]);
    assert.equal(stop.code, "Accounting-Response");
    const closed = await eventually(() => sessionNamed("rsp-acct-1", "closed"));
    assert.equal(closed.id, open.id);
    assert.equal(closed.network_id, lab.network.id);
  });

  test("a Disconnect-Request from Wisp goes down radsecproxy's TLS connection; 1.9.2 does not relay it", async () => {
    const station: [string, string][] = [
      ["User-Name", "alice"],
      ["Acct-Session-Id", "rsp-dm-1"],
      ["Calling-Station-Id", "02-00-00-00-07-02"],
      ["Acct-Status-Type", "Start"],
    ];
    assert.equal((await viaProxy("acct", station)).code, "Accounting-Response");
    const session = await eventually(() => sessionNamed("rsp-dm-1", "active"));
    const logBefore = proxy.log().length;
    const res = await lab.server.call("POST", `/api/sessions/${session.id}/disconnect`, {
      key: lab.key,
      body: {},
    });
    assert.equal(res.status, 200, res.text);
    const version = radsecproxyVersion();
    // Up to 1.9 radsecproxy has no dynamic authorization (no option in radsecproxy.conf(5), nothing
    // in its ChangeLog): anything a server sends is taken for a reply. Later versions: only reported.
    const relays = !/^1\.\d\./.test(version);
    const seen = proxy.log().slice(logBefore);
    if (relays) {
      console.log(`# radsecproxy ${version} may relay Disconnect: outcome ${res.body.disconnect.result}`);
      return;
    }
    // Sent over the NAS's connection (not UDP: the outcome would be an error, the network has an
    // address but no DAS) and dropped by radsecproxy: no answer within Wisp's wait.
    assert.equal(res.body.disconnect.result, "timeout", res.text);
    assert.match(
      seen,
      /radtlsget: got \d+ bytes[\s\S]*replyh: no outstanding request with this id, ignoring reply/,
      `radsecproxy received the Disconnect-Request and dropped it as an unknown reply:\n${seen.slice(-2000)}`,
    );
  });

  const expectSuccess = (result: EapolResult, what: string) => {
    assert.equal(result.code, 0, `${what}: eapol_test exit ${result.code}\n${result.output.slice(-1500)}`);
    assert.ok(result.success, `${what}: SUCCESS`);
    assert.ok(result.mppeOk, `${what}: MPPE keys OK (re-encrypted by radsecproxy for its UDP secret)`);
  };

  test("eapol_test PEAP/MS-CHAPv2, TTLS/PAP and EAP-TLS through radsecproxy", async () => {
    const eap = (raw: Record<string, string>, network: Record<string, string>) =>
      eapolTest({ port: proxy.udpPort, secret: proxy.clientSecret, raw, network, timeoutSeconds: 15 });
    const trust = { ca_cert: path.join(dir, "ca.pem"), domain_match: serverName };
    const tunnelled = (method: string, phase2: string, password: string) =>
      eap(
        { eap: method },
        { identity: "alice", anonymous_identity: "anonymous", password, phase2, ...trust },
      );
    const [peap, ttls, tls, peapWrong] = await Promise.all([
      tunnelled("PEAP", "autheap=MSCHAPV2", "alice-pw"),
      tunnelled("TTLS", "auth=PAP", "alice-pw"),
      eap(
        { eap: "TLS" },
        {
          identity: "alice",
          private_key: path.join(dir, "alice.p12"),
          private_key_passwd: P12_PASSWORD,
          ...trust,
        },
      ),
      tunnelled("PEAP", "autheap=MSCHAPV2", "wrong-pw"),
    ]);
    expectSuccess(peap, "PEAP/MS-CHAPv2");
    expectSuccess(ttls, "TTLS/PAP");
    expectSuccess(tls, "EAP-TLS");
    assert.equal(peapWrong.code, 252, `PEAP wrong password: EAP failure\n${peapWrong.output.slice(-800)}`);
    const rows = await eventually(async () => {
      await lab.server.core.aaa.drain();
      const found = await lab.server.core.database.db
        .selectFrom("radpostauth")
        .select(["method", "reply", "network_id"])
        .where("method", "in", ["PEAP", "TTLS", "TLS"])
        .execute();
      return found.length >= 4 ? found : undefined;
    });
    assert.deepEqual(rows.map((r) => `${r.method} ${r.reply} ${r.network_id}`).sort(), [
      `PEAP Access-Accept ${lab.network.id}`,
      `PEAP Access-Reject ${lab.network.id}`,
      `TLS Access-Accept ${lab.network.id}`,
      `TTLS Access-Accept ${lab.network.id}`,
    ]);
  });

  async function sessionNamed(acctSessionId: string, status: "active" | "closed") {
    const res = await lab.server.call("GET", `/api/sessions?status=${status}`, { key: lab.key });
    assert.equal(res.status, 200, res.text);
    return res.body.data.find((s: { acct_session_id: string }) => s.acct_session_id === acctSessionId);
  }
});

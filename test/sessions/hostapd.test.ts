// Against a real access point: hostapd (wired 802.1X) with a wpa_supplicant station over a veth
// pair (test/support/hostapd-lab.ts), Wisp as their RADIUS server: the station logs in with PEAP
// (inner EAP-MSCHAPv2, an anonymous outer identity) checked against Wisp's own CA and server name,
// hostapd authorizes it, and its accounting opens the session in Wisp under the inner identity; Wisp's
// Disconnect-Request reaches hostapd's Dynamic Authorization Server, which checks the secret, the
// Event-Timestamp and the Message-Authenticator and answers Disconnect-ACK (the station is
// de-authorized, and hostapd's Accounting-Stop closes the session) or Disconnect-NAK with an
// Error-Cause when the session does not match one of its stations.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { accountingSender, eventually } from "../support/accounting.ts";
import { tempDir } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { type HostapdLab, hostapdLabUnavailable, startHostapdLab } from "../support/hostapd-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "hostapd-Lab-Secret-8";
const unavailable = hostapdLabUnavailable();
if (unavailable) console.log(`# skipping the hostapd lab: ${unavailable}`);

describe("disconnect against hostapd's DAS", { skip: unavailable ?? false }, () => {
  let server: TestServer;
  let lab: HostapdLab;
  let account: AccountRow;
  let network: Network;
  let acctPort: number;

  const sessionOf = (acctSessionId?: string) =>
    server.core.database.db
      .selectFrom("radacct")
      .selectAll()
      .where("account_id", "=", account.id)
      .$if(acctSessionId !== undefined, (q) => q.where("acctsessionid", "=", acctSessionId!))
      .where("callingstationid", "=", lab.stationMac)
      .orderBy("radacctid")
      .execute();

  before(async () => {
    acctPort = await freeUdpPort();
    const authPort = await freeUdpPort();
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(authPort),
        RADIUS_ACCT_PORT: String(acctPort),
        WORKER: "0",
      },
    });
    server.core.sessions.das = new DasClient({ timeoutMs: 1000, retries: 1 });
    account = await server.account("default");
    ({ network } = await server.core.networks.create(account.id, {
      name: "hostapd lab",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      coa_enabled: true,
    }));
    await server.core.users.create(account.id, { username: "alice", password: "alice-Peap-pw" });
    const caFile = path.join(tempDir("hostapd-ca"), "ca.pem");
    fs.writeFileSync(caFile, (await server.core.certs.serverCredentials()).ca.join("\n"));
    lab = await startHostapdLab({
      secret: SECRET,
      acctPort,
      auth: { port: authPort, secret: SECRET },
      user: "alice",
      password: "alice-Peap-pw",
      stationEap: [
        "eap=PEAP",
        'identity="alice"',
        'anonymous_identity="anonymous"',
        'password="alice-Peap-pw"',
        'phase2="autheap=MSCHAPV2"',
        `ca_cert="${caFile}"`,
        `domain_match="${server.core.certs.serverName()}"`,
      ],
    });
    await server.core.networks.update(account.id, network.id, { coa_port: lab.dasPort });
    await lab.connect();
  });
  after(async () => {
    await lab?.stop();
    await server?.stop();
  });

  test("the station logs in with PEAP through hostapd; hostapd's accounting opens the session in Wisp", async () => {
    assert.ok(lab.authorized(), lab.stations());
    const [attempt] = await server.core.database.db
      .selectFrom("radpostauth")
      .select(["username", "method", "outer_identity", "reply"])
      .where("account_id", "=", account.id)
      .execute();
    assert.deepEqual(
      [attempt?.username, attempt?.method, attempt?.outer_identity, attempt?.reply],
      ["alice", "PEAP", "anonymous", "Access-Accept"],
    );
    const [row] = await eventually(async () => {
      const rows = await sessionOf();
      return rows.length > 0 ? rows : undefined;
    });
    assert.equal(row!.username, "alice");
    assert.equal(row!.acctstoptime, null);
    assert.equal(row!.client_mac, lab.stationMac.toLowerCase().replace(/-/g, ":"));
    assert.equal(row!.nasipaddress, "127.0.0.1");
  });

  test("a session hostapd does not have gets Disconnect-NAK with its Error-Cause; the station stays", async () => {
    // A session on the same station and NAS under an Acct-Session-Id hostapd never gave out.
    await accountingSender(acctPort, SECRET)(
      { user: "alice", session: "0000DEADBEEF0000", mac: lab.stationMac },
      "Start",
    );
    const [ghost] = await sessionOf("0000DEADBEEF0000");
    const { disconnect } = await server.core.sessions.disconnect(account.id, Number(ghost!.radacctid));
    assert.equal(disconnect.result, "nak", lab.log().slice(-2000));
    assert.equal(disconnect.cause, "Session-Context-Not-Found");
    assert.ok(lab.authorized(), "the real station is untouched");
  });

  test("the real session gets Disconnect-ACK: hostapd de-authorizes the station and sends its Stop", async () => {
    const [row] = (await sessionOf()).filter((r) => r.acctsessionid !== "0000DEADBEEF0000");
    const { disconnect } = await server.core.sessions.disconnect(account.id, Number(row!.radacctid));
    assert.equal(disconnect.result, "ack", lab.log().slice(-2000));
    await eventually(async () => (lab.authorized() ? undefined : true), 30_000);
    const closed = await eventually(async () => {
      const [again] = await sessionOf(row!.acctsessionid);
      return again?.acctstoptime !== null ? again : undefined;
    }, 5000);
    assert.notEqual(closed!.acctstoptime, null);
  });
});

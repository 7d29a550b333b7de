// Against a real access point: hostapd (wired 802.1X) with a wpa_supplicant station over a veth
// pair (test/support/hostapd-lab.ts). hostapd's accounting opens the session in Wisp; Wisp's
// Disconnect-Request reaches hostapd's Dynamic Authorization Server, which checks the secret, the
// Event-Timestamp and the Message-Authenticator and answers Disconnect-ACK (the station is
// de-authorized, and hostapd's Accounting-Stop closes the session) or Disconnect-NAK with an
// Error-Cause when the session does not match one of its stations.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { accountingSender, eventually } from "../support/accounting.ts";
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
    server = await startTestServer({
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_ACCT_PORT: String(acctPort), WORKER: "0" },
    });
    server.core.sessions.das = new DasClient({ timeoutMs: 1000, retries: 1 });
    account = await server.account("default");
    ({ network } = await server.core.networks.create(account.id, {
      name: "hostapd lab",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      coa_enabled: true,
    }));
    lab = await startHostapdLab({ secret: SECRET, acctPort, user: "alice", password: "alice-md5-pw" });
    await server.core.networks.update(account.id, network.id, { coa_port: lab.dasPort });
    await lab.connect();
  });
  after(async () => {
    await lab?.stop();
    await server?.stop();
  });

  test("hostapd's accounting opens the session in Wisp", async () => {
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
    await eventually(async () => (lab.authorized() ? undefined : true), 5000);
    const closed = await eventually(async () => {
      const [again] = await sessionOf(row!.acctsessionid);
      return again?.acctstoptime !== null ? again : undefined;
    }, 5000);
    assert.notEqual(closed!.acctstoptime, null);
  });
});

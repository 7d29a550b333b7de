// MAC authentication through real UDP with radclient, as gateways and switches send it: the MAC in
// the vendor's notation as User-Name, the MAB password the network says (the MAC itself, empty, a
// network-wide one), PAP or CHAP, Service-Type Call-Check where sent, Calling-Station-Id. A known
// device is decided like a user (owner's and group's items, Expiration, Simultaneous-Use); a
// voucher's device by the voucher's rules; an unknown MAC is rejected with a reason; a user whose
// name looks like a MAC wins. Recorded in radpostauth with method MAB.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sendRadius } from "../../src/radius/client.ts";
import { freeradiusUnavailable, freeUdpPort, radclient } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "mab-Secret-24";
/** The RADIUS door trusts a network lookup for 5 s (src/radius/server.ts CLIENT_TTL_MS). */
const CLIENT_CACHE_MS = 5_100;

describe("MAC authentication (MAB) over UDP", { skip: freeradiusUnavailable() ?? false }, () => {
  let server: TestServer;
  let port: number;
  let accountId: number;
  let networkId: number;

  /** radclient's Access-Request; the answer's code, Reply-Message and attributes. */
  async function auth(attributes: [string, string][]) {
    const answer = await radclient(port, "auth", SECRET, attributes);
    const get = (name: string) => answer.attributes.find(([n]) => n === name)?.[1];
    return { code: answer.code, message: get("Reply-Message"), get };
  }
  /** MAB as each vendor sends it: User-Name and Calling-Station-Id from one MAC, the given password. */
  const mab = (userName: string, password: string | null, extra: [string, string][] = []) =>
    auth([
      ["User-Name", userName],
      ...(password === null ? [] : ([["User-Password", password]] as [string, string][])),
      [
        "Calling-Station-Id",
        userName.length === 12 ? userName.toUpperCase().replace(/(..)(?!$)/g, "$1-") : userName,
      ],
      ["NAS-IP-Address", "127.0.0.1"],
      ...extra,
    ]);
  const device = (input: Parameters<TestServer["core"]["devices"]["create"]>[1]) =>
    server.core.devices.create(accountId, input);
  const lastAttempt = async () =>
    server.core.database.db
      .selectFrom("radpostauth")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();

  before(async () => {
    port = await freeUdpPort();
    server = await startTestServer({
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(port), RADIUS_ACCT_PORT: "0" },
    });
    accountId = (await server.account("default")).id;
    const { network } = await server.core.networks.create(accountId, {
      name: "MAB",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      mab_mode: "devices",
      mab_password: "mac",
    });
    networkId = network.id;
  });
  after(() => server?.stop());

  test("each vendor's notation with the MAC as password logs in; Call-Check; CHAP", async () => {
    await device({ mac: "aa:bb:cc:00:00:01", name: "printer" });
    // Cisco MAB: lower-case hex, the same as password, Service-Type Call-Check.
    const cisco = await mab("aabbcc000001", "aabbcc000001", [["Service-Type", "Call-Check"]]);
    assert.equal(cisco.code, "Access-Accept", cisco.message);
    // CoovaChilli macauth: upper-case, dashes, the MAC as password (no macpasswd).
    assert.equal((await mab("AA-BB-CC-00-00-01", "AA-BB-CC-00-00-01")).code, "Access-Accept");
    // MikroTik: colons; Cisco WLC: dotted.
    assert.equal((await mab("AA:BB:CC:00:00:01", "AA:BB:CC:00:00:01")).code, "Access-Accept");
    assert.equal((await mab("aabb.cc00.0001", "aabb.cc00.0001")).code, "Access-Accept");
    // CHAP over the MAC (radclient computes the CHAP response from the cleartext).
    const chap = await auth([
      ["User-Name", "aabbcc000001"],
      ["CHAP-Password", "aabbcc000001"],
      ["Calling-Station-Id", "AA-BB-CC-00-00-01"],
    ]);
    assert.equal(chap.code, "Access-Accept", chap.message);
    const row = await lastAttempt();
    assert.equal(row.method, "MAB");
    assert.equal(row.reply, "Access-Accept");
    assert.equal(row.client_mac, "aa:bb:cc:00:00:01");
    await server.core.aaa.drain();
    const seen = await server.core.devices.getByMac(accountId, "aa:bb:cc:00:00:01");
    assert.ok(seen.last_seen, "last_seen written with the attempt");
    assert.equal(seen.last_network_id, networkId);
  });

  test("refused with a reason: unknown MAC, wrong password, another station, disabled, expired", async () => {
    await device({ mac: "aa:bb:cc:00:00:02" });
    const cases: [Promise<{ code: string; message: string | undefined }>, string][] = [
      [mab("aabbcc0000ff", "aabbcc0000ff"), "unknown device"],
      [mab("aabbcc000002", "nope"), "wrong MAB password (the MAC address is expected)"],
      [mab("aabbcc000002", "aabbcc000001"), "wrong MAB password (the MAC address is expected)"],
      [
        auth([
          ["User-Name", "aabbcc000002"],
          ["User-Password", "aabbcc000002"],
          ["Calling-Station-Id", "AA-BB-CC-00-00-01"],
        ]),
        "User-Name is not the calling station's MAC address",
      ],
      [
        auth([
          ["User-Name", "aabbcc000002"],
          ["Calling-Station-Id", "AA-BB-CC-00-00-02"],
        ]),
        "MAC authentication takes PAP or CHAP",
      ],
      [
        mab("not-a-mac", "x", [["Service-Type", "Call-Check"]]),
        "Call-Check without a MAC address in User-Name",
      ],
    ];
    for (const [answer, reason] of cases) {
      const { code, message } = await answer;
      assert.equal(code, "Access-Reject");
      assert.equal(message, reason);
    }
    const d = await server.core.devices.getByMac(accountId, "aa:bb:cc:00:00:02");
    await server.core.devices.update(accountId, d.id, { status: "disabled" });
    assert.equal((await mab("aabbcc000002", "aabbcc000002")).message, "device disabled");
    await server.core.devices.update(accountId, d.id, { status: "enabled", expires: "2020-01-01" });
    assert.equal((await mab("aabbcc000002", "aabbcc000002")).message, "device expired");
    const future = Math.floor(Date.now() / 1000) + 600;
    await server.core.devices.update(accountId, d.id, { expires: String(future) });
    const capped = await mab("aabbcc000002", "aabbcc000002");
    assert.equal(capped.code, "Access-Accept");
    assert.ok(Number(capped.get("Session-Timeout")) <= 600, "Session-Timeout capped at the device's expiry");
    const row = await lastAttempt();
    assert.equal(row.method, "MAB");
  });

  test("a user's device is decided like the user: group and owner items, Expiration, Simultaneous-Use, User-Name", async () => {
    const owner = await server.core.users.create(accountId, { username: "carol", password: "carol-pw" });
    await server.core.attributes.addToUser(accountId, {
      userid: owner.id,
      table: "radreply",
      attribute: "Reply-Message",
      operator: ":=",
      value: "hello carol",
    });
    const group = await server.core.groups.create(accountId, { name: "printers" });
    await server.core.attributes.addToGroup(accountId, group.id, {
      table: "radgroupreply",
      attribute: "Filter-Id",
      operator: ":=",
      value: "vlan-printers",
    });
    await device({ mac: "aa:bb:cc:00:00:03", user_id: owner.id, group_id: group.id });
    const ok = await mab("aabbcc000003", "aabbcc000003");
    assert.equal(ok.code, "Access-Accept", ok.message);
    assert.equal(ok.get("User-Name"), "carol", "RFC 2865 5.1: the owner's name for accounting");
    assert.equal(ok.get("Filter-Id"), "vlan-printers");
    assert.equal(ok.get("Reply-Message"), "hello carol");
    assert.equal((await lastAttempt()).user_id, owner.id);

    await server.core.attributes.addToUser(accountId, {
      userid: owner.id,
      table: "radcheck",
      attribute: "Simultaneous-Use",
      operator: ":=",
      value: "0",
    });
    assert.equal((await mab("aabbcc000003", "aabbcc000003")).message, "already logged in");
    await server.core.users.update(accountId, owner.id, { status: "disabled" });
    assert.equal((await mab("aabbcc000003", "aabbcc000003")).message, "owner disabled");
  });

  test("a voucher's device follows the voucher: Session-Timeout, its code as User-Name, refused once disabled", async () => {
    const voucher = await server.core.vouchers.create(accountId, {
      validity: 3600,
      session_timeout: 900,
      usage_limit: 2,
    });
    await device({ mac: "aa:bb:cc:00:00:04", voucher_id: voucher.id });
    const ok = await mab("aabbcc000004", "aabbcc000004");
    assert.equal(ok.code, "Access-Accept", ok.message);
    assert.equal(ok.get("User-Name"), voucher.code);
    assert.equal(ok.get("Session-Timeout"), "900");
    assert.equal((await lastAttempt()).voucher_id, voucher.id);
    await server.core.vouchers.setEnabled(accountId, voucher.id, false);
    assert.equal((await mab("aabbcc000004", "aabbcc000004")).message, "voucher disabled");
  });

  test("a user whose name is a MAC wins over the device (its own password, not MAB)", async () => {
    await server.core.users.create(accountId, { username: "aabbcc000005", password: "real-password" });
    await device({ mac: "aa:bb:cc:00:00:05" });
    const mabTry = await mab("aabbcc000005", "aabbcc000005");
    assert.equal(mabTry.code, "Access-Reject");
    assert.equal(mabTry.message, "wrong password");
    assert.equal((await mab("aabbcc000005", "real-password")).code, "Access-Accept");
    assert.equal((await lastAttempt()).method, "PAP");
  });

  test("the same MAC in two accounts: each account's device is its own", async () => {
    const other = await server.account("other");
    await server.core.devices.create(other.id, { mac: "aa:bb:cc:00:00:06" });
    // Not this network's account: unknown here.
    assert.equal((await mab("aabbcc000006", "aabbcc000006")).message, "unknown device");
  });

  test("remembered devices only where the network takes guests; the password modes empty and secret", async () => {
    const remembered = await device({ mac: "aa:bb:cc:00:00:07" });
    await server.core.database.db
      .updateTable("devices")
      .set({ kind: "remembered" })
      .where("account_id", "=", accountId)
      .where("id", "=", remembered.id)
      .execute();
    assert.equal(
      (await mab("AA:BB:CC:00:00:07", "AA:BB:CC:00:00:07")).message,
      "remembered devices are not accepted on this network",
    );
    // MikroTik's default: an empty User-Password.
    await server.core.networks.update(accountId, networkId, { mab_mode: "guests", mab_password: "empty" });
    await sleep(CLIENT_CACHE_MS);
    // radclient leaves an empty User-Password out; a gateway sends it as 16 NULs (RFC 2865 5.2).
    assert.equal((await mab("AA:BB:CC:00:00:07", "")).code, "Access-Accept");
    const padded = await sendRadius({
      code: "Access-Request",
      attributes: [
        ["User-Name", "AA:BB:CC:00:00:07"],
        ["User-Password", Buffer.alloc(0)],
        ["Calling-Station-Id", "AA:BB:CC:00:00:07"],
      ],
      host: "127.0.0.1",
      port,
      secret: SECRET,
      timeoutMs: 2000,
      retries: 0,
    });
    assert.equal(padded.type, "Access-Accept");
    assert.equal(
      (await mab("AA:BB:CC:00:00:07", "AA:BB:CC:00:00:07")).message,
      "wrong MAB password (an empty one is expected)",
    );
    // A network-wide password (MikroTik mac-auth-password, CoovaChilli macpasswd).
    await server.core.networks.update(accountId, networkId, {
      mab_password: "secret",
      mab_secret: "s3cret-mab",
    });
    await sleep(CLIENT_CACHE_MS);
    assert.equal((await mab("AA-BB-CC-00-00-07", "s3cret-mab")).code, "Access-Accept");
    assert.equal((await mab("AA-BB-CC-00-00-07", "x")).message, "wrong MAB password");
    assert.equal((await mab("AA-BB-CC-00-00-07", null)).message, "MAC authentication takes PAP or CHAP");
    // MAB off: a Call-Check says so; a plain MAC User-Name is an unknown user.
    await server.core.networks.update(accountId, networkId, { mab_mode: "off" });
    await sleep(CLIENT_CACHE_MS);
    assert.equal(
      (await mab("aabbcc000007", "s3cret-mab", [["Service-Type", "Call-Check"]])).message,
      "MAC authentication is off for this network",
    );
    assert.equal((await mab("aabbcc000007", "s3cret-mab")).message, "unknown user");
  });
});

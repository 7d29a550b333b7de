// Policies on the wire: radclient against Wisp's UDP RADIUS, with different NAS-Identifier,
// Called-Station-Id (SSID), Calling-Station-Id (device), method and a settable decision clock,
// checks every condition and outcome; the recorded attempt names the rule. The VLAN attributes are
// checked byte for byte (RFC 2868 tag, RFC 3580 values) against what FreeRADIUS 3.2 sends for the
// same Tunnel attributes from its own tables (the same database, rlm_sql).
import assert from "node:assert/strict";
import dgram from "node:dgram";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { encodePacket } from "../../src/radius/packet.ts";
import {
  type FreeRadiusLab,
  freeradiusUnavailable,
  freeUdpPort,
  radclient,
  startFreeRadius,
} from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "policy-Secret-25";
const MAC = "aa:bb:cc:00:25:01";
/** Unix seconds of a UTC date-time. */
const at = (iso: string) => Date.parse(iso) / 1000;

/** One Access-Request over UDP; the answer's raw bytes (code, then attributes from octet 20). */
async function rawAccess(port: number, attributes: [string, string][]): Promise<Buffer> {
  const socket = dgram.createSocket("udp4");
  try {
    const request = encodePacket({ code: "Access-Request", identifier: 7, attributes }, SECRET, {
      messageAuthenticator: true,
    });
    const answer = new Promise<Buffer>((resolve, reject) => {
      socket.once("message", (message) => resolve(message));
      setTimeout(() => reject(new Error("no answer")), 3000).unref();
    });
    socket.send(request, port, "127.0.0.1");
    return await answer;
  } finally {
    socket.close();
  }
}

/** The attributes of a packet as raw [type, ...value] octets, in wire order. */
function rawAttributes(packet: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 20; i < packet.readUInt16BE(2); i += packet[i + 1]!)
    out.push(packet.subarray(i, i + packet[i + 1]!));
  return out;
}

/** RFC 2868 sections 3.1, 3.2, 3.6 with RFC 3580 section 3.31's values, tag 1. */
const tunnelAttributes = (bytes: Buffer[]) =>
  bytes.filter((b) => [64, 65, 81].includes(b[0]!)).map((b) => b.toString("hex"));

describe("policies over UDP RADIUS", { skip: freeradiusUnavailable() ?? false }, () => {
  let server: TestServer;
  let port: number;
  let accountId: number;
  let networkId: number;
  let freeradius: FreeRadiusLab | undefined;
  const ids: Record<string, number> = {};
  const users: Record<string, number> = {};

  async function auth(attributes: [string, string][]) {
    const answer = await radclient(port, "auth", SECRET, [["NAS-IP-Address", "127.0.0.1"], ...attributes]);
    const all = (name: string) => answer.attributes.filter(([n]) => n === name).map(([, v]) => v);
    return { code: answer.code, get: (name: string) => all(name)[0], all };
  }
  const pap = (user: string, password: string, extra: [string, string][] = []) =>
    auth([["User-Name", user], ["User-Password", password], ...extra]);
  const lastAttempt = async () => {
    await server.core.aaa.drain();
    return server.core.database.db
      .selectFrom("radpostauth")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
  };
  const setClock = (iso: string) => {
    server.core.aaa.clock = () => at(iso);
  };

  before(async () => {
    port = await freeUdpPort();
    server = await startTestServer({
      dialect: "sqlite",
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(port), RADIUS_ACCT_PORT: "0" },
    });
    const core = server.core;
    accountId = (await server.account("default")).id;
    const { network } = await core.networks.create(accountId, {
      name: "hq",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      mab_mode: "devices",
      time_zone: "America/New_York",
    });
    networkId = network.id;
    const staff = (await core.groups.create(accountId, { name: "staff" })).id;
    const contractors = (await core.groups.create(accountId, { name: "contractors" })).id;
    for (const [name, group] of [
      ["ann", staff],
      ["bob", null],
      ["cat", contractors],
      ["vlanref", null],
    ] as const) {
      const user = await core.users.create(accountId, { username: name, password: `pw-${name}-2525` });
      users[name] = user.id;
      if (group) await core.groups.addMember(accountId, group, { userid: user.id });
    }
    // ann's own reply items: replaced by the policy's (Filter-Id) or kept when smaller (Session-Timeout).
    const reply = (user: string, attribute: string, value: string) =>
      core.attributes.addToUser(accountId, {
        userid: users[user]!,
        table: "radreply",
        attribute,
        operator: ":=",
        value,
      });
    await reply("ann", "Filter-Id", "ann-own");
    await reply("ann", "Session-Timeout", "120");
    await reply("ann", "Reply-Message", "hello ann");
    // What FreeRADIUS gets for the byte comparison: the same VLAN as radreply rows of its own.
    await reply("vlanref", "Tunnel-Type:1", "VLAN");
    await reply("vlanref", "Tunnel-Medium-Type:1", "IEEE-802");
    await reply("vlanref", "Tunnel-Private-Group-Id:1", "10");
    await core.devices.create(accountId, { mac: MAC, name: "sensor" });
    const policy = async (name: string, conditions: object, outcome: object) => {
      ids[name] = (await core.policies.create(accountId, { name, conditions, outcome })).id;
    };
    await policy(
      "guest night",
      { ssids: ["Guest"], times: ["22:00-06:00"] },
      { action: "reject", reason: "guest Wi-Fi is closed at night" },
    );
    await policy(
      "no contractors on staff",
      { ssids: ["Staff*"], groups: [contractors] },
      { action: "reject", reason: "contractors are not allowed on Staff" },
    );
    await policy(
      "staff vlan",
      { ssids: ["Staff*"], groups: [staff] },
      { action: "accept", vlan: 10, filter_id: "staff", session_timeout: 3600 },
    );
    await policy("mab", { methods: ["MAB"] }, { action: "accept", vlan: 41, airespace_acl_name: "mab-acl" });
    await policy("iot", { device: "registered" }, { action: "accept", vlan: 40, aruba_user_role: "iot" });
    await policy(
      "lobby chap",
      { nas_identifiers: ["lobby-*"], methods: ["CHAP"] },
      {
        action: "accept",
        cisco_avpairs: ["ip:inacl#1=deny ip any any", "url-redirect=http://x"],
        idle_timeout: 300,
      },
    );
    await policy(
      "weekend",
      { days: ["sat", "sun"], networks: [networkId] },
      { action: "reject", reason: "closed on weekends" },
    );
    setClock("2024-01-01T17:00:00Z"); // Monday 12:00 in New York
  });
  after(async () => {
    await freeradius?.stop();
    await server?.stop();
  });

  test("SSID and groups: VLAN, Filter-Id and Session-Timeout combined with the user's own items", async () => {
    const ann = await pap("ann", "pw-ann-2525", [["Called-Station-Id", "00-11-22-33-44-55:Staff-5G"]]);
    assert.equal(ann.code, "Access-Accept");
    assert.equal(ann.get("Tunnel-Type:1"), "VLAN");
    assert.equal(ann.get("Tunnel-Medium-Type:1"), "IEEE-802");
    assert.equal(ann.get("Tunnel-Private-Group-Id:1"), "10");
    assert.deepEqual(ann.all("Filter-Id"), ["staff"], "the policy's Filter-Id replaces the user's");
    assert.equal(ann.get("Session-Timeout"), "120", "the smaller Session-Timeout stays");
    assert.equal(ann.get("Reply-Message"), "hello ann", "other reply items stay");
    const row = await lastAttempt();
    assert.equal(row.policy_id, ids["staff vlan"]);
    assert.equal(row.policy_name, "staff vlan");
    const cat = await pap("cat", "pw-cat-2525", [["Called-Station-Id", "00-11-22-33-44-55:Staff"]]);
    assert.equal(cat.code, "Access-Reject");
    assert.equal(cat.get("Reply-Message"), "contractors are not allowed on Staff");
    const rejected = await lastAttempt();
    assert.equal(rejected.reason, "contractors are not allowed on Staff");
    assert.equal(rejected.policy_name, "no contractors on staff");
    // Another SSID: no staff rule; the default accepts with nothing added.
    const other = await pap("cat", "pw-cat-2525", [["Called-Station-Id", "00-11-22-33-44-55:Lobby"]]);
    assert.equal(other.code, "Access-Accept");
    assert.equal(other.get("Tunnel-Type:1"), undefined);
    assert.equal((await lastAttempt()).policy_name, "default");
    // A wrong password never reaches the policies.
    assert.equal(
      (await pap("ann", "wrong", [["Called-Station-Id", "00-11-22-33-44-55:Staff"]])).code,
      "Access-Reject",
    );
    const wrong = await lastAttempt();
    assert.equal(wrong.reason, "wrong password");
    assert.equal(wrong.policy_name, null);
  });

  test("time of day in the network's zone, over midnight; day of week", async () => {
    const guest = () => pap("bob", "pw-bob-2525", [["Called-Station-Id", "00-11-22-33-44-55:Guest"]]);
    setClock("2024-01-01T23:30:00Z"); // Monday 18:30 in New York (night in UTC)
    assert.equal((await guest()).code, "Access-Accept");
    setClock("2024-01-02T03:30:00Z"); // Monday 22:30 in New York
    const night = await guest();
    assert.equal(night.code, "Access-Reject");
    assert.equal(night.get("Reply-Message"), "guest Wi-Fi is closed at night");
    setClock("2024-01-02T10:59:00Z"); // Tuesday 05:59
    assert.equal((await guest()).code, "Access-Reject");
    setClock("2024-01-02T11:00:00Z"); // Tuesday 06:00: the range's end is excluded
    assert.equal((await guest()).code, "Access-Accept");
    setClock("2024-01-06T15:00:00Z"); // Saturday
    const weekend = await pap("bob", "pw-bob-2525");
    assert.equal(weekend.get("Reply-Message"), "closed on weekends");
    setClock("2024-01-01T17:00:00Z");
  });

  test("registered device, MAB method, NAS-Identifier with CHAP: each outcome attribute", async () => {
    const iot = await pap("bob", "pw-bob-2525", [["Calling-Station-Id", "AA-BB-CC-00-25-01"]]);
    assert.equal(iot.code, "Access-Accept");
    assert.equal(iot.get("Tunnel-Private-Group-Id:1"), "40");
    assert.equal(iot.get("Aruba-User-Role"), "iot");
    assert.equal((await lastAttempt()).policy_name, "iot");
    const unknown = await pap("bob", "pw-bob-2525", [["Calling-Station-Id", "AA-BB-CC-00-25-99"]]);
    assert.equal(unknown.get("Aruba-User-Role"), undefined);
    const mab = await auth([
      ["User-Name", "aabbcc002501"],
      ["User-Password", "aabbcc002501"],
      ["Calling-Station-Id", "AA-BB-CC-00-25-01"],
    ]);
    assert.equal(mab.code, "Access-Accept");
    assert.equal(mab.get("Airespace-ACL-Name"), "mab-acl");
    assert.equal(mab.get("Tunnel-Private-Group-Id:1"), "41");
    const mabRow = await lastAttempt();
    assert.deepEqual([mabRow.method, mabRow.policy_name], ["MAB", "mab"]);
    const lobby = (nasId: string, chap: boolean) =>
      auth([
        ["User-Name", "bob"],
        [chap ? "CHAP-Password" : "User-Password", "pw-bob-2525"],
        ["NAS-Identifier", nasId],
      ]);
    const chap = await lobby("lobby-ap-3", true);
    assert.equal(chap.code, "Access-Accept");
    assert.deepEqual(chap.all("Cisco-AVPair"), ["ip:inacl#1=deny ip any any", "url-redirect=http://x"]);
    assert.equal(chap.get("Idle-Timeout"), "300");
    assert.equal(
      (await lobby("lobby-ap-3", false)).get("Idle-Timeout"),
      undefined,
      "PAP: the CHAP rule does not match",
    );
    assert.equal((await lobby("office-ap-1", true)).get("Idle-Timeout"), undefined, "another NAS-Identifier");
  });

  test("a reorder is seen by the next request; the default's outcome applies last", async () => {
    const list = await server.core.policies.list(accountId);
    const order = list.data.map((p) => p.id).filter((id) => id !== ids.weekend);
    await server.core.policies.reorder(accountId, [ids.weekend!, ...order]);
    setClock("2024-01-06T15:00:00Z");
    const ann = await pap("ann", "pw-ann-2525", [["Called-Station-Id", "00-11-22-33-44-55:Staff"]]);
    assert.equal(ann.get("Reply-Message"), "closed on weekends");
    setClock("2024-01-01T17:00:00Z");
    await server.core.policies.setDefault(accountId, {
      outcome: { action: "reject", reason: "no rule for you" },
    });
    const bob = await pap("bob", "pw-bob-2525");
    assert.equal(bob.get("Reply-Message"), "no rule for you");
    await server.core.policies.setDefault(accountId, { outcome: { action: "accept" } });
  });

  test("VLAN attributes byte for byte, the same as FreeRADIUS 3.2 sends for its Tunnel rows", async () => {
    const wisp = await rawAccess(port, [
      ["User-Name", "ann"],
      ["User-Password", "pw-ann-2525"],
      ["Called-Station-Id", "00-11-22-33-44-55:Staff"],
    ]);
    assert.equal(wisp[0], 2, "Access-Accept");
    // RFC 2868: Tunnel-Type (64) and Tunnel-Medium-Type (65) are 6 octets: type, length, the tag,
    // then the value in the 3 octets left (VLAN 13, IEEE-802 6); Tunnel-Private-Group-Id (81) the
    // tag then the text "10". One tag (1) groups the three.
    const wispTunnel = tunnelAttributes(rawAttributes(wisp));
    assert.deepEqual(wispTunnel, ["40060100000d", "410601000006", "5105013130"]);
    freeradius = await startFreeRadius(path.join(server.database.dataDir, "wisp.db"));
    const reference = await rawAccess(freeradius.authPort, [
      ["User-Name", "vlanref"],
      ["User-Password", "pw-vlanref-2525"],
      ["NAS-IP-Address", "127.0.0.1"],
    ]);
    assert.equal(reference[0], 2, "FreeRADIUS accepts");
    assert.deepEqual(tunnelAttributes(rawAttributes(reference)).sort(), [...wispTunnel].sort());
  });
});

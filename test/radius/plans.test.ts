// Plans on the wire (issue 25 point 3), on both databases: each gateway vendor's bandwidth
// attributes checked octet for octet in the raw Access-Accept (and MikroTik's decoded by
// FreeRADIUS's radclient), a user's own plan over its group's and its own rows over both, a daily
// data quota (refused at login, cut on Interim-Update), a daily time quota and validity from first
// use against the decision clock, concurrent devices, and a voucher batch with a plan.
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { accessRequestPap } from "../../src/radius/client.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { encodePacket } from "../../src/radius/packet.ts";
import { accountingSender, attribute, eventually, loginSender } from "../support/accounting.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { dialects } from "../support/databases.ts";
import { freeradiusUnavailable, freeUdpPort, radclient } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { useNoonTimeZone } from "../support/time-zone.ts";

// Daily quotas reset at local midnight: run where it is noon, so "now" and "now + 1 h" share a day.
useNoonTimeZone();

const SECRET = "plans-Secret-25";
const VENDORS = ["mikrotik", "generic", "chillispot", "cisco", "aruba", "meraki", "ubiquiti"] as const;
/** Each vendor's network is the address its Access-Requests come from: 127.0.0.1, .2, ... */
const addressOf = (vendor: (typeof VENDORS)[number]) => `127.0.0.${VENDORS.indexOf(vendor) + 1}`;

/** An Access-Request for user/password sent from `source`; the answer's raw octets. */
async function rawLogin(port: number, source: string, user: string, password: string): Promise<Buffer> {
  const request = accessRequestPap(user, password, [["Calling-Station-Id", "02-00-00-00-07-07"]]);
  const bytes = encodePacket({ code: 1, identifier: 7, attributes: request.attributes ?? [] }, SECRET);
  const socket = dgram.createSocket("udp4");
  try {
    await new Promise<void>((resolve) => socket.bind(0, source, resolve));
    const answer = new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${source}`)), 3000);
      socket.once("message", (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
    socket.send(bytes, port, "127.0.0.1");
    return await answer;
  } finally {
    socket.close();
  }
}

/** The attributes of a raw packet, each as its whole octets (type, length, value). */
function rawAttributes(packet: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let p = 20; p < packet.readUInt16BE(2); p += packet[p + 1]!)
    out.push(packet.subarray(p, p + packet[p + 1]!));
  return out;
}

/** RFC 2865 section 5.26: Vendor-Specific (26), the vendor id, then the vendor's type-length-value. */
function vsa(vendorId: number, type: number, value: Buffer): Buffer {
  const inner = Buffer.concat([Buffer.from([type, value.length + 2]), value]);
  const id = Buffer.alloc(4);
  id.writeUInt32BE(vendorId);
  return Buffer.concat([Buffer.from([26, inner.length + 6]), id, inner]);
}
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

for (const { dialect, skip } of await dialects()) {
  describe(`plans on the wire on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let das: TestDas;
    let account: AccountRow;
    let authPort: number;
    let acct: ReturnType<typeof accountingSender>;
    let login: ReturnType<typeof loginSender>;
    const realClock = () => Math.floor(Date.now() / 1000);

    const plan = async (name: string, figures: Record<string, unknown>) =>
      (await server.core.plans.create(account.id, { name, ...figures })).id;
    const user = async (username: string, planId: number | null = null) =>
      (await server.core.users.create(account.id, { username, password: "pw-plan", plan_id: planId })).id;

    before(async () => {
      const acctPort = await freeUdpPort();
      authPort = await freeUdpPort();
      server = await startTestServer({
        dialect,
        env: {
          RADIUS_HOST: "127.0.0.1",
          RADIUS_AUTH_PORT: String(authPort),
          RADIUS_ACCT_PORT: String(acctPort),
        },
      });
      das = await startTestDas(SECRET);
      server.core.sessions.das = new DasClient({ timeoutMs: 200, retries: 1 });
      account = await server.account("default");
      for (const vendor of VENDORS) {
        await server.core.networks.create(account.id, {
          name: `lab-${vendor}`,
          nas_ip: addressOf(vendor),
          secret: SECRET,
          vendor,
          coa_enabled: true,
          coa_port: das.port,
        });
      }
      acct = accountingSender(acctPort, SECRET);
      login = loginSender(authPort, SECRET);
    });
    after(async () => {
      await das?.close();
      await server?.stop();
    });

    test("the plan's bandwidth goes out in each vendor's attributes, octet for octet", async () => {
      const fast = await plan("fast", { download_kbps: 5000, upload_kbps: 2000 });
      const roled = await plan("roled", { download_kbps: 5000, upload_kbps: 2000, role: "fast-role" });
      await user("bw", fast);
      await user("bw-role", roled);
      const wispr = [vsa(14122, 7, u32(2_000_000)), vsa(14122, 8, u32(5_000_000))];
      const expected: Record<(typeof VENDORS)[number], Buffer[]> = {
        // rx (client upload) / tx (client download), as RouterOS reads Mikrotik-Rate-Limit.
        mikrotik: [vsa(14988, 8, Buffer.from("2000k/5000k"))],
        generic: wispr,
        chillispot: [vsa(14559, 4, u32(2000)), vsa(14559, 5, u32(5000))],
        cisco: [vsa(14179, 7, u32(5000)), vsa(14179, 13, u32(2000))],
        aruba: wispr,
        meraki: wispr,
        ubiquiti: wispr,
      };
      for (const vendor of VENDORS) {
        const answer = await rawLogin(authPort, addressOf(vendor), "bw", "pw-plan");
        assert.equal(answer[0], 2, `${vendor}: Access-Accept`);
        const octets = rawAttributes(answer).map((a) => a.toString("hex"));
        for (const want of expected[vendor])
          assert.ok(octets.includes(want.toString("hex")), `${vendor}: ${want.toString("hex")} in ${octets}`);
      }
      // A role: Aruba-User-Role (14823, 1) and Meraki's group policy by Filter-Id (11).
      const aruba = rawAttributes(await rawLogin(authPort, addressOf("aruba"), "bw-role", "pw-plan"));
      assert.ok(aruba.some((a) => a.equals(vsa(14823, 1, Buffer.from("fast-role")))));
      const meraki = rawAttributes(await rawLogin(authPort, addressOf("meraki"), "bw-role", "pw-plan"));
      assert.ok(meraki.some((a) => a.equals(Buffer.from([11, 11, ...Buffer.from("fast-role")]))));
    });

    test("radclient decodes MikroTik's rate limit", { skip: freeradiusUnavailable() ?? false }, async () => {
      const answer = await radclient(authPort, "auth", SECRET, [
        ["User-Name", "bw"],
        ["User-Password", "pw-plan"],
      ]);
      assert.equal(answer.code, "Access-Accept");
      assert.deepEqual(
        answer.attributes.filter(([name]) => name === "Mikrotik-Rate-Limit"),
        [["Mikrotik-Rate-Limit", "2000k/5000k"]],
      );
    });

    test("a user's own plan beats its group's, and its own rows beat both", async () => {
      const slow = await plan("group-slow", { download_kbps: 1000 });
      const quick = await plan("own-quick", { download_kbps: 3000 });
      const group = await server.core.groups.create(account.id, { name: "planned", plan_id: slow });
      const ids: Record<string, number> = {};
      for (const [name, own] of [
        ["g-member", null],
        ["g-own", quick],
        ["g-rows", quick],
      ] as const) {
        ids[name] = await user(name, own);
        await server.core.groups.addMember(account.id, group.id, { userid: ids[name]! });
      }
      await server.core.attributes.addToUser(account.id, {
        userid: ids["g-rows"]!,
        table: "radreply",
        attribute: "Mikrotik-Rate-Limit",
        operator: "=",
        value: "1k/1k",
      });
      const rate = async (name: string) => attribute(await login(name, "pw-plan"), "Mikrotik-Rate-Limit");
      assert.equal(await rate("g-member"), "0/1000k");
      assert.equal(await rate("g-own"), "0/3000k");
      assert.equal(await rate("g-rows"), "1k/1k");
    });

    test("a daily data quota: what remains at login, a disconnect on Interim-Update, then refused", async () => {
      await user("daily-data", await plan("data-5k", { data_quota: 5000, data_period: "day" }));
      const station = { user: "daily-data", session: "pd-1", mac: "02-00-00-00-25-01" };
      await acct(station, "Start");
      await acct(station, "Interim-Update", [
        ["Acct-Input-Octets", 2000],
        ["Acct-Output-Octets", 1000],
        ["Acct-Session-Time", 30],
      ]);
      const accept = await login("daily-data", "pw-plan");
      assert.equal(accept.type, "Access-Accept");
      assert.equal(attribute(accept, "Mikrotik-Total-Limit"), "2000");
      const sent = das.requests.length;
      await acct(station, "Interim-Update", [
        ["Acct-Input-Octets", 4000],
        ["Acct-Output-Octets", 1000],
        ["Acct-Session-Time", 60],
      ]);
      const disconnect = await eventually(async () => das.requests[sent]);
      assert.equal(disconnect.attribute("Acct-Session-Id"), "pd-1");
      const reject = await login("daily-data", "pw-plan");
      assert.equal(reject.type, "Access-Reject");
      assert.equal(attribute(reject, "Reply-Message"), "quota exhausted: daily data");
    });

    test("a daily time quota against the decision clock, reset the next day", async () => {
      await user("daily-time", await plan("time-1h", { time_quota: 3600, time_period: "day" }));
      const station = { user: "daily-time", session: "pt-1", mac: "02-00-00-00-25-02" };
      await acct(station, "Start");
      await acct(station, "Interim-Update", [["Acct-Session-Time", 3000]]);
      const now = realClock();
      try {
        server.core.aaa.clock = () => now;
        const accept = await login("daily-time", "pw-plan");
        assert.equal(accept.type, "Access-Accept");
        assert.equal(attribute(accept, "Session-Timeout"), "600");
        await acct(station, "Interim-Update", [["Acct-Session-Time", 3600]]);
        assert.equal(
          attribute(await login("daily-time", "pw-plan"), "Reply-Message"),
          "quota exhausted: daily time",
        );
        // The session started today; tomorrow counts none of it.
        server.core.aaa.clock = () => now + 86_400;
        assert.equal((await login("daily-time", "pw-plan")).type, "Access-Accept");
      } finally {
        server.core.aaa.clock = realClock;
      }
    });

    test("validity from first use: the plan ends that long after the first session", async () => {
      await user("valid", await plan("valid-1h", { validity: 3600 }));
      const first = await login("valid", "pw-plan");
      assert.equal(attribute(first, "Session-Timeout"), "3600", "not used yet: the whole validity");
      await acct({ user: "valid", session: "pv-1", mac: "02-00-00-00-25-03" }, "Start");
      const now = realClock();
      try {
        server.core.aaa.clock = () => now + 3000;
        const later = await login("valid", "pw-plan");
        assert.ok(Number(attribute(later, "Session-Timeout")) <= 600);
        server.core.aaa.clock = () => now + 3700;
        const reject = await login("valid", "pw-plan");
        assert.equal(attribute(reject, "Reply-Message"), "account expired after first login");
      } finally {
        server.core.aaa.clock = realClock;
      }
    });

    test("concurrent devices: one open session refuses the second", async () => {
      await user("one-device", await plan("single", { devices: 1 }));
      assert.equal((await login("one-device", "pw-plan")).type, "Access-Accept");
      await acct({ user: "one-device", session: "pc-1", mac: "02-00-00-00-25-04" }, "Start");
      const reject = await login("one-device", "pw-plan");
      assert.equal(attribute(reject, "Reply-Message"), "already logged in");
    });

    test("a voucher batch's plan: bandwidth, devices, and a refusal that leaves the voucher unused", async () => {
      const planId = await plan("voucher-plan", { download_kbps: 4000, upload_kbps: 1000, devices: 1 });
      const batch = await server.core.vouchers.createBatch(account.id, {
        quantity: 2,
        validity: 86_400,
        usage_limit: 3,
        plan_id: planId,
      });
      assert.equal(batch.plan_id, planId);
      const [first, second] = batch.data.map((v) => v.code);
      const accept = await login(first!, first!);
      assert.equal(accept.type, "Access-Accept");
      assert.equal(attribute(accept, "Mikrotik-Rate-Limit"), "1000k/4000k");
      await acct({ user: first!, session: "pvb-1", mac: "02-00-00-00-09-09" }, "Start");
      const busy = await login(first!, first!, [["Calling-Station-Id", "02-00-00-00-25-05"]]);
      assert.equal(attribute(busy, "Reply-Message"), "already logged in");
      // A voucher the plan refuses is not activated: the batch's second code stays unused.
      await server.core.plans.update(account.id, planId, { validity: 1 });
      await acct({ user: second!, session: "pvb-2", mac: "02-00-00-00-25-06" }, "Start");
      const now = realClock();
      try {
        server.core.aaa.clock = () => now + 60;
        const expired = await login(second!, second!);
        assert.equal(attribute(expired, "Reply-Message"), "account expired after first login");
      } finally {
        server.core.aaa.clock = realClock;
      }
      const row = await server.core.database.db
        .selectFrom("vouchers")
        .select("status")
        .where("code", "=", second!)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, "unused");
    });
  });
}

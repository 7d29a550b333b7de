// Changes reach live sessions (issue 25 point 4): a change of a user's or a group's reply items, or
// of a group membership, sends the open sessions a CoA-Request (RFC 5176) from the worker; a fake
// NAS checks it byte for byte. A NAK or no answer falls back to a Disconnect-Request when the
// network says so; every outcome is recorded on the session and shown by the API.
import assert from "node:assert/strict";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { eventually } from "../support/accounting.ts";
import { type DasRequest, startTestDas, type TestDas } from "../support/das.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "coa-Secret-25";

/** The attributes of a packet as [type, value octets], read straight from the datagram. */
function attributesOf(raw: Buffer): [number, Buffer][] {
  const out: [number, Buffer][] = [];
  for (let at = 20; at < raw.readUInt16BE(2); at += raw[at + 1]!) {
    out.push([raw[at]!, raw.subarray(at + 2, at + raw[at + 1]!)]);
  }
  return out;
}

/**
 * RFC 5176 section 2.3: the Request Authenticator is MD5(Code | Identifier | Length | 16 zero
 * octets | Attributes | secret); section 3.5 / RFC 3579 section 3.2: the Message-Authenticator is
 * HMAC-MD5 over the packet with that field zeroed and the authenticator as 16 zero octets.
 */
function checkSigned(raw: Buffer, secret: string) {
  const zero = Buffer.alloc(16);
  const attrs = raw.subarray(20);
  const authenticator = createHash("md5")
    .update(raw.subarray(0, 4))
    .update(zero)
    .update(attrs)
    .update(secret);
  assert.deepEqual(raw.subarray(4, 20), authenticator.digest(), "Request Authenticator");
  const copy = Buffer.from(raw);
  zero.copy(copy, 4);
  const ma = attributesOf(raw).findIndex(([type]) => type === 80);
  assert.ok(ma >= 0, "a Message-Authenticator");
  let offset = 20;
  for (const [, value] of attributesOf(raw).slice(0, ma)) offset += value.length + 2;
  const sent = Buffer.from(raw.subarray(offset + 2, offset + 18));
  copy.fill(0, offset + 2, offset + 18);
  assert.deepEqual(sent, createHmac("md5", secret).update(copy).digest(), "Message-Authenticator");
}

const text = (value: string): Buffer => Buffer.from(value, "utf8");
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
/** A vendor-specific attribute (RFC 2865 section 5.26) holding one sub-attribute. */
const vsa = (vendor: number, type: number, value: Buffer) =>
  Buffer.concat([u32(vendor), Buffer.from([type, value.length + 2]), value]);

for (const { dialect, skip } of await dialects()) {
  describe(`changes reach live sessions with CoA on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let das: TestDas;
    let account: AccountRow;
    let network: Network;
    let key: string;

    before(async () => {
      das = await startTestDas(SECRET);
      server = await startTestServer({ dialect, env: { WORKER: "1" } });
      server.core.sessions.das = new DasClient({ timeoutMs: 150, retries: 1 });
      account = await server.account("default");
      key = await server.key(account, { rateLimit: 100_000 });
      ({ network } = await server.core.networks.create(account.id, {
        name: "coa lab",
        nas_ip: "127.0.0.1",
        secret: SECRET,
        coa_enabled: true,
        coa_port: das.port,
        coa_rate: 1000,
      }));
    });
    after(async () => {
      await das?.close();
      await server?.stop();
    });

    /** A user with an open session (a radacct row as accounting writes it). */
    async function online(username: string, session: string) {
      const user = await server.core.users.create(account.id, { username });
      const start = Math.floor(Date.now() / 1000) - 60;
      const time = dialect === "sqlite" ? start : new Date(start * 1000);
      const row = await server.core.database.db
        .insertInto("radacct")
        .values({
          acctsessionid: session,
          acctuniqueid: randomBytes(16).toString("hex"),
          username,
          nasipaddress: "127.0.0.1",
          acctstarttime: time,
          acctupdatetime: time,
          callingstationid: "02-00-00-00-25-01",
          account_id: account.id,
          user_id: user.id,
          network_id: network.id,
        })
        .returning("radacctid")
        .executeTakeFirstOrThrow();
      return { user, id: Number(row.radacctid) };
    }
    const reply = (userid: number, attribute: string, value: string) =>
      server.call("POST", "/api/attributes", {
        key,
        body: { userid, table: "radreply", attribute, operator: ":=", value },
      });
    const requestsFor = (session: string, type: string) =>
      das.requests.filter((r) => r.attribute("Acct-Session-Id") === session && r.packet.type === type);
    const coaOf = async (id: number) =>
      eventually(async () => {
        const res = await server.call("GET", `/api/sessions/${id}`, { key });
        return res.body.coa ?? undefined;
      });

    test("a user's new bandwidth: the CoA-Request is checked byte for byte, the ACK recorded", async () => {
      const { user, id } = await online("coa-ann", "coa-1");
      const added = await reply(user.id, "WISPr-Bandwidth-Max-Down", "2000000");
      assert.equal(added.status, 201, added.text);
      const coa: DasRequest = await eventually(async () => requestsFor("coa-1", "CoA-Request")[0]);
      checkSigned(coa.raw, SECRET);
      assert.equal(coa.raw[0], 43, "Code CoA-Request");
      const timestamp = Number(coa.attribute("Event-Timestamp"));
      assert.ok(Math.abs(timestamp - Date.now() / 1000) < 30, "Event-Timestamp is now");
      const expected: [number, Buffer][] = [
        [1, text("coa-ann")],
        [44, text("coa-1")],
        [31, text("02-00-00-00-25-01")],
        [4, Buffer.from([127, 0, 0, 1])],
        [55, u32(timestamp)],
        [26, vsa(14122, 8, u32(2000000))],
      ];
      const sent = attributesOf(coa.raw).filter(([type]) => type !== 80);
      assert.deepEqual(sent, expected);
      const outcome = await coaOf(id);
      assert.deepEqual(
        { ...outcome, at: undefined },
        { result: "ack", cause: null, at: undefined, fallback: null },
      );
      const event = await server.core.database.db
        .selectFrom("events")
        .select("data")
        .where("kind", "=", "session.coa")
        .where("account_id", "=", account.id)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(event.data).session_id, id);
    });

    test("a NAK falls back to a Disconnect-Request when the network chose it", async () => {
      await server.core.networks.update(account.id, network.id, { coa_fallback: "disconnect" });
      das.coaBehaviour = { answer: "nak", errorCause: "Unsupported-Attribute" };
      try {
        const { user, id } = await online("coa-bob", "coa-2");
        await reply(user.id, "Session-Timeout", "1800");
        const outcome = await coaOf(id);
        assert.deepEqual(
          { ...outcome, at: undefined },
          {
            result: "nak",
            cause: "Unsupported-Attribute",
            at: undefined,
            fallback: { result: "ack", cause: null },
          },
        );
        assert.equal(requestsFor("coa-2", "Disconnect-Request").length, 1);
        const session = (await server.call("GET", `/api/sessions/${id}`, { key })).body;
        assert.equal(session.disconnect.result, "ack");
      } finally {
        das.coaBehaviour = undefined;
      }
    });

    test("no answer: recorded as a timeout; with fallback none nothing else is sent", async () => {
      await server.core.networks.update(account.id, network.id, { coa_fallback: "none" });
      das.coaBehaviour = { answer: "none" };
      try {
        const { user, id } = await online("coa-cy", "coa-3");
        await reply(user.id, "Idle-Timeout", "600");
        const outcome = await coaOf(id);
        assert.deepEqual(
          { ...outcome, at: undefined },
          { result: "timeout", cause: null, at: undefined, fallback: null },
        );
        assert.equal(requestsFor("coa-3", "CoA-Request").length, 2, "sent, then retried once");
        assert.equal(requestsFor("coa-3", "Disconnect-Request").length, 0);
      } finally {
        das.coaBehaviour = undefined;
      }
    });

    test("joining a group and a group's new reply item reach the members' sessions", async () => {
      const group = await server.core.groups.create(account.id, { name: "coa-staff" });
      await server.core.attributes.addToGroup(account.id, group.id, {
        table: "radgroupreply",
        attribute: "Mikrotik-Rate-Limit",
        operator: ":=",
        value: "5M/5M",
      });
      const { user } = await online("coa-dee", "coa-4");
      await server.core.groups.addMember(account.id, group.id, { userid: user.id });
      const joined = await eventually(async () => requestsFor("coa-4", "CoA-Request")[0]);
      assert.equal(joined.attribute("Mikrotik-Rate-Limit"), "5M/5M");
      // A VLAN is not changed by CoA (reauthorize.ts): only the filter goes.
      await server.core.attributes.addToGroup(account.id, group.id, {
        table: "radgroupreply",
        attribute: "Filter-Id",
        operator: ":=",
        value: "staff-acl",
      });
      // (The first item's job may also have found the session, once joined: a CoA without it.)
      const changed = await eventually(async () =>
        requestsFor("coa-4", "CoA-Request").find((r) => r.attribute("Filter-Id") === "staff-acl"),
      );
      assert.equal(changed.attribute("Mikrotik-Rate-Limit"), "5M/5M");
    });

    test("a new plan, a plan's new figures, a group's plan and a policy reach the sessions", async () => {
      await server.core.networks.update(account.id, network.id, { vendor: "mikrotik" });
      try {
        const { user } = await online("coa-eve", "coa-5");
        const made = await server.call("POST", "/api/plans", {
          key,
          body: { name: "coa-basic", download_kbps: 5000, upload_kbps: 1000 },
        });
        assert.equal(made.status, 201, made.text);
        const rate = (value: string) => async () =>
          requestsFor("coa-5", "CoA-Request").find((r) => r.attribute("Mikrotik-Rate-Limit") === value);
        // The user's plan: its bandwidth in the network vendor's attribute (rx/tx: upload first).
        const given = await server.call("PATCH", `/api/users/${user.id}`, {
          key,
          body: { plan_id: made.body.id },
        });
        assert.equal(given.status, 200, given.text);
        const first = await eventually(rate("1000k/5000k"));
        assert.ok(
          attributesOf(first.raw).some(
            ([type, value]) => type === 26 && value.equals(vsa(14988, 8, text("1000k/5000k"))),
          ),
          "Mikrotik-Rate-Limit (14988/8) as sent",
        );
        // The plan's figures change: everyone on it gets the new rate.
        const faster = await server.call("PATCH", `/api/plans/${made.body.id}`, {
          key,
          body: { download_kbps: 8000 },
        });
        assert.equal(faster.status, 200, faster.text);
        await eventually(rate("1000k/8000k"));
        // A policy that applies adds its filter to what the session gets.
        const policy = await server.call("POST", "/api/policies", {
          key,
          body: {
            name: "coa-acl",
            conditions: { networks: [network.id] },
            outcome: { action: "accept", filter_id: "coa-acl" },
          },
        });
        assert.equal(policy.status, 201, policy.text);
        const filtered = await eventually(async () =>
          requestsFor("coa-5", "CoA-Request").find((r) => r.attribute("Filter-Id") === "coa-acl"),
        );
        assert.equal(filtered.attribute("Mikrotik-Rate-Limit"), "1000k/8000k");
        assert.equal((await server.call("DELETE", `/api/policies/${policy.body.id}`, { key })).status, 204);
        // A group's plan reaches a member without a plan of their own.
        const { user: member } = await online("coa-fay", "coa-6");
        const group = await server.core.groups.create(account.id, { name: "coa-planned" });
        await server.core.groups.addMember(account.id, group.id, { userid: member.id });
        const grouped = await server.call("PATCH", `/api/groups/${group.id}`, {
          key,
          body: { plan_id: made.body.id },
        });
        assert.equal(grouped.status, 200, grouped.text);
        await eventually(async () =>
          requestsFor("coa-6", "CoA-Request").find(
            (r) => r.attribute("Mikrotik-Rate-Limit") === "1000k/8000k",
          ),
        );
      } finally {
        await server.core.networks.update(account.id, network.id, { vendor: "generic" });
      }
    });
  });
}

// Live sessions through the API on both databases: hostapd-style accounting over real UDP opens
// sessions, /api/sessions lists and filters them, and a disconnect reaches a small Dynamic
// Authorization Server (test/support/das.ts) whose ACK, NAK, silence or forged answers are recorded
// on the session and answered by the API.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { sendRadius } from "../../src/radius/client.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import type { AttributeInput } from "../../src/radius/packet.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { dialects } from "../support/databases.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "sessions-Secret-17";
const T0 = Math.floor(Date.now() / 1000) - 600;

for (const { dialect, skip } of await dialects()) {
  describe(`sessions API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let acctPort: number;
    let das: TestDas;
    let network: Network;
    let account: AccountRow;
    let key: string;
    const logged: string[] = [];

    const accounting = async (user: string, id: string, status: string, extra: AttributeInput[] = []) => {
      const answer = await sendRadius({
        code: "Accounting-Request",
        attributes: [
          ["User-Name", user],
          ["Acct-Session-Id", id],
          ["Acct-Status-Type", status],
          ["NAS-IP-Address", "127.0.0.1"],
          ["Called-Station-Id", "02-00-00-00-00-01:lab"],
          ["Calling-Station-Id", `02-00-00-00-01-${id.slice(-2)}`],
          ["Framed-IP-Address", "10.0.0.7"],
          ["Event-Timestamp", T0],
          ...extra,
        ],
        host: "127.0.0.1",
        port: acctPort,
        secret: SECRET,
        timeoutMs: 2000,
        retries: 0,
      });
      assert.equal(answer.type, "Accounting-Response");
    };
    const sessionId = async (acctSessionId: string) => {
      const row = await server.core.database.db
        .selectFrom("radacct")
        .select("radacctid")
        .where("acctsessionid", "=", acctSessionId)
        .executeTakeFirstOrThrow();
      return Number(row.radacctid);
    };

    before(async () => {
      acctPort = await freeUdpPort();
      server = await startTestServer({
        dialect,
        env: { RADIUS_HOST: "127.0.0.1", RADIUS_ACCT_PORT: String(acctPort), WORKER: "0" },
      });
      das = await startTestDas(SECRET);
      server.core.sessions.das = new DasClient({
        timeoutMs: 150,
        retries: 1,
        log: { warn: (_o, message) => logged.push(message) },
      });
      account = await server.account("default");
      key = await server.key(account);
      ({ network } = await server.core.networks.create(account.id, {
        name: "lab",
        nas_ip: "127.0.0.1",
        secret: SECRET,
        coa_enabled: true,
        coa_port: das.port,
      }));
      await accounting("alice", "sess-01", "Start");
      await accounting("bob", "sess-02", "Start");
      await accounting("bob", "sess-03", "Start");
      await accounting("bob", "sess-03", "Stop", [
        ["Acct-Session-Time", 60],
        ["Acct-Input-Octets", 1000],
      ]);
    });
    after(async () => {
      await das?.close();
      await server?.stop();
    });

    test("lists sessions with filters, gets one, and requires sessions:read", async () => {
      const all = await server.call("GET", "/api/sessions", { key });
      assert.equal(all.status, 200);
      assert.equal(all.body.total, 3);
      assert.deepEqual(
        all.body.data.map((s: { acct_session_id: string }) => s.acct_session_id),
        ["sess-03", "sess-02", "sess-01"],
        "newest first",
      );
      const active = await server.call("GET", "/api/sessions?status=active&sort=username", { key });
      assert.deepEqual(
        active.body.data.map((s: { username: string; status: string }) => [s.username, s.status]),
        [
          ["alice", "active"],
          ["bob", "active"],
        ],
      );
      const byAp = await server.call(
        "GET",
        `/api/sessions?ap_mac=02:00:00:00:00:01&network_id=${network.id}`,
        { key },
      );
      assert.equal(byAp.body.total, 3);
      const byClient = await server.call("GET", "/api/sessions?client_mac=02-00-00-00-01-03", { key });
      assert.equal(byClient.body.total, 1);
      assert.equal(byClient.body.data[0].status, "closed");
      assert.equal(byClient.body.data[0].input_bytes, 1000);
      assert.equal(byClient.body.data[0].duration, 60);
      const later = await server.call("GET", `/api/sessions?since=${T0 + 1}`, { key });
      assert.equal(later.body.total, 0);
      const bad = await server.call("GET", "/api/sessions?client_mac=nope", { key });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /client_mac must be a MAC address/);
      const badSince = await server.call("GET", "/api/sessions?since=yesterday", { key });
      assert.equal(badSince.status, 400);

      const id = await sessionId("sess-01");
      const one = await server.call("GET", `/api/sessions/${id}`, { key });
      assert.equal(one.status, 200);
      assert.equal(one.body.framed_ip, "10.0.0.7");
      assert.equal(one.body.disconnect, null);

      const usersOnly = await server.key(account, { permissions: "users:read" });
      assert.equal((await server.call("GET", "/api/sessions", { key: usersOnly })).status, 403);
      const readOnly = await server.key(account, { permissions: "sessions:read" });
      assert.equal((await server.call("GET", "/api/sessions", { key: readOnly })).status, 200);
      assert.equal(
        (await server.call("POST", `/api/sessions/${id}/disconnect`, { key: readOnly, body: {} })).status,
        403,
      );
      const other = await server.key(await server.account("other"));
      assert.equal((await server.call("GET", `/api/sessions/${id}`, { key: other })).status, 404);
    });

    test("a disconnect sends RFC 5176 attributes signed as the RFC says; the ACK is recorded with its event", async () => {
      das.behaviour = { answer: "ack" };
      const id = await sessionId("sess-01");
      const before = das.requests.length;
      const res = await server.call("POST", `/api/sessions/${id}/disconnect`, {
        key,
        body: { reason: "test" },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.disconnect.result, "ack");
      assert.equal(res.body.disconnect.cause, null);
      assert.equal(res.body.session.disconnect.result, "ack");
      const request = das.requests[before]!;
      assert.equal(request.packet.type, "Disconnect-Request");
      assert.equal(request.requestAuthenticatorValid, true, "RFC 5176 2.3 Request Authenticator");
      assert.equal(request.messageAuthenticatorValid, true, "Message-Authenticator present and valid");
      assert.equal(request.attribute("User-Name"), "alice");
      assert.equal(request.attribute("Acct-Session-Id"), "sess-01");
      assert.equal(request.attribute("Calling-Station-Id"), "02-00-00-00-01-01");
      assert.equal(request.attribute("Framed-IP-Address"), "10.0.0.7");
      assert.equal(request.attribute("NAS-IP-Address"), "127.0.0.1");
      assert.ok(Math.abs(Number(request.attribute("Event-Timestamp")) - Date.now() / 1000) < 10);
      const stored = await server.call("GET", `/api/sessions/${id}`, { key });
      assert.equal(stored.body.disconnect.result, "ack");
      const events = await server.core.database.db
        .selectFrom("events")
        .selectAll()
        .where("kind", "=", "session.disconnected")
        .execute();
      assert.equal(events.length, 1);
      assert.deepEqual(
        { ...JSON.parse(events[0]!.data), session_id: undefined },
        {
          session_id: undefined,
          username: "alice",
          user_id: null,
          network_id: network.id,
          client_mac: "02:00:00:00:01:01",
          ap_mac: "02:00:00:00:00:01",
          reason: "test",
        },
      );
    });

    test("a NAK comes back with its Error-Cause name; no event", async () => {
      das.behaviour = { answer: "nak", errorCause: "Session-Context-Not-Found" };
      const id = await sessionId("sess-02");
      const res = await server.call("POST", `/api/sessions/${id}/disconnect`, { key, body: {} });
      assert.equal(res.status, 200);
      assert.deepEqual(
        [res.body.disconnect.result, res.body.disconnect.cause],
        ["nak", "Session-Context-Not-Found"],
      );
    });

    test("forged answers (wrong secret, wrong identifier) are ignored and logged; silence is a timeout", async () => {
      const id = await sessionId("sess-02");
      das.behaviour = { answer: "wrong-id-then-ack" };
      logged.length = 0;
      const late = await server.call("POST", `/api/sessions/${id}/disconnect`, { key, body: {} });
      assert.equal(late.body.disconnect.result, "ack", "the right answer after an ignored one");
      assert.equal(logged.length, 1);
      das.behaviour = { answer: "forged" };
      logged.length = 0;
      const before = das.requests.length;
      const forged = await server.call("POST", `/api/sessions/${id}/disconnect`, { key, body: {} });
      assert.equal(forged.body.disconnect.result, "timeout");
      assert.equal(das.requests.length - before, 2, "sent once and retried once");
      assert.ok(logged.length >= 2 && logged.every((m) => /ignored/.test(m)));
      assert.deepEqual(
        das.requests.slice(before).map((r) => r.packet.identifier),
        [das.requests[before]!.packet.identifier, das.requests[before]!.packet.identifier],
        "a retransmission keeps its identifier",
      );
      das.behaviour = { answer: "none" };
      const silent = await server.call("POST", `/api/sessions/${id}/disconnect`, { key, body: {} });
      assert.equal(silent.body.disconnect.result, "timeout");
    });

    test("closed sessions and networks without CoA answer 409; nothing is sent", async () => {
      const before = das.requests.length;
      const closed = await server.call("POST", `/api/sessions/${await sessionId("sess-03")}/disconnect`, {
        key,
        body: {},
      });
      assert.equal(closed.status, 409);
      assert.match(closed.body.message, /already closed/);
      await server.core.networks.update(account.id, network.id, { coa_enabled: false });
      const off = await server.call("POST", `/api/sessions/${await sessionId("sess-02")}/disconnect`, {
        key,
        body: {},
      });
      assert.equal(off.status, 409);
      assert.match(off.body.message, /CoA\) is off for network/);
      assert.equal(das.requests.length, before);
      await server.core.networks.update(account.id, network.id, { coa_enabled: true });
    });
  });
}

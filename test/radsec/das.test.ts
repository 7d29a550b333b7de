// Dynamic authorization over the NAS's own RadSec connection: a disconnect from the sessions API
// goes down the open TLS connection (RFC 5176 packets, signed with the "radsec" secret, or with a
// Token over RADIUS/1.1) and the NAS's answer is read from it; with no connection open the
// outcome says so instead of trying an address the NAS cannot be reached on.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  PacketCode,
  verifyMessageAuthenticator,
  verifyRequestAuthenticator,
} from "../../src/radius/packet.ts";
import { eventually } from "../support/accounting.ts";
import { ConsoleClient } from "../support/browser.ts";
import type { RadsecTestClient } from "../support/radsec-client.ts";
import { type RadsecLab, startRadsecLab } from "../support/radsec-lab.ts";

describe("RadSec dynamic authorization", () => {
  let lab: RadsecLab;
  before(async () => {
    lab = await startRadsecLab();
  });
  after(() => lab?.stop());

  async function openSession(client: RadsecTestClient, sessionId: string): Promise<number> {
    const start = await client.request(PacketCode.AccountingRequest, [
      ["User-Name", "alice"],
      ["Acct-Session-Id", sessionId],
      ["Acct-Status-Type", "Start"],
      ["Calling-Station-Id", "02-00-00-00-01-01"],
    ]);
    assert.equal(start.type, "Accounting-Response");
    return eventually(async () => {
      const res = await lab.server.call("GET", "/api/sessions?status=active", { key: lab.key });
      return res.body.data.find((s: { acct_session_id: string }) => s.acct_session_id === sessionId)?.id;
    });
  }

  const disconnect = (id: number) =>
    lab.server.call("POST", `/api/sessions/${id}/disconnect`, { key: lab.key, body: { reason: "test" } });

  test("a Disconnect-Request goes down the NAS's connection, signed as RFC 5176 says; its ACK is the outcome", async () => {
    const client = await lab.connect();
    client.onRequest = () => ({ code: PacketCode.DisconnectAck, attributes: [] });
    try {
      const id = await openSession(client, "das-1");
      const res = await disconnect(id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.disconnect.result, "ack");
      const request = client.requests.at(-1)!;
      assert.equal(request.type, "Disconnect-Request");
      assert.equal(request.attributes.find((a) => a.name === "Acct-Session-Id")?.value, "das-1");
      assert.equal(request.attributes.find((a) => a.name === "User-Name")?.value, "alice");
      const raw = client.rawRequests.at(-1)!;
      assert.equal(
        verifyRequestAuthenticator(raw, "radsec"),
        true,
        "RFC 5176 section 2.3 with the radsec secret",
      );
      assert.equal(
        verifyMessageAuthenticator(raw, "radsec", Buffer.alloc(16)),
        true,
        "Message-Authenticator",
      );
    } finally {
      client.close();
    }
  });

  test("a NAK's Error-Cause is the outcome's cause; no answer is a timeout", async () => {
    const client = await lab.connect();
    client.onRequest = () => ({
      code: PacketCode.DisconnectNak,
      attributes: [["Error-Cause", "Session-Context-Not-Found"]],
    });
    try {
      const id = await openSession(client, "das-2");
      const nak = await disconnect(id);
      assert.deepEqual(nak.body.disconnect, {
        ...nak.body.disconnect,
        result: "nak",
        cause: "Session-Context-Not-Found",
      });
      client.onRequest = () => null;
      const silent = await disconnect(id);
      assert.equal(silent.body.disconnect.result, "timeout");
    } finally {
      client.close();
    }
  });

  test("over RADIUS/1.1 the request carries a Token and the ACK is matched by it", async () => {
    const client = await lab.connect({ alpn: ["radius/1.1"], minVersion: "TLSv1.3" });
    client.onRequest = () => ({ code: PacketCode.DisconnectAck, attributes: [] });
    try {
      assert.equal(client.radius11, true);
      const id = await openSession(client, "das-3");
      assert.equal((await disconnect(id)).body.disconnect.result, "ack");
      const raw = client.rawRequests.at(-1)!;
      assert.equal(
        raw.subarray(8, 20).equals(Buffer.alloc(12)),
        true,
        "12 reserved zero octets after the Token",
      );
      assert.equal(
        client.requests.at(-1)!.attributes.some((a) => a.name === "Message-Authenticator"),
        false,
      );
    } finally {
      client.close();
    }
  });

  test("the console's network page and the API show the live connection: since when, TLS version, peer", async () => {
    const account = await lab.server.account("default");
    await lab.server.core.admins.create(account, { email: "ops@example.com", password: "radsec console pw" });
    const operator = new ConsoleClient(lab.server.url);
    assert.equal((await operator.login("ops@example.com", "radsec console pw")).status, 303);
    const page = () => operator.get(`/console/networks/${lab.network.id}`);
    assert.match((await page()).text, /not connected/);
    const client = await lab.connect({ maxVersion: "TLSv1.2" });
    try {
      const shown = (await page()).text;
      assert.match(
        shown,
        /connected since .* from <code>127\.0\.0\.1:\d+<\/code>, TLSv1\.2 \(radius\/1\.0\)/,
      );
      assert.match(shown, new RegExp(`peer <code>CN=wisp-network-${lab.network.id}</code>`));
      const api = await lab.server.call("GET", `/api/networks/${lab.network.id}/radsec`, { key: lab.key });
      assert.equal(api.status, 200, api.text);
      assert.equal(api.body.transport, "both");
      assert.equal(api.body.connections.length, 1);
    } finally {
      client.close();
    }
  });

  test("a RadSec-only network with no open connection: the outcome says the NAS is not connected", async () => {
    const { network } = await lab.server.core.networks.create(lab.accountId, {
      name: "Behind NAT",
      nas_ip: "",
      coa_enabled: true,
    });
    const nas = await lab.issue(network.id);
    const client = await lab.connect({ cert: nas.cert, key: nas.key });
    const id = await openSession(client, "das-4");
    client.close();
    await client.closed;
    await eventually(async () =>
      lab.server.radsec!.connected(lab.accountId, network.id) ? undefined : true,
    );
    const res = await disconnect(id);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.disconnect.result, "error");
    assert.match(res.body.disconnect.cause, /not connected over RadSec/);
  });
});

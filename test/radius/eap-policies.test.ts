// Policies through EAP: eapol_test PEAP (inner EAP-MSCHAPv2) against the embedded server. The EAP
// method is known before the decision (a rule on methods [PEAP] matches), and the VLAN attributes
// of the matched rule arrive in the final Access-Accept beside EAP-Success and the MPPE keys.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type EapTestServer, peapLogin, startEapServer } from "../support/eap-server.ts";
import { eapolTestUnavailable } from "../support/eapol.ts";

const missing = eapolTestUnavailable();

describe("policies through PEAP with eapol_test", { skip: missing ?? false }, () => {
  let lab: EapTestServer;

  before(async () => {
    lab = await startEapServer();
    await lab.user("alice", "alice-pw");
    const { policies } = lab.server.core;
    await policies.create(lab.accountId, {
      name: "not over ttls or pap",
      conditions: { methods: ["TTLS", "PAP"] },
      outcome: { action: "reject", reason: "not this way" },
    });
    await policies.create(lab.accountId, {
      name: "peap vlan",
      conditions: { methods: ["PEAP"] },
      outcome: { action: "accept", vlan: 20, filter_id: "eap-users" },
    });
  });
  after(() => lab?.stop());

  test("the final Access-Accept carries the rule's Tunnel attributes (tag 1, RFC 3580 values)", async () => {
    const result = await peapLogin(lab);
    assert.equal(result.code, 0, result.output.slice(-1500));
    assert.ok(result.mppeOk, "MPPE keys OK");
    // eapol_test dumps each attribute of the final Access-Accept: type, length and value in hex.
    const accept = result.output.slice(result.output.lastIndexOf("(Access-Accept)"));
    assert.ok(accept.includes("EAP Success"), "the final Access-Accept");
    assert.match(accept, /Attribute 64 \(Tunnel-Type\) length=6\s+Value: 0100000d/);
    assert.match(accept, /Attribute 65 \(Tunnel-Medium-Type\) length=6\s+Value: 01000006/);
    assert.match(accept, /Attribute 81 \(Tunnel-Private-Group-Id\) length=5\s+Value: 013230/);
    // Filter-Id (11): eapol_test prints no value for it; 2 + 9 octets is "eap-users".
    assert.match(accept, /Attribute 11 \(.*\) length=11\n/);
    await lab.server.core.aaa.drain();
    const row = await lab.server.core.database.db
      .selectFrom("radpostauth")
      .select(["method", "policy_name", "reply"])
      .where("username", "=", "alice")
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { method: "PEAP", policy_name: "peap vlan", reply: "Access-Accept" });
  });
});

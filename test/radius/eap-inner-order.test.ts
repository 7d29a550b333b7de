// Inner methods out of order (issue 14, "Bad input"): a real TLS tunnel (node's TLS client, TLS
// 1.2, carried in PEAP / EAP-TTLS packets built here), then an inner message the server did not ask
// for: an EAP-MSCHAPv2 Response before any challenge (PEAP, RFC 2759 section 4 / draft-kamath
// PEAPv0), or a non-EAP TTLS AVP while an inner EAP conversation is under way (RFC 5281 section
// 11.1). Each must end in Access-Reject with the conversation freed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type EapTestServer, startEapServer } from "../support/eap-server.ts";
import { avp, PEAP, Supplicant, TTLS } from "../support/eap-supplicant.ts";
import { eapolTestUnavailable } from "../support/eapol.ts";

const missing = eapolTestUnavailable();
if (missing) console.log(`# skipping inner-order tests: ${missing}`);
describe("inner methods out of order", { skip: missing ?? false }, () => {
  let lab: EapTestServer;
  before(async () => {
    lab = await startEapServer();
    await lab.user("alice", "alice-pw");
  });
  after(() => lab?.stop());
  const open = () => lab.server.radius.eap!.openConversations;

  test("PEAP: an EAP-MSCHAPv2 Response before the challenge is rejected", async () => {
    const peer = new Supplicant(lab, PEAP);
    try {
      await peer.handshake();
      // The ACK of the server's Finished; the server then asks for the inner identity (PEAPv0: an
      // EAP-Request/Identity without its header, so its first octet is Type 1).
      assert.equal((await peer.exchange(Buffer.alloc(0))).type, "Access-Challenge");
      assert.equal(Buffer.concat(peer.received)[0], 1, "inner Identity request");
      // PEAPv0 carries inner EAP without its 4-octet header: Type 26, OpCode 2 (Response),
      // MS-CHAPv2-ID, MS-Length, Value-Size 49, 49 octets, Name (RFC 2759 section 4).
      const response = Buffer.concat([
        Buffer.of(26, 2, 0, 0, 59, 49),
        Buffer.alloc(49, 0x11),
        Buffer.from("alice"),
      ]);
      const answer = await peer.inner(response);
      assert.equal(answer.type, "Access-Reject");
      assert.equal(open(), 0, "conversation freed");
    } finally {
      peer.close();
    }
  });

  test("TTLS: a User-Password AVP while an inner EAP-MSCHAPv2 conversation waits is rejected", async () => {
    const peer = new Supplicant(lab, TTLS);
    try {
      await peer.handshake();
      // Inner EAP begins: an EAP-Message AVP (79) with EAP-Response/Identity.
      const identity = Buffer.concat([Buffer.of(2, 0, 0, 10, 1), Buffer.from("alice")]);
      const challenge = await peer.inner(avp(79, identity));
      assert.equal(challenge.type, "Access-Challenge", "the server goes on with inner EAP");
      const inner = Buffer.concat(peer.received);
      assert.equal(inner.readUInt32BE(0), 79, "an EAP-Message AVP");
      assert.deepEqual([inner[8], inner[12]], [1, 26], "EAP-Request/MSCHAPv2 (the challenge)");
      // Then PAP's User-Password AVP (2) where an EAP-Message is expected.
      const answer = await peer.inner(avp(2, Buffer.from("alice-pw")));
      assert.equal(answer.type, "Access-Reject");
      assert.equal(open(), 0, "conversation freed");
    } finally {
      peer.close();
    }
  });
});

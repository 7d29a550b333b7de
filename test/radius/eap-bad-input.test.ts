// Bad EAP input at the RADIUS door (issue 14, "Bad input"): lengths that disagree, no
// Message-Authenticator, unknown types, foreign and replayed State, TLS garbage, fragments past
// 64 KiB, a method other than the one proposed: each dropped or rejected, the conversation freed,
// and the server still logs PEAP in. Then a flood of 10,000 half-open conversations (with
// ClientHellos) from one network: memory stays bounded and another network still logs in.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { attr, identity, Nas } from "../support/eap-nas.ts";
import { clientHello, eap } from "../support/eap-packets.ts";
import { type EapTestServer, peapLogin, startEapServer } from "../support/eap-server.ts";
import { eapolTestUnavailable } from "../support/eapol.ts";

const missing = eapolTestUnavailable();
if (missing) console.log(`# skipping EAP bad-input tests: ${missing}`);

describe("bad EAP input", { skip: missing ?? false }, () => {
  let lab: EapTestServer;
  let nas: Nas;
  before(async () => {
    lab = await startEapServer({ limits: { perNetwork: 500, total: 2000 } });
    await lab.user("alice", "alice-pw");
    await lab.server.core.networks.create(lab.accountId, {
      name: "flood",
      nas_ip: "127.0.0.2",
      secret: "flood-Secret-9",
    });
    nas = new Nas(lab.authPort, lab.secret);
    await nas.bind("127.0.0.1");
  });
  after(async () => {
    nas?.close();
    await lab?.stop();
  });
  const open = () => lab.server.radius.eap!.openConversations;

  test("each bad packet is dropped or rejected, its conversation freed; PEAP still logs in", async () => {
    // EAP Length says more than the EAP-Message holds: dropped, no answer.
    const short = identity("alice");
    short.writeUInt16BE(200, 2);
    assert.equal(await nas.send([["EAP-Message", short]], { waitMs: 400 }), null);
    // EAP-Message without Message-Authenticator (RFC 3579 section 3.2): dropped.
    assert.equal(await nas.send([["EAP-Message", identity("alice")]], { ma: false, waitMs: 400 }), null);
    // An unknown EAP type to begin with: rejected with EAP-Failure.
    const unknown = await nas.send([["EAP-Message", eap(2, 1, 99, Buffer.from("?"))]]);
    assert.equal(unknown?.type, "Access-Reject");
    assert.equal(attr(unknown, "EAP-Message")?.[0], 4);
    // A State nobody issued: rejected.
    const foreign = await nas.send([
      ["EAP-Message", eap(2, 9, 25, Buffer.of(0))],
      ["State", Buffer.alloc(16, 7)],
    ]);
    assert.equal(foreign?.type, "Access-Reject");

    // A replayed State: the first challenge's State after the conversation moved on.
    const first = await nas.send([["EAP-Message", identity("alice")]]);
    assert.equal(first?.type, "Access-Challenge");
    const state1 = attr(first, "State")!;
    const id1 = attr(first, "EAP-Message")![1]!;
    const nak = await nas.send([
      ["EAP-Message", eap(2, id1, 3, Buffer.of(21))],
      ["State", state1],
    ]);
    assert.equal(nak?.type, "Access-Challenge");
    assert.equal(attr(nak, "EAP-Message")![4], 21, "NAK for TTLS: TTLS proposed");
    const replay = await nas.send([
      ["EAP-Message", eap(2, id1, 3, Buffer.of(21))],
      ["State", state1],
    ]);
    assert.equal(replay?.type, "Access-Reject");

    // A method other than the one proposed: rejected, conversation freed.
    const other = await nas.send([["EAP-Message", identity("alice")]]);
    const wrongType = await nas.send([
      ["EAP-Message", eap(2, attr(other, "EAP-Message")![1]!, 13, Buffer.of(0))],
      ["State", attr(other, "State")!],
    ]);
    assert.equal(wrongType?.type, "Access-Reject");

    // TLS garbage where the ClientHello belongs: rejected.
    const tls = await nas.send([["EAP-Message", identity("alice")]]);
    const garbage = await nas.send([
      [
        "EAP-Message",
        eap(2, attr(tls, "EAP-Message")![1]!, 25, Buffer.concat([Buffer.of(0), Buffer.alloc(300, 0x41)])),
      ],
      ["State", attr(tls, "State")!],
    ]);
    assert.equal(garbage?.type, "Access-Reject");

    // A first fragment announcing 70,000 octets (past 64 KiB): rejected.
    const big = await nas.send([["EAP-Message", identity("alice")]]);
    const huge = Buffer.alloc(5 + 200);
    huge[0] = 0xc0; // L + M
    huge.writeUInt32BE(70_000, 1);
    const tooBig = await nas.send([
      ["EAP-Message", eap(2, attr(big, "EAP-Message")![1]!, 25, huge)],
      ["State", attr(big, "State")!],
    ]);
    assert.equal(tooBig?.type, "Access-Reject");
    // Every conversation that went wrong is freed; the NAK'd one still waits at its newest State.
    assert.equal(open(), 1, "only the conversation that moved on is kept");

    const peap = await peapLogin(lab);
    assert.equal(peap.code, 0, peap.output.slice(-1500));
    assert.ok(peap.mppeOk);
  });

  test("10,000 half-open conversations (1,000 with a ClientHello) from one network: bounded memory, others log in", async () => {
    const hello = await clientHello();
    assert.ok(hello.length > 100 && hello[0] === 22, "a TLS handshake record");
    const flood = Array.from({ length: 20 }, () => new Nas(lab.authPort, "flood-Secret-9"));
    await Promise.all(flood.map((f) => f.bind("127.0.0.2")));
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const started = Date.now();
    let challenged = 0;
    let half = 0;
    try {
      await Promise.all(
        flood.map(async (f, k) => {
          for (let i = 0; i < 500; i++) {
            const start = await f.send([["EAP-Message", identity(`flood-${k}-${i}`)]], { waitMs: 2000 });
            if (start?.type !== "Access-Challenge") continue;
            half++;
            // One in ten goes on with a ClientHello: a TLS connection and a server flight each.
            if (i % 10 !== 0) continue;
            const answer = await f.send(
              [
                [
                  "EAP-Message",
                  eap(2, attr(start, "EAP-Message")![1]!, 25, Buffer.concat([Buffer.of(0), hello])),
                ],
                ["State", attr(start, "State")!],
              ],
              { waitMs: 2000 },
            );
            if (answer?.type === "Access-Challenge") challenged++;
          }
        }),
      );
    } finally {
      clearInterval(sampler);
      for (const f of flood) f.close();
    }
    const seconds = (Date.now() - started) / 1000;
    const grownMb = (peak - rssBefore) / 1024 / 1024;
    console.log(
      `# flood: ${half} conversations (${challenged} got a server flight) in ${seconds.toFixed(1)} s; ` +
        `RSS +${grownMb.toFixed(0)} MB at peak; open ${open()}, evicted ${lab.server.radius.eap!.evictedConversations}`,
    );
    assert.equal(half, 10_000, "every flood conversation was started");
    assert.ok(challenged >= 900, `the ClientHellos were served (${challenged})`);
    // The flooding network keeps at most its cap (500); +1: the first test's waiting conversation.
    assert.ok(open() <= 501, "the flooding network keeps at most its cap");
    assert.ok(grownMb < 200, `RSS grew ${grownMb.toFixed(0)} MB`);
    const peap = await peapLogin(lab);
    assert.equal(peap.code, 0, peap.output.slice(-1500));
  });
});

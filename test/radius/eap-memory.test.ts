// EAP memory budgets (issue 22 point 7): the conversations kept between round trips are bounded by
// the bytes they hold as well as by their count, per network and in all. Over real UDP to the real
// RADIUS server: a network flooding half-open PEAP conversations (identity, then a real
// ClientHello: the server holds a TLS connection for each) loses its oldest past its budget, and a
// conversation of a quiet network, begun before ten other networks flood, still logs in after.
// Then the eviction rule on its own (a network within its fair share never loses a conversation to
// another's flood) and the settings.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { type Bound, Conversations } from "../../src/radius/eap/conversations.ts";
import { DEFAULT_EAP_LIMITS, type EapLimits } from "../../src/radius/eap/types.ts";
import { attr, halfOpenPeap, identity, Nas } from "../support/eap-nas.ts";
import { clientHello, eap } from "../support/eap-packets.ts";
import { type EapTestServer, startEapServer } from "../support/eap-server.ts";
import { Supplicant, TTLS, ttlsPap } from "../support/eap-supplicant.ts";
import { eapolTestUnavailable } from "../support/eapol.ts";
import { prng } from "../support/prng.ts";

const missing = eapolTestUnavailable();
if (missing) console.log(`# skipping EAP memory tests: ${missing}`);
const MiB = 2 ** 20;
/** Counts that a flood of one network does not reach, but ten do; budgets of a few dozen TLS connections. */
const LIMITS: EapLimits = {
  idleTimeoutSeconds: 600,
  perNetwork: 100,
  total: 300,
  perNetworkBytes: 2 * MiB,
  totalBytes: 8 * MiB,
};

describe("EAP memory budgets over RADIUS", { skip: missing ?? false }, () => {
  let lab: EapTestServer;
  let hello: Buffer;
  const nases: Nas[] = [];
  before(async () => {
    // 400-octet fragments: the server's first flight takes several, so an ACK shows a conversation lives.
    lab = await startEapServer({ limits: LIMITS, fragmentSize: 400 });
    await lab.user("alice", "alice-pw");
    hello = await clientHello();
  });
  after(async () => {
    for (const nas of nases) nas.close();
    await lab?.stop();
  });
  const engine = () => lab.server.radius.eap!;
  /** A network for `address` and a NAS sending from there. */
  async function network(name: string, address: string): Promise<{ id: number; nas: Nas }> {
    const secret = `${name}-Secret-7`;
    const created = await lab.server.core.networks.create(lab.accountId, { name, nas_ip: address, secret });
    const nas = new Nas(lab.authPort, secret);
    nases.push(nas);
    await nas.bind(address);
    return { id: created.network.id, nas };
  }

  test("one network floods half-open PEAP conversations past its byte budget: its oldest are dropped, its bytes stay within it", async () => {
    const { id, nas } = await network("flood", "127.0.0.2");
    const opened: { state: Buffer; eapId: number }[] = [];
    // 60 conversations are under the count caps (100 and 300): only the bytes can bound them.
    for (let i = 0; i < 60; i++) {
      const conversation = await halfOpenPeap(nas, `flood-${i}`, hello);
      assert.ok(conversation, `conversation ${i} got the server's first flight`);
      opened.push(conversation);
    }
    // Oldest first, each acknowledges the server's fragment: a live conversation sends the next one.
    const alive: boolean[] = [];
    for (const [i, conversation] of opened.entries()) {
      const answer = await nas.send([
        ["EAP-Message", eap(2, conversation.eapId, 25, Buffer.of(0))],
        ["State", conversation.state],
      ]);
      alive.push(answer?.type === "Access-Challenge");
      if (!alive[i]) {
        assert.equal(answer?.type, "Access-Reject", `conversation ${i}`);
        assert.equal(attr(answer, "Reply-Message")?.toString(), "unknown or expired EAP State");
      }
    }
    const kept = alive.filter(Boolean).length;
    assert.equal(alive[0], false, "the oldest conversation was dropped");
    assert.deepEqual(
      alive,
      opened.map((_, i) => i >= opened.length - kept),
      "the dropped ones are the oldest",
    );
    const held = engine().heldBytes(id);
    console.log(`# kept ${kept} of 60, ${(held / kept / 1024).toFixed(1)} KiB charged each`);
    assert.ok(held <= LIMITS.perNetworkBytes, `held ${held} bytes`);
    // Each is charged its TLS connection: the budget holds about 30, not a handful nor all 60.
    assert.ok(kept >= 25 && kept <= 32, `kept ${kept}`);
  });

  test("a quiet network's conversation begun before ten networks flood still logs in; every budget holds", async () => {
    await lab.server.core.networks.create(lab.accountId, {
      name: "quiet",
      nas_ip: "127.0.0.3",
      secret: "quiet-Secret-7",
    });
    const floods = [];
    for (let k = 0; k < 10; k++) floods.push(await network(`flood${k}`, `127.0.0.${11 + k}`));
    // EAP-TTLS (inner PAP): identity, NAK, ClientHello; the server holds its TLS connection.
    const quiet = new Supplicant(lab, TTLS, { address: "127.0.0.3", secret: "quiet-Secret-7" });
    try {
      await quiet.begin();
      assert.equal((await quiet.hello()).type, "Access-Challenge");
      const evictedBefore = engine().evictedConversations;
      // Each network: 80 conversations, every other one half-open with a TLS connection. Together
      // 800: past the total count (300) and, at about 67 KiB each, past the total bytes (8 MiB).
      await Promise.all(
        floods.map(async ({ nas }, k) => {
          for (let i = 0; i < 80; i++) {
            if (i % 2) assert.ok(await halfOpenPeap(nas, `f${k}-${i}`, hello), `f${k}-${i}`);
            else {
              const start = await nas.send([["EAP-Message", identity(`f${k}-${i}`)]], { waitMs: 5000 });
              assert.equal(start?.type, "Access-Challenge");
            }
          }
        }),
      );
      assert.ok(engine().evictedConversations - evictedBefore >= 500, "the flood was trimmed");

      await quiet.finishHandshake();
      const answer = await quiet.inner(ttlsPap("alice", "alice-pw"));
      assert.equal(answer.type, "Access-Accept", "the quiet network's login went through");

      assert.ok(engine().openConversations <= LIMITS.total, `${engine().openConversations} open`);
      assert.ok(engine().heldBytes() <= LIMITS.totalBytes, `${engine().heldBytes()} bytes held`);
      for (const { id } of floods) {
        const held = engine().heldBytes(id);
        assert.ok(held > 0 && held <= LIMITS.perNetworkBytes, `network ${id}: ${held} bytes`);
      }
    } finally {
      quiet.close();
    }
  });
});

describe("EAP conversation bounds: the eviction rule", () => {
  /** A conversation of `bytes` bytes; nothing to free. */
  function conversation(key: string, networkId: number, bytes: number): Bound & { open: boolean } {
    return {
      key,
      networkId,
      address: "192.0.2.1",
      expires: 0,
      busy: false,
      charged: 0,
      open: true,
      heldBytes: () => bytes,
      close() {
        this.open = false;
      },
    };
  }

  test("a network within its fair share never loses a conversation to others' floods, by count or by bytes", () => {
    const random = prng(22);
    const limits = { ...LIMITS, perNetwork: 50, total: 200, perNetworkBytes: 1 * MiB, totalBytes: 4 * MiB };
    const conversations = new Conversations<ReturnType<typeof conversation>>(limits);
    try {
      // Network 1 is quiet: 3 conversations (one large), far within any fair share of 21 networks.
      const quiet = [4_000, 100_000, 1_000].map((bytes, i) => conversation(`q${i}`, 1, bytes));
      for (const c of quiet) conversations.add(c);
      // Twenty networks flood 5,000 conversations of 1 KiB to 80 KiB in random order.
      for (let i = 0; i < 5000; i++) {
        const networkId = 2 + random.int(20);
        conversations.add(conversation(`f${i}`, networkId, 1024 + random.int(80 * 1024)));
        assert.ok(conversations.size <= limits.total);
        assert.ok(conversations.bytes <= limits.totalBytes);
        assert.ok(conversations.bytesOf(networkId) <= limits.perNetworkBytes);
      }
      assert.ok(conversations.evicted > 4000, `${conversations.evicted} evicted`);
      assert.deepEqual(
        quiet.map((c) => c.open),
        [true, true, true],
        "the quiet network kept its conversations",
      );
      assert.equal(conversations.countOf(1), 3);
      assert.equal(conversations.bytesOf(1), 105_000);
      // Freed conversations give their bytes back.
      for (const c of quiet) conversations.remove(c);
      assert.equal(conversations.bytesOf(1), 0);
    } finally {
      conversations.close();
    }
    assert.equal(conversations.bytes, 0, "nothing charged once every conversation is gone");
  });

  test("EAP_MEMORY_PER_NETWORK_MB and EAP_MEMORY_MB: documented defaults, whole MiB, the per-network one within the total", () => {
    assert.equal(loadConfig({}).eapLimits.perNetworkBytes, 32 * MiB);
    assert.equal(loadConfig({}).eapLimits.totalBytes, 256 * MiB);
    assert.deepEqual(DEFAULT_EAP_LIMITS, loadConfig({}).eapLimits);
    const set = loadConfig({ EAP_MEMORY_PER_NETWORK_MB: "4", EAP_MEMORY_MB: "16" }).eapLimits;
    assert.deepEqual([set.perNetworkBytes, set.totalBytes], [4 * MiB, 16 * MiB]);
    for (const [env, message] of [
      [{ EAP_MEMORY_MB: "0.5" }, /^EAP_MEMORY_MB must be a whole number, got "0\.5"$/],
      [{ EAP_MEMORY_MB: "0" }, /^EAP_MEMORY_MB must be between 1 and 1000000$/],
      [{ EAP_MEMORY_PER_NETWORK_MB: "x" }, /^EAP_MEMORY_PER_NETWORK_MB must be a whole number, got "x"$/],
      [{ EAP_MEMORY_PER_NETWORK_MB: "64", EAP_MEMORY_MB: "32" }, /must not be more than EAP_MEMORY_MB/],
    ] as const) {
      assert.throws(
        () => loadConfig(env),
        (error: Error) => error instanceof ConfigError && message.test(error.message),
      );
    }
  });
});

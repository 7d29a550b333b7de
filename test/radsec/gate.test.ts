// The RadSec connection gate (src/radius/radsec/gate.ts): the global caps as well as the
// per-address ones (limits.test.ts runs the per-address cap against a real listener).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConnectionGate } from "../../src/radius/radsec/gate.ts";

const limits = {
  maxConnections: 5,
  maxConnectionsPerAddress: 3,
  handshakesPerSecond: 8,
  handshakesPerSecondPerAddress: 4,
};

describe("RadSec connection gate", () => {
  test("open connections are capped in all and per address; a release makes room", () => {
    const gate = new ConnectionGate({
      ...limits,
      handshakesPerSecond: 100,
      handshakesPerSecondPerAddress: 100,
    });
    const now = 1_000_000;
    assert.deepEqual(
      ["a", "a", "a", "a"].map((address) => gate.admit(address, now)),
      [null, null, null, "too_many_connections_from_address"],
    );
    assert.deepEqual(
      ["b", "c", "d"].map((address) => gate.admit(address, now)),
      [null, null, "too_many_connections"],
    );
    assert.equal(gate.connections, 5);
    gate.release("a");
    assert.equal(gate.admit("d", now), null);
  });

  test("handshakes per second are capped in all and per address, and the next second starts afresh", () => {
    const gate = new ConnectionGate({ ...limits, maxConnections: 100, maxConnectionsPerAddress: 100 });
    const second = 2_000_000;
    const results = Array.from({ length: 6 }, () => gate.admit("a", second));
    assert.deepEqual(results.slice(4), ["handshake_rate_from_address", "handshake_rate_from_address"]);
    assert.deepEqual(
      ["b", "b", "b", "b", "c"].map((address) => gate.admit(address, second + 10)),
      [null, null, null, null, "handshake_rate"],
    );
    assert.equal(gate.admit("a", second + 1000), null, "a new second");
  });

  test("sweep forgets addresses with nothing open once their second is over", () => {
    const gate = new ConnectionGate(limits);
    gate.admit("a", 5_000_000);
    gate.release("a");
    gate.sweep(5_000_500);
    for (let i = 0; i < 3; i++) gate.admit("a", 5_000_600);
    assert.equal(
      gate.admit("a", 5_000_700),
      "too_many_connections_from_address",
      "still counted within its second",
    );
    gate.sweep(5_002_000);
    assert.equal(gate.connections, 3);
  });
});

// The RadSec stream framer (src/radius/radsec/framing.ts) against fuzzed streams: any split of a
// valid stream gives back exactly its packets; any Length outside 20-4096 throws FramingError and
// nothing else; it never holds more than one unfinished packet.
import assert from "node:assert/strict";
import { randomBytes, randomInt } from "node:crypto";
import { describe, test } from "node:test";
import { FramingError, MAX_PACKET, PacketFramer } from "../../src/radius/radsec/framing.ts";

function packet(length: number): Buffer {
  const bytes = randomBytes(length);
  bytes.writeUInt16BE(length, 2);
  return bytes;
}

describe("RadSec framing", () => {
  test("any split or coalescing of a valid stream gives back its packets, in order", () => {
    for (let round = 0; round < 300; round++) {
      const packets = Array.from({ length: randomInt(1, 12) }, () => packet(randomInt(20, MAX_PACKET + 1)));
      const stream = Buffer.concat(packets);
      const framer = new PacketFramer();
      const out: Buffer[] = [];
      for (let at = 0; at < stream.length; ) {
        const size = randomInt(1, Math.min(stream.length - at, 6000) + 1);
        out.push(...framer.push(stream.subarray(at, at + size)));
        at += size;
      }
      assert.equal(framer.partial, false);
      assert.deepEqual(out, packets);
    }
  });

  test("Lengths 0, 19, 4097, 65535 and random garbage throw FramingError only", () => {
    for (const length of [0, 1, 19, 4097, 65535]) {
      const header = Buffer.alloc(4);
      header.writeUInt16BE(length, 2);
      assert.throws(() => new PacketFramer().push(header), FramingError);
    }
    for (let round = 0; round < 2000; round++) {
      const framer = new PacketFramer();
      try {
        for (let i = 0; i < 5; i++) framer.push(randomBytes(randomInt(1, 9000)));
      } catch (error) {
        assert.ok(error instanceof FramingError, String(error));
      }
    }
  });

  test("4096 octets is a packet; a packet's first bytes alone are held, not answered", () => {
    const framer = new PacketFramer();
    const big = packet(4096);
    assert.deepEqual(framer.push(big.subarray(0, 3)), []);
    assert.equal(framer.partial, true);
    assert.deepEqual(framer.push(big.subarray(3)), [big]);
  });
});

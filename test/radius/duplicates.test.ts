// The UDP door's cache of answers for retransmissions (src/radius/duplicates.ts): what a request is
// told (new, in progress, or its earlier answer), expiry, chunks dropped when their answers have all
// expired or when the cap is reached, and that an answer is only found by its own request. The
// door's use of it is tested in server.test.ts (a retransmission gets the identical answer).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { DuplicateCache, requestKey } from "../../src/radius/duplicates.ts";

const TTL = 10_000;
const A = "192.0.2.1";
const B = "2001:db8::1";

function answer(n: number, length = 100): Buffer {
  return Buffer.alloc(length, n & 0xff);
}

describe("DuplicateCache", () => {
  test("a request is new, then in progress, then answered with its own bytes", () => {
    const cache = new DuplicateCache(TTL);
    const key = requestKey(false, 40000, 7);
    const auth = randomBytes(16);
    assert.equal(cache.check(A, key, auth, 0), "new");
    assert.equal(cache.check(A, key, auth, 1), "in-progress");
    cache.answered(A, key, auth, answer(1), 2);
    assert.deepEqual(cache.check(A, key, auth, 3), answer(1));
    // The same key with another authenticator is another request (the identifier was reused).
    const other = randomBytes(16);
    assert.equal(cache.check(A, key, other, 4), "new");
    // ... and the first one's answer is still found while the second is decided.
    assert.deepEqual(cache.check(A, key, auth, 5), answer(1));
  });

  test("keys: the source, the source port, the identifier and the door's port tell requests apart", () => {
    const cache = new DuplicateCache(TTL);
    const auth = randomBytes(16);
    const keys = [
      requestKey(false, 40000, 7),
      requestKey(true, 40000, 7),
      requestKey(false, 40001, 7),
      requestKey(false, 40000, 8),
    ];
    assert.equal(new Set(keys).size, 4);
    cache.check(A, keys[0]!, auth, 0);
    cache.answered(A, keys[0]!, auth, answer(1), 0);
    for (const key of keys.slice(1)) assert.equal(cache.check(A, key, auth, 1), "new");
    assert.equal(cache.check(B, keys[0]!, auth, 1), "new");
    assert.deepEqual(cache.check(A, keys[0]!, auth, 1), answer(1));
  });

  test("an abandoned request is decided again; an answer expires after the TTL", () => {
    const cache = new DuplicateCache(TTL);
    const key = requestKey(false, 1812, 1);
    const auth = randomBytes(16);
    cache.check(A, key, auth, 0);
    cache.abandoned(A, key, auth);
    assert.equal(cache.check(A, key, auth, 1), "new");
    cache.answered(A, key, auth, answer(2), 1);
    assert.deepEqual(cache.check(A, key, auth, TTL), answer(2));
    assert.equal(cache.check(A, key, auth, TTL + 1), "new");
  });

  test("an older request's late answer does not end a newer one's in-progress mark", () => {
    const cache = new DuplicateCache(TTL);
    const key = requestKey(false, 1812, 1);
    const first = randomBytes(16);
    const second = randomBytes(16);
    cache.check(A, key, first, 0);
    cache.check(A, key, second, 1);
    cache.answered(A, key, first, answer(3), 2);
    assert.equal(cache.check(A, key, second, 3), "in-progress");
    cache.answered(A, key, second, answer(4), 4);
    assert.deepEqual(cache.check(A, key, second, 5), answer(4));
  });

  test("answers of every size up to 4096 octets come back whole across chunk boundaries", () => {
    const cache = new DuplicateCache(TTL);
    const sent: { key: number; auth: Buffer; bytes: Buffer }[] = [];
    // About 3 MiB of answers: they fill several 1 MiB chunks.
    for (let i = 0; i < 1500; i++) {
      const key = requestKey(false, 1000 + (i >> 8), i & 0xff);
      const auth = randomBytes(16);
      const bytes = randomBytes(20 + ((i * 977) % 4077));
      cache.check(A, key, auth, 0);
      cache.answered(A, key, auth, bytes, 0);
      sent.push({ key, auth, bytes });
    }
    assert.ok(cache.heldBytes >= 3 * 2 ** 20);
    for (const { key, auth, bytes } of sent) assert.deepEqual(cache.check(A, key, auth, 1), bytes);
    // An answer too long for a RADIUS packet is not kept (the request is decided again).
    const key = requestKey(false, 9, 9);
    const auth = randomBytes(16);
    cache.check(A, key, auth, 0);
    cache.answered(A, key, auth, Buffer.alloc(4097), 0);
    assert.equal(cache.check(A, key, auth, 1), "new");
  });

  test("sweep drops chunks whose answers expired; answers given again since stay", () => {
    const cache = new DuplicateCache(TTL);
    const auth = randomBytes(16);
    const big = 4000;
    // 300 answers of 4 KB at t=0 (two chunks), then one key answered again at t=5000.
    for (let i = 0; i < 300; i++) {
      const key = requestKey(false, 2000 + (i >> 8), i & 0xff);
      cache.check(A, key, auth, 0);
      cache.answered(A, key, auth, answer(i, big), 0);
    }
    const kept = requestKey(false, 2000, 5);
    const fresh = randomBytes(16);
    cache.check(A, kept, fresh, 5000);
    cache.answered(A, kept, fresh, answer(99), 5000);
    assert.equal(cache.heldBytes, 2 * 2 ** 20);
    cache.sweep(TTL + 1);
    // The first chunk (answers of t=0 only) is gone; the second holds the t=5000 answer.
    assert.equal(cache.heldBytes, 2 ** 20);
    assert.deepEqual(cache.check(A, kept, fresh, TTL + 2), answer(99));
    cache.sweep(5000 + TTL + 1);
    assert.equal(cache.heldBytes, 0);
    assert.equal(cache.check(A, kept, fresh, 5000 + TTL + 2), "new");
  });

  test("at the cap the oldest chunk goes before its time, and its answers with it", () => {
    const cache = new DuplicateCache(TTL, 2);
    const auth = randomBytes(16);
    const keyOf = (i: number) => requestKey(false, 3000 + (i >> 8), i & 0xff);
    // 4 KB answers: 255 per chunk; 800 of them need four chunks, the cap is two.
    for (let i = 0; i < 800; i++) {
      cache.check(A, keyOf(i), auth, 0);
      cache.answered(A, keyOf(i), auth, answer(i, 4000), 0);
    }
    assert.equal(cache.heldBytes, 2 * 2 ** 20);
    assert.equal(cache.check(A, keyOf(0), auth, 1), "new");
    assert.deepEqual(cache.check(A, keyOf(799), auth, 1), answer(799, 4000));
  });
});

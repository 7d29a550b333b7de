// RADIUS's MD5 authenticators computed by the OpenSSL addon (openssl-tunnel.c radiusHmac and
// radiusDigest) against the same computed with crypto.hash (src/radius/packet/crypto.ts): the
// same octets for random packets of every length, Message-Authenticator anywhere, long secrets;
// bad arguments refused; packets signed one way verified the other.
import assert from "node:assert/strict";
import { randomBytes, randomInt } from "node:crypto";
import { after, describe, test } from "node:test";
import { openSslAddon } from "../../src/radius/eap/native-addon.ts";
import {
  digestWith,
  hmacOver,
  nativeDigestsInUse,
  useNativeDigests,
} from "../../src/radius/packet/crypto.ts";
import { secretKey } from "../../src/radius/packet/shared.ts";
import { encodePacket, verifyMessageAuthenticator, verifyResponse } from "../../src/radius/packet.ts";

/** A packet of `length` octets with one Message-Authenticator at a random attribute boundary, or none. */
function randomPacket(length: number, withMa: boolean): { packet: Buffer; maAt: number } {
  const packet = randomBytes(length);
  packet.writeUInt16BE(length, 2);
  if (!withMa || length < 38) return { packet, maAt: -1 };
  const maAt = 20 + randomInt(length - 38 + 1);
  packet[maAt] = 80;
  packet[maAt + 1] = 18;
  return { packet, maAt };
}

function bothWays<T>(compute: () => T): { native: T; script: T } {
  useNativeDigests(true);
  const native = compute();
  useNativeDigests(false);
  const script = compute();
  useNativeDigests(true);
  return { native, script };
}

describe("RADIUS authenticators on the OpenSSL addon", () => {
  after(() => useNativeDigests(true));

  test("the build made the addon and authenticators use it", () => {
    assert.ok(!("error" in openSslAddon()), "the addon is built");
    assert.equal(nativeDigestsInUse(), true);
  });

  test("the same octets as crypto.hash: 400 random packets, secrets of 1-200 octets", () => {
    for (let i = 0; i < 400; i++) {
      const length = i < 5 ? 20 + i : 20 + randomInt(4077);
      const { packet, maAt } = randomPacket(length, i % 3 !== 0);
      const auth = randomBytes(16);
      const key = secretKey(randomBytes(1 + randomInt(200)).toString("latin1"));
      const hmac = bothWays(() => hmacOver(packet, length, maAt, auth, key));
      assert.deepEqual(hmac.native, hmac.script, `HMAC, length ${length}, MA at ${maAt}`);
      const digest = bothWays(() => digestWith(packet, length, auth, key.key));
      assert.deepEqual(digest.native, digest.script, `digest, length ${length}`);
    }
  });

  test("written in place: into the packet's own Message-Authenticator and Authenticator fields", () => {
    const { packet, maAt } = randomPacket(300, true);
    const key = secretKey("in-place-secret");
    const auth = randomBytes(16);
    const copies = bothWays(() => {
      const copy = Buffer.from(packet);
      hmacOver(copy, copy.length, maAt, auth, key, copy, maAt + 2);
      digestWith(copy, copy.length, auth, key.key, copy, 4);
      return copy;
    });
    assert.deepEqual(copies.native, copies.script);
    assert.notDeepEqual(copies.native, packet);
  });

  test("bad arguments are refused, nothing is written", () => {
    const found = openSslAddon();
    assert.ok(!("error" in found));
    const { addon } = found;
    const key = secretKey("bad-arguments");
    const { packet } = randomPacket(100, false);
    const out = Buffer.alloc(16);
    const auth = Buffer.alloc(16);
    const refused = [
      () => addon.radiusHmac(out, 1, key.ipad, key.opad, packet, 100, -1, auth), // out too short from 1
      () => addon.radiusHmac(out, 0, key.ipad, key.opad, packet, 101, -1, auth), // past the packet
      () => addon.radiusHmac(out, 0, key.ipad, key.opad, packet, 19, -1, auth), // shorter than a header
      () => addon.radiusHmac(out, 0, key.ipad, key.opad, packet, 100, 90, auth), // MA past the end
      () => addon.radiusHmac(out, 0, key.ipad, key.opad, packet, 100, 10, auth), // MA in the header
      () => addon.radiusHmac(out, 0, key.ipad, key.opad, packet, 100, -1, Buffer.alloc(15)),
      () => addon.radiusHmac(out, 0, key.key, key.opad, packet, 100, -1, auth), // not a 64-octet pad
      () => addon.radiusDigest(out, 0, packet, 101, auth, key.key),
      () => addon.radiusDigest(out, -1, packet, 100, auth, key.key),
      () => addon.radiusDigest(out, 0, packet, 100, auth, "secret" as unknown as Buffer),
    ];
    for (const call of refused) assert.throws(call, TypeError);
    assert.deepEqual(out, Buffer.alloc(16));
  });

  test("a response signed by one way is verified by the other", () => {
    const secret = "cross-check-secret";
    const requestAuthenticator = randomBytes(16);
    const eap = randomBytes(1200);
    const sign = () =>
      encodePacket(
        {
          code: 11,
          identifier: 7,
          attributes: [
            ["EAP-Message", eap],
            ["State", randomBytes(16)],
          ],
        },
        secret,
        { requestAuthenticator, requestCode: 1, messageAuthenticator: true },
      );
    useNativeDigests(true);
    const nativeSigned = sign();
    useNativeDigests(false);
    const scriptSigned = sign();
    assert.equal(verifyResponse(nativeSigned, secret, requestAuthenticator), true);
    assert.equal(verifyMessageAuthenticator(nativeSigned, secret, requestAuthenticator), true);
    useNativeDigests(true);
    assert.equal(verifyResponse(scriptSigned, secret, requestAuthenticator), true);
    const tampered = Buffer.from(scriptSigned);
    tampered[tampered.length - 1]! ^= 1;
    assert.equal(verifyResponse(tampered, secret, requestAuthenticator), false);
  });
});

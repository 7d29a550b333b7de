// MS-CHAPv2 crypto against the published vectors: MD4 (RFC 1320 appendix A.5), the hash example of
// RFC 2759 section 9.2 and its DES key example (section 9.3), the 128-bit MPPE keys of RFC 3079
// section 3.5.3, and the RFC 2548 MS-MPPE key hiding.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { desEncryptBlock, desKeyFrom7 } from "../../src/core/aaa/des.ts";
import { md4 } from "../../src/core/aaa/md4.ts";
import {
  hashNtPasswordHash,
  ntPasswordHash,
  papNtPasswordHash,
  parseNtPassword,
} from "../../src/core/aaa/nt-hash.ts";
import { openSslAddon } from "../../src/radius/eap/native-addon.ts";
import {
  challengeHash,
  challengeResponse,
  generateAuthenticatorResponse,
  generateNtResponse,
  MschapV2Verifier,
  mppeMasterKey,
  mppeMasterKeys,
  mschapUserName,
  useNativeDes,
} from "../../src/radius/mschap/mschapv2.ts";
import { decryptMppeKey, encryptMppeKey } from "../../src/radius/packet/mppe.ts";

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ""), "hex");

// RFC 2759 section 9.2, "Hash Example".
const USER = "User";
const PASSWORD = "clientPass";
const AUTHENTICATOR_CHALLENGE = hex("5B 5D 7C 7D 7B 3F 2F 3E 3C 2C 60 21 32 26 26 28");
const PEER_CHALLENGE = hex("21 40 23 24 25 5E 26 2A 28 29 5F 2B 3A 33 7C 7E");
const CHALLENGE = hex("D0 2E 43 86 BC E9 12 26");
const PASSWORD_HASH = hex("44 EB BA 8D 53 12 B8 D6 11 47 44 11 F5 69 89 AE");
const NT_RESPONSE = hex("82 30 9E CD 8D 70 8B 5E A0 8F AA 39 81 CD 83 54 42 33 11 4A 3D 85 D6 DF");
const PASSWORD_HASH_HASH = hex("41 C0 0C 58 4B D2 D9 1C 40 17 A2 A1 2F A5 9F 3F");
const AUTHENTICATOR_RESPONSE = "S=407A5589115FD0D6209F510FE9C04566932CDA56";

describe("MD4 (RFC 1320 appendix A.5)", () => {
  const vectors: [string, string][] = [
    ["", "31d6cfe0d16ae931b73c59d7e0c089c0"],
    ["a", "bde52cb31de33e46245e05fbdbd6fb24"],
    ["abc", "a448017aaf21d8525fc10ae87aa6729d"],
    ["message digest", "d9130a8164549fe818874806e1c7014b"],
    ["abcdefghijklmnopqrstuvwxyz", "d79e1c308aa5bbcdeea8ed63df412da9"],
    ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "043f8582f241db351ce627e153e7f0e4"],
    ["1234567890".repeat(8), "e33b4ddc9c38f2199c3e7b164fcc0536"],
  ];
  for (const [input, digest] of vectors) {
    test(`MD4(${JSON.stringify(input.length > 20 ? `${input.slice(0, 20)}...` : input)})`, () => {
      assert.equal(md4(Buffer.from(input, "ascii")).toString("hex"), digest);
    });
  }

  test("every length around the padding boundaries agrees with OpenSSL's legacy MD4 when it has one", (t) => {
    // node:crypto's md4 exists only with the legacy provider; without it there is nothing to compare.
    let reference: ((data: Buffer) => Buffer) | undefined;
    try {
      createHash("md4").update("x").digest();
      reference = (data) => createHash("md4").update(data).digest();
    } catch {
      t.diagnostic("node:crypto has no MD4 here (OpenSSL 3 without the legacy provider); RFC vectors only");
    }
    const data = Buffer.alloc(200);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31 + 7) & 0xff;
    const digests = new Set<string>();
    for (let length = 0; length <= 200; length++) {
      const digest = md4(data.subarray(0, length));
      assert.equal(digest.length, 16);
      digests.add(digest.toString("hex"));
      if (reference) assert.deepEqual(digest, reference(data.subarray(0, length)), `length ${length}`);
    }
    assert.equal(digests.size, 201, "no two lengths give the same digest");
  });
});

describe("MS-CHAPv2 (RFC 2759 section 9.2)", () => {
  test("NtPasswordHash and HashNtPasswordHash", () => {
    assert.deepEqual(ntPasswordHash(PASSWORD), PASSWORD_HASH);
    assert.deepEqual(hashNtPasswordHash(PASSWORD_HASH), PASSWORD_HASH_HASH);
  });

  test("ChallengeHash", () => {
    assert.deepEqual(challengeHash(PEER_CHALLENGE, AUTHENTICATOR_CHALLENGE, USER), CHALLENGE);
  });

  test("ChallengeResponse and GenerateNTResponse", () => {
    assert.deepEqual(challengeResponse(CHALLENGE, PASSWORD_HASH), NT_RESPONSE);
    assert.deepEqual(
      generateNtResponse(AUTHENTICATOR_CHALLENGE, PEER_CHALLENGE, USER, PASSWORD_HASH),
      NT_RESPONSE,
    );
  });

  test("ChallengeResponse on the OpenSSL addon (3DES under one key) gives des.js's octets", () => {
    const found = openSslAddon();
    assert.ok(!("error" in found), "the addon is built");
    try {
      // RFC 2759 section 9.2's vector on the addon itself (challengeResponse falls back to des.js
      // when the addon disagrees, so it alone would not tell).
      const keys = Buffer.concat([PASSWORD_HASH, Buffer.alloc(5)]);
      const direct = Buffer.alloc(24);
      found.addon.mschapChallengeResponse(direct, CHALLENGE, keys);
      assert.deepEqual(direct, NT_RESPONSE);
      for (let i = 0; i < 500; i++) {
        const challenge = randomBytes(8);
        const hash = randomBytes(16);
        useNativeDes(false);
        const expected = challengeResponse(challenge, hash);
        useNativeDes(true);
        assert.deepEqual(challengeResponse(challenge, hash), expected);
      }
      const out = Buffer.alloc(24);
      for (const args of [
        [Buffer.alloc(23), Buffer.alloc(8), Buffer.alloc(21)],
        [out, Buffer.alloc(7), Buffer.alloc(21)],
        [out, Buffer.alloc(8), Buffer.alloc(20)],
      ] as const) {
        assert.throws(() => found.addon.mschapChallengeResponse(...args), TypeError);
      }
      assert.deepEqual(out, Buffer.alloc(24));
    } finally {
      useNativeDes(true);
    }
  });

  test("GenerateAuthenticatorResponse", () => {
    assert.equal(
      generateAuthenticatorResponse(
        PASSWORD_HASH,
        NT_RESPONSE,
        PEER_CHALLENGE,
        AUTHENTICATOR_CHALLENGE,
        USER,
      ),
      AUTHENTICATOR_RESPONSE,
    );
  });

  test("a domain before a backslash is not hashed; a realm after @ is", () => {
    assert.equal(mschapUserName("ACME\\User"), "User");
    assert.equal(mschapUserName("A\\B\\User"), "B\\User");
    assert.equal(mschapUserName("User@example.org"), "User@example.org");
    assert.deepEqual(challengeHash(PEER_CHALLENGE, AUTHENTICATOR_CHALLENGE, "ACME\\User"), CHALLENGE);
    assert.notDeepEqual(challengeHash(PEER_CHALLENGE, AUTHENTICATOR_CHALLENGE, "User@acme"), CHALLENGE);
    assert.equal(
      generateAuthenticatorResponse(
        PASSWORD_HASH,
        NT_RESPONSE,
        PEER_CHALLENGE,
        AUTHENTICATOR_CHALLENGE,
        "ACME\\User",
      ),
      AUTHENTICATOR_RESPONSE,
    );
  });

  test("any other password, challenge or name gives another response", () => {
    const other = ntPasswordHash("clientPasS");
    assert.notDeepEqual(
      generateNtResponse(AUTHENTICATOR_CHALLENGE, PEER_CHALLENGE, USER, other),
      NT_RESPONSE,
    );
    assert.notDeepEqual(generateNtResponse(PEER_CHALLENGE, PEER_CHALLENGE, USER, PASSWORD_HASH), NT_RESPONSE);
    assert.notDeepEqual(
      generateNtResponse(AUTHENTICATOR_CHALLENGE, PEER_CHALLENGE, "user", PASSWORD_HASH),
      NT_RESPONSE,
    );
  });

  test("wrong sizes are refused, not padded", () => {
    assert.throws(() => challengeHash(PEER_CHALLENGE.subarray(1), AUTHENTICATOR_CHALLENGE, USER), RangeError);
    assert.throws(() => challengeResponse(CHALLENGE, PASSWORD_HASH.subarray(1)), RangeError);
    assert.throws(() => mppeMasterKeys(PASSWORD_HASH, NT_RESPONSE.subarray(1)), RangeError);
  });

  test("non-ASCII passwords hash as UTF-16LE, astral characters as surrogate pairs", () => {
    assert.deepEqual(ntPasswordHash("pässwörd🔑"), md4(Buffer.from("pässwörd🔑", "utf16le")));
    assert.equal(Buffer.from("🔑", "utf16le").toString("hex"), "3dd811dd");
    assert.notDeepEqual(ntPasswordHash("pässwörd"), ntPasswordHash("pa\u0308sswo\u0308rd"));
  });
});

describe("MschapV2Verifier", () => {
  test("proves nothing until a hash matches, then gives the RFC's S= and keys", () => {
    const verifier = new MschapV2Verifier({
      authenticatorChallenge: AUTHENTICATOR_CHALLENGE,
      peerChallenge: PEER_CHALLENGE,
      ntResponse: NT_RESPONSE,
      username: USER,
    });
    assert.equal(verifier.authenticatorResponse(), undefined);
    assert.equal(verifier.verify(ntPasswordHash("clientpass")), false);
    assert.equal(verifier.mppeKeys(), undefined, "a wrong hash leaves nothing behind");
    assert.equal(verifier.verify(PASSWORD_HASH), true);
    assert.equal(verifier.authenticatorResponse(), AUTHENTICATOR_RESPONSE);
    assert.deepEqual(
      verifier.mppeKeys()?.masterSendKey,
      hex("8B 7C DC 14 9B 99 3A 1B A1 18 CB 15 3F 56 DC CB"),
    );
    assert.throws(
      () =>
        new MschapV2Verifier({
          authenticatorChallenge: AUTHENTICATOR_CHALLENGE,
          peerChallenge: PEER_CHALLENGE,
          ntResponse: NT_RESPONSE.subarray(2),
          username: USER,
        }),
      RangeError,
    );
  });
});

describe("DES for MS-CHAP", () => {
  test("7-octet keys get odd parity bits as in RFC 2759 section 9.3", () => {
    // Password "MyPw": its hash, then the two parity-corrected DES keys.
    const hash = hex("FC 15 6A F7 ED CD 6C 0E DD E3 33 7D 42 7F 4E AC");
    assert.deepEqual(ntPasswordHash("MyPw"), hash);
    assert.deepEqual(desKeyFrom7(hash.subarray(0, 7)), hex("FD 0B 5B 5E 7F 6E 34 D9"));
    assert.deepEqual(desKeyFrom7(hex("0E DD E3 33 7D 42 7F")), hex("0E 6E 79 67 37 EA 08 FE"));
  });

  test("the classic DES example encrypts as published", () => {
    // Key 13 34 57 79 9B BC DF F1 (parity bits included), plaintext 0123456789ABCDEF -> 85E813540F0AB405.
    // Its 56 key bits as 7 octets give the same 8-octet key back (parity aside).
    const key7 = hex("13 34 57 79 9B BC DF F1");
    let bits = 0n;
    for (const octet of key7) bits = (bits << 7n) | BigInt(octet >> 1);
    const packed = Buffer.from(bits.toString(16).padStart(14, "0"), "hex");
    assert.deepEqual(desEncryptBlock(hex("0123456789ABCDEF"), packed), hex("85E813540F0AB405"));
  });
});

describe("MPPE keys from MS-CHAPv2 (RFC 3079 section 3.5.3)", () => {
  test("GetMasterKey and the server's send key", () => {
    assert.deepEqual(
      mppeMasterKey(PASSWORD_HASH, NT_RESPONSE),
      hex("FD EC E3 71 7A 8C 83 8C B3 88 E5 27 AE 3C DD 31"),
    );
    const { masterSendKey, masterRecvKey } = mppeMasterKeys(PASSWORD_HASH, NT_RESPONSE);
    // The RFC's SendStartKey128 is GetAsymmetricStartKey(..., IsSend TRUE, IsServer TRUE): Magic3.
    assert.deepEqual(masterSendKey, hex("8B 7C DC 14 9B 99 3A 1B A1 18 CB 15 3F 56 DC CB"));
    assert.equal(masterRecvKey.length, 16);
    assert.notDeepEqual(masterRecvKey, masterSendKey);
  });
});

describe("MS-MPPE key hiding (RFC 2548 sections 2.4.2-2.4.3)", () => {
  const SECRET = "mppe-secret";
  const REQUEST_AUTHENTICATOR = hex("00112233445566778899AABBCCDDEEFF");
  const KEY = hex("8B 7C DC 14 9B 99 3A 1B A1 18 CB 15 3F 56 DC CB");

  test("salt with the high bit, length octet, padding to 16, MD5 chain", () => {
    const value = encryptMppeKey(KEY, SECRET, REQUEST_AUTHENTICATOR, hex("1234"));
    assert.equal(value.length, 2 + 32, "salt + (1 length octet + 16 key octets, padded to 32)");
    assert.deepEqual(value.subarray(0, 2), hex("9234"), "the salt's most significant bit is set");
    // Independently: b1 = MD5(S + R + A), c1 = p1 xor b1; b2 = MD5(S + c1), c2 = p2 xor b2.
    const plain = Buffer.concat([Buffer.of(16), KEY, Buffer.alloc(15)]);
    const md5 = (...parts: Buffer[]) => createHash("md5").update(Buffer.concat(parts)).digest();
    const b1 = md5(Buffer.from(SECRET), REQUEST_AUTHENTICATOR, value.subarray(0, 2));
    const c1 = Buffer.from(plain.subarray(0, 16).map((octet, i) => octet ^ b1[i]!));
    const b2 = md5(Buffer.from(SECRET), c1);
    const c2 = Buffer.from(plain.subarray(16, 32).map((octet, i) => octet ^ b2[i]!));
    assert.deepEqual(value.subarray(2), Buffer.concat([c1, c2]));
    assert.deepEqual(decryptMppeKey(value, SECRET, REQUEST_AUTHENTICATOR), KEY);
  });

  test("random salts differ; the wrong secret or authenticator does not give the key back", () => {
    const a = encryptMppeKey(KEY, SECRET, REQUEST_AUTHENTICATOR);
    const b = encryptMppeKey(KEY, SECRET, REQUEST_AUTHENTICATOR);
    assert.ok(a[0]! & 0x80 && b[0]! & 0x80);
    assert.deepEqual(decryptMppeKey(a, SECRET, REQUEST_AUTHENTICATOR), KEY);
    assert.deepEqual(decryptMppeKey(b, SECRET, REQUEST_AUTHENTICATOR), KEY);
    assert.notDeepEqual(decryptMppeKey(a, "other", REQUEST_AUTHENTICATOR), KEY);
    assert.notDeepEqual(decryptMppeKey(a, SECRET, Buffer.alloc(16)), KEY);
    assert.equal(decryptMppeKey(Buffer.alloc(10), SECRET, REQUEST_AUTHENTICATOR), undefined);
    const noHighBit = Buffer.from(a);
    noHighBit[0]! &= 0x7f;
    assert.equal(decryptMppeKey(noHighBit, SECRET, REQUEST_AUTHENTICATOR), undefined);
    assert.throws(() => encryptMppeKey(KEY, SECRET, REQUEST_AUTHENTICATOR, hex("12")), RangeError);
  });
});

describe("NT-Password check items", () => {
  test("32 hex digits, 0x optional, either case, or 16 other octets; anything else is no hash", () => {
    const hash = hex("8846f7eaee8fb117ad06bdd830b7586c");
    assert.deepEqual(parseNtPassword("8846f7eaee8fb117ad06bdd830b7586c"), hash);
    assert.deepEqual(parseNtPassword("0x8846F7EAEE8FB117AD06BDD830B7586C"), hash);
    assert.deepEqual(parseNtPassword("0X8846f7eaee8fb117ad06bdd830b7586c"), hash);
    for (const bad of [
      "",
      "0x",
      "8846f7eaee8fb117ad06bdd830b7586",
      "8846f7eaee8fb117ad06bdd830b7586c00",
      "password",
      "zz46f7eaee8fb117ad06bdd830b7586c",
    ]) {
      assert.equal(parseNtPassword(bad), undefined, bad);
    }
    assert.deepEqual(parseNtPassword("sixteen-octets!!"), Buffer.from("sixteen-octets!!"));
    assert.deepEqual(
      parseNtPassword("fünfzehn-oktett"),
      Buffer.from("fünfzehn-oktett"),
      "16 octets in UTF-8",
    );
    // "password" hashes to the NT-Password above (the usual example).
    assert.deepEqual(ntPasswordHash("password"), hash);
  });

  test("base64 of 16 octets, padded or not, is the hash (rlm_pap's normalise); other base64 is not", () => {
    const hash = hex("8846f7eaee8fb117ad06bdd830b7586c");
    assert.deepEqual(parseNtPassword("iEb36u6PsRetBr3YMLdYbA=="), hash);
    assert.deepEqual(parseNtPassword("iEb36u6PsRetBr3YMLdYbA"), hash);
    for (const bad of [
      "iEb36u6PsRetBr3YMLdYbAAA", // 18 octets
      "iEb36u6PsRetBr3YMLdYbA=x", // not base64 after the padding
      "iEb36u6PsRetBr3Y LdYbA==", // a space
      "iEb36u6PsRetBr3YMLdYbAA", // 17 octets
    ]) {
      assert.equal(parseNtPassword(bad), undefined, bad);
    }
    // 0x... is read as octets first, then normalised: hex digits in hex are decoded twice.
    assert.deepEqual(parseNtPassword(`0x${Buffer.from(hash.toString("hex")).toString("hex")}`), hash);
  });
});

describe("PAP's NT hash of the octets sent (rlm_pap's pap_auth_nt, fr_utf8_to_ucs2)", () => {
  test("valid UTF-8 in the BMP hashes as its text does", () => {
    for (const text of ["", "password", "pässwörd € 漢字", "é".repeat(64)]) {
      assert.deepEqual(papNtPasswordHash(Buffer.from(text)), ntPasswordHash(text), text);
    }
  });

  test("other octets are read FreeRADIUS's way, not as UTF-8", () => {
    const units = (...codes: number[]) => {
      const utf16le = Buffer.alloc(codes.length * 2);
      for (const [i, code] of codes.entries()) utf16le.writeUInt16LE(code, i * 2);
      return md4(utf16le);
    };
    // Continuation bytes are not checked and overlong forms are not refused.
    assert.deepEqual(papNtPasswordHash(Buffer.from([0xc1, 0xa9])), units(0x69));
    assert.deepEqual(papNtPasswordHash(Buffer.from([0xc1, 0x29])), units(0x69));
    // CESU-8 surrogates give the pair Windows hashes; the four bytes of UTF-8 do not.
    assert.deepEqual(
      papNtPasswordHash(Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb4, 0x91])),
      ntPasswordHash("🔑"),
    );
    assert.deepEqual(papNtPasswordHash(Buffer.from("🔑x")), units(0x07d4, 0x1e00));
    // A three-byte sequence cut after two reads the terminating NUL; a lead byte last fails.
    assert.deepEqual(papNtPasswordHash(Buffer.from([0xe4, 0xb8])), ntPasswordHash("一"));
    assert.equal(papNtPasswordHash(Buffer.from("🔑")), undefined);
    assert.equal(papNtPasswordHash(Buffer.from([0x61, 0xc3])), undefined);
  });
});

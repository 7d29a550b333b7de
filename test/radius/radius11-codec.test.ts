// RADIUS/1.1 (RFC 9765) in the packet codec: the header (Token and reserved octets), plain values
// for what RADIUS hides with MD5, Message-Authenticator never sent and dropped when received, and
// today's RADIUS/UDP behaviour unchanged. Expected packets are built by hand from the RFCs' layouts.
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { describe, test } from "node:test";
import {
  ALPN_RADIUS_1_1,
  type AttributeInput,
  chapPassword,
  decodePacket,
  encodePacket,
  getAttribute,
  type PacketInput,
  type RadiusAttribute,
  RadiusDecodeError,
  RadiusEncodeError,
  type RadiusPacket,
  TOKEN_LENGTH,
  tokenCounter,
  tokenOf,
  verifyChap,
  verifyMessageAuthenticator,
} from "../../src/radius/packet.ts";

function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ""), "hex");
}

function show(packet: RadiusPacket): string[] {
  return packet.attributes.map((a) => `${a.name}${a.tag === undefined ? "" : `:${a.tag}`}=${a.value}`);
}

function only(packet: RadiusPacket, name: string): RadiusAttribute {
  const a = getAttribute(packet, name);
  assert.ok(a, `${name} missing from ${show(packet).join(", ")}`);
  return a;
}

const TOKEN = hex("deadbeef");
const RESERVED = Buffer.alloc(12);

function encode11(packet: PacketInput, token = TOKEN): Buffer {
  return encodePacket(packet, "", { radius11: { token } });
}

/** A RADIUS/1.1 packet by hand (RFC 9765 section 4.1): code, identifier, length, token, 12 zeros. */
function packet11(code: number, identifier: number, token: Buffer, attributes: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(20 + attributes.length);
  return Buffer.concat([Buffer.of(code, identifier), length, token, RESERVED, attributes]);
}

/** One attribute: type, length, value (RFC 2865 section 5). */
function attr(type: number, value: Buffer | string): Buffer {
  const v = typeof value === "string" ? Buffer.from(value, "latin1") : value;
  return Buffer.concat([Buffer.of(type, v.length + 2), v]);
}

/** A Microsoft (311) Vendor-Specific attribute (RFC 2865 section 5.26, RFC 2548 section 2). */
function msVsa(type: number, value: Buffer): Buffer {
  return attr(26, Buffer.concat([hex("00000137"), Buffer.of(type, value.length + 2), value]));
}

describe("RADIUS/1.1 header (RFC 9765 section 4.1)", () => {
  test("Identifier, Token and 12 zero reserved octets, byte for byte", () => {
    // A RADIUS/UDP Access-Request first leaves a random authenticator in the encoder's scratch.
    encodePacket({ code: "Access-Request", identifier: 7, attributes: [["User-Name", "x"]] }, "s");
    const out = encode11({ code: "Access-Accept", identifier: 0x2a, attributes: [["Reply-Message", "hi"]] });
    assert.deepEqual(out, hex("02 2a 0018 deadbeef 000000000000000000000000 12 04 6869"));
    assert.deepEqual(tokenOf(out), TOKEN);
  });

  test("decodes the header: token, the identifier as sent, reserved octets ignored", () => {
    const buf = packet11(1, 0x99, hex("00000001"), attr(1, "bob"));
    buf.fill(0xff, 8, 20); // reserved octets MUST be ignored on receipt
    const p = decodePacket(buf, { radius11: true });
    assert.equal(p.type, "Access-Request");
    assert.equal(p.identifier, 0x99);
    assert.deepEqual(p.token, hex("00000001"));
    assert.deepEqual(show(p), ["User-Name=bob"]);
    // RADIUS/UDP decoding has no token.
    assert.equal(decodePacket(buf).token, undefined);
  });

  test("a reply carries its request's Identifier and Token", () => {
    const request = decodePacket(
      encode11({ code: "Access-Request", identifier: 0, attributes: [["User-Name", "a"]] }, hex("01020304")),
      { radius11: true },
    );
    const reply = encode11({ code: 2, identifier: request.identifier }, request.token);
    assert.deepEqual(reply, packet11(2, 0, hex("01020304"), Buffer.alloc(0)));
    // The token is a copy: the caller may keep it after the packet buffer is reused.
    const raw = packet11(1, 0, hex("0a0b0c0d"), Buffer.alloc(0));
    const token = tokenOf(raw);
    raw.fill(0);
    assert.deepEqual(token, hex("0a0b0c0d"));
  });

  test("needs no secret: an empty one is accepted in 1.1, refused for RADIUS/UDP", () => {
    assert.doesNotThrow(() => encode11({ code: 1, identifier: 0 }));
    assert.throws(() => encodePacket({ code: 1, identifier: 0 }, ""), TypeError);
  });

  test("refuses a token that is not a Buffer of 4 octets", () => {
    for (const token of [hex("010203"), hex("0102030405"), "abcd" as unknown as Buffer, undefined]) {
      const options = { radius11: { token: token as Buffer } };
      assert.throws(() => encodePacket({ code: 1, identifier: 0 }, "", options), TypeError);
    }
  });

  test("tokenOf refuses what is shorter than a header", () => {
    assert.throws(() => tokenOf(Buffer.alloc(19)), RadiusDecodeError);
    assert.equal(TOKEN_LENGTH, 4);
    assert.equal(ALPN_RADIUS_1_1, "radius/1.1");
  });

  test("tokenCounter counts from a random start and wraps", () => {
    const next = tokenCounter();
    const first = next().readUInt32BE(0);
    for (let i = 1; i < 5; i++) assert.equal(next().readUInt32BE(0), (first + i) >>> 0);
    const starts = new Set(Array.from({ length: 8 }, () => tokenCounter()().readUInt32BE(0)));
    assert.ok(starts.size > 1, "counters start at random values");
  });
});

describe("User-Password as plain octets (RFC 9765 section 5.1.1)", () => {
  test("on the wire as a string attribute, no padding, no MD5", () => {
    const out = encode11({
      code: "Access-Request",
      identifier: 0,
      attributes: [
        ["User-Name", "nemo"],
        ["User-Password", "arctangent"],
      ],
    });
    assert.deepEqual(out, packet11(1, 0, TOKEN, Buffer.concat([attr(1, "nemo"), attr(2, "arctangent")])));
    const pw = only(decodePacket(out, { radius11: true }), "User-Password");
    assert.deepEqual(pw.raw, Buffer.from("arctangent"));
    assert.equal(pw.value, "arctangent");
    assert.equal(pw.encrypted, undefined);
  });

  test("a 40-octet password round-trips in one 42-octet attribute", () => {
    const password = "0123456789abcdefghijklmnopqrstuvwxyzABCD";
    assert.equal(password.length, 40);
    const out = encode11({ code: 1, identifier: 0, attributes: [["User-Password", password]] });
    assert.deepEqual(out.subarray(20), attr(2, password));
    assert.equal(out[21], 42);
    assert.equal(only(decodePacket(out, { radius11: true }), "User-Password").value, password);
  });

  test("NULs inside and at the end are kept (nothing is padding in 1.1)", () => {
    for (const password of [hex("61 62 00 63 64"), hex("61 62 63 00")]) {
      const out = encode11({ code: 1, identifier: 0, attributes: [["User-Password", password]] });
      assert.deepEqual(out.subarray(20), attr(2, password));
      assert.deepEqual(only(decodePacket(out, { radius11: true }), "User-Password").raw, password);
    }
  });

  test("128 octets at most", () => {
    const ok = encode11({ code: 1, identifier: 0, attributes: [["User-Password", "p".repeat(128)]] });
    assert.equal(ok.length, 20 + 130);
    assert.throws(
      () => encode11({ code: 1, identifier: 0, attributes: [["User-Password", "p".repeat(129)]] }),
      RadiusEncodeError,
    );
  });

  test("a secret given to the decoder is not used: the octets are the password", () => {
    const out = encode11({ code: 1, identifier: 0, attributes: [["User-Password", "s3cret"]] });
    const p = decodePacket(out, { radius11: true, secret: "whatever" });
    assert.equal(only(p, "User-Password").value, "s3cret");
  });
});

describe("Tunnel-Password and MS-MPPE keys as plain values (RFC 9765 sections 5.1.3, 5.1.4)", () => {
  test("Tunnel-Password: tag octet then the password, no salt, no length octet", () => {
    const out = encode11({
      code: "Access-Accept",
      identifier: 3,
      attributes: [
        { name: "Tunnel-Password", value: "tunnelpw", tag: 1 },
        ["Tunnel-Password:2", "second"],
        ["Tunnel-Password", "untagged"],
      ],
    });
    const expected = Buffer.concat([
      attr(69, Buffer.concat([Buffer.of(1), Buffer.from("tunnelpw")])),
      attr(69, Buffer.concat([Buffer.of(2), Buffer.from("second")])),
      attr(69, Buffer.concat([Buffer.of(0), Buffer.from("untagged")])),
    ]);
    assert.deepEqual(out, packet11(2, 3, TOKEN, expected));
    const p = decodePacket(out, { radius11: true });
    assert.deepEqual(show(p), [
      "Tunnel-Password:1=tunnelpw",
      "Tunnel-Password:2=second",
      "Tunnel-Password:0=untagged",
    ]);
    assert.deepEqual(only(p, "Tunnel-Password").raw, Buffer.from("tunnelpw"));
  });

  test("a Tunnel-Password sent without a tag octet reads as the text (tagged-string rule)", () => {
    const p = decodePacket(packet11(2, 0, TOKEN, attr(69, "plainpw")), { radius11: true });
    assert.deepEqual(show(p), ["Tunnel-Password=plainpw"]);
  });

  test("MS-MPPE-Send-Key and -Recv-Key: the key octets in the Microsoft VSA", () => {
    const send = Buffer.alloc(32, 0xa5);
    const recv = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    const out = encode11({
      code: "Access-Accept",
      identifier: 0,
      attributes: [
        ["MS-MPPE-Send-Key", send],
        ["MS-MPPE-Recv-Key", recv],
      ],
    });
    assert.deepEqual(out, packet11(2, 0, TOKEN, Buffer.concat([msVsa(16, send), msVsa(17, recv)])));
    assert.equal(out[21], 40); // 2 + vendor 4 + 2 + 32: no salt, no length octet, no padding
    const p = decodePacket(out, { radius11: true });
    assert.deepEqual(only(p, "MS-MPPE-Send-Key").raw, send);
    assert.deepEqual(only(p, "MS-MPPE-Recv-Key").raw, recv);
    assert.equal(only(p, "MS-MPPE-Recv-Key").encrypted, undefined);
  });

  test("RADIUS/UDP still hides the same attributes (same input, different wire)", () => {
    const attributes: AttributeInput[] = [
      { name: "Tunnel-Password", value: "tunnelpw", tag: 1 },
      ["MS-MPPE-Send-Key", Buffer.alloc(32, 0xa5)],
    ];
    const auth = hex("00112233445566778899aabbccddeeff");
    const udp = encodePacket({ code: 2, identifier: 0, attributes }, "s3cret", {
      requestAuthenticator: auth,
    });
    const p = decodePacket(udp, { secret: "s3cret", requestAuthenticator: auth });
    assert.ok(!udp.includes(Buffer.from("tunnelpw")));
    assert.equal(only(p, "Tunnel-Password").value, "tunnelpw");
    assert.equal(only(decodePacket(udp), "MS-MPPE-Send-Key").encrypted, true);
  });
});

describe("Message-Authenticator (RFC 9765 section 5.2)", () => {
  const eap = hex("0201000a01626f623132"); // EAP-Response/Identity "bob12"

  test("EAP-Message without Message-Authenticator: sent and accepted in 1.1, refused in 1.0", () => {
    const out = encode11({
      code: "Access-Request",
      identifier: 0,
      attributes: [
        ["User-Name", "bob12"],
        ["EAP-Message", eap],
      ],
    });
    assert.deepEqual(out, packet11(1, 0, TOKEN, Buffer.concat([attr(1, "bob12"), attr(79, eap)])));
    const p = decodePacket(out, { radius11: true });
    assert.deepEqual(only(p, "EAP-Message").raw, eap);
    assert.throws(() => decodePacket(out), { name: "RadiusDecodeError", message: /EAP-Message without/ });
  });

  test("never sent: not for EAP, not when asked for, not when listed", () => {
    const out = encode11({
      code: "Access-Challenge",
      identifier: 5,
      attributes: [
        ["Message-Authenticator", Buffer.alloc(16)],
        ["EAP-Message", eap],
      ],
    });
    assert.deepEqual(out, packet11(11, 5, TOKEN, attr(79, eap)));
    const asked = encodePacket({ code: 1, identifier: 0 }, "ignored", {
      radius11: { token: TOKEN },
      messageAuthenticator: true,
    });
    assert.deepEqual(asked, packet11(1, 0, TOKEN, Buffer.alloc(0)));
  });

  test("received: silently discarded, the rest of the packet processed", () => {
    const buf = packet11(
      1,
      0,
      TOKEN,
      Buffer.concat([attr(1, "bob12"), attr(80, Buffer.alloc(16, 0x77)), attr(79, eap)]),
    );
    const p = decodePacket(buf, { radius11: true });
    assert.deepEqual(
      p.attributes.map((a) => a.name),
      ["User-Name", "EAP-Message"],
    );
  });

  test("a malformed one (wrong length) is discarded in 1.1, refused in 1.0", () => {
    const buf = packet11(1, 0, TOKEN, Buffer.concat([attr(1, "bob"), attr(80, hex("01020304"))]));
    assert.deepEqual(show(decodePacket(buf, { radius11: true })), ["User-Name=bob"]);
    assert.throws(() => decodePacket(buf), { message: /Message-Authenticator has length 4/ });
  });

  test("Status-Server without it: accepted and sent in 1.1, still refused in 1.0", () => {
    const buf = packet11(12, 0, TOKEN, attr(1, "probe"));
    const p = decodePacket(buf, { radius11: true });
    assert.equal(p.type, "Status-Server");
    assert.throws(() => decodePacket(buf), { message: "Status-Server without Message-Authenticator" });
    assert.deepEqual(
      encode11({ code: "Status-Server", identifier: 0, attributes: [["User-Name", "probe"]] }),
      buf,
    );
  });

  test("EAP-Message with a password attribute is still malformed in 1.1", () => {
    const buf = packet11(1, 0, TOKEN, Buffer.concat([attr(2, "pw"), attr(79, eap)]));
    assert.throws(() => decodePacket(buf, { radius11: true }), RadiusDecodeError);
  });
});

describe("CHAP over RADIUS/1.1 (RFC 9765 sections 5.1.2, 5.4)", () => {
  test("CHAP-Password and CHAP-Challenge travel unchanged; the challenge is the attribute", () => {
    const challenge = hex("000102030405060708090a0b0c0d0e0f");
    const chap = chapPassword(7, "hello", challenge);
    const out = encode11({
      code: 1,
      identifier: 0,
      attributes: [
        ["CHAP-Password", chap],
        ["CHAP-Challenge", challenge],
      ],
    });
    assert.deepEqual(out.subarray(20), Buffer.concat([attr(3, chap), attr(60, challenge)]));
    const p = decodePacket(out, { radius11: true });
    assert.ok(verifyChap(only(p, "CHAP-Password").raw, only(p, "CHAP-Challenge").raw, "hello"));
  });
});

describe("RADIUS/UDP unchanged", () => {
  // RFC 2865 section 7.1: nemo, "arctangent", shared secret "xyzzy5461".
  const secret = "xyzzy5461";
  const requestAuth = hex("0f403f9473978057bd83d5cb98f4227a");
  const rfcRequest = hex(`01 00 00 38 0f 40 3f 94 73 97 80 57 bd 83 d5 cb 98 f4 22 7a 01 06 6e 65 6d 6f
    02 12 0d be 70 8d 93 d4 13 ce 31 96 e4 3f 78 2a 0a ee 04 06 c0 a8 01 10 05 06 00 00 00 03`);
  const rfcAccept = hex(`02 00 00 26 86 fe 22 0e 76 24 ba 2a 10 05 f6 bf 9b 55 e0 b2 06 06 00 00 00 01
    0f 06 00 00 00 00 0e 06 c0 a8 01 03`);
  const requestAttributes: AttributeInput[] = [
    ["User-Name", "nemo"],
    ["User-Password", "arctangent"],
    ["NAS-IP-Address", "192.168.1.16"],
    ["NAS-Port", 3],
  ];

  test("the RFC 2865 section 7.1 packets, byte for byte, after 1.1 packets were encoded", () => {
    encode11({ code: 1, identifier: 0, attributes: requestAttributes });
    const request = encodePacket(
      { code: "Access-Request", identifier: 0, authenticator: requestAuth, attributes: requestAttributes },
      secret,
    );
    assert.deepEqual(request, rfcRequest);
    const accept = encodePacket(
      {
        code: 2,
        identifier: 0,
        attributes: [
          ["Service-Type", "Login-User"],
          ["Login-Service", "Telnet"],
          ["Login-IP-Host", "192.168.1.3"],
        ],
      },
      secret,
      { requestAuthenticator: requestAuth, radius11: undefined },
    );
    assert.deepEqual(accept, rfcAccept);
  });

  test("the same RFC request read as RADIUS/1.1 leaves the MD5-hidden octets as they are", () => {
    const p = decodePacket(rfcRequest, { radius11: true });
    assert.deepEqual(p.token, hex("0f403f94"));
    assert.deepEqual(only(p, "User-Password").raw, hex("0dbe708d93d413ce3196e43f782a0aee"));
    assert.equal(only(decodePacket(rfcRequest, { secret }), "User-Password").value, "arctangent");
  });

  test("Status-Server and EAP still get a Message-Authenticator, computed as RFC 3579 says", () => {
    const auth = hex("a1a2a3a4a5a6a7a8a9aaabacadaeafb0");
    const out = encodePacket(
      { code: 12, identifier: 9, authenticator: auth, attributes: [["User-Name", "p"]] },
      "s3cret",
    );
    // Header, Message-Authenticator first (zeros while computing), then User-Name.
    const zeroed = Buffer.concat([hex("0c 09 0029"), auth, attr(80, Buffer.alloc(16)), attr(1, "p")]);
    const mac = createHmac("md5", "s3cret").update(zeroed).digest();
    assert.deepEqual(out, Buffer.concat([hex("0c 09 0029"), auth, attr(80, mac), attr(1, "p")]));
    const eapOut = encodePacket(
      { code: 11, identifier: 1, attributes: [["EAP-Message", hex("010100050d")]] },
      "s3cret",
      { requestAuthenticator: auth },
    );
    assert.ok(verifyMessageAuthenticator(eapOut, "s3cret", auth));
    const withoutAuth = Buffer.from(eapOut);
    auth.copy(withoutAuth, 4);
    const digest = createHash("md5").update(withoutAuth).update("s3cret").digest();
    assert.deepEqual(eapOut.subarray(4, 20), digest);
  });
});

describe("hostile RADIUS/1.1 input", () => {
  test("mutated and truncated packets only ever throw RadiusDecodeError", () => {
    const seed = encode11({
      code: 1,
      identifier: 0,
      attributes: [
        ["User-Name", "bob"],
        ["User-Password", "pw"],
        { name: "Tunnel-Password", value: "t", tag: 3 },
        ["MS-MPPE-Send-Key", Buffer.alloc(16, 1)],
        ["Message-Authenticator", Buffer.alloc(16)],
      ],
    });
    let state = 12345;
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) >>> 0;
      return state % n;
    };
    let decoded = 0;
    for (let i = 0; i < 5000; i++) {
      const buf = Buffer.from(seed.subarray(0, 20 + rand(seed.length - 19)));
      for (let k = rand(4); k >= 0; k--) buf[rand(buf.length)] = rand(256);
      if (rand(2) === 0) buf.writeUInt16BE(buf.length, 2);
      try {
        decodePacket(buf, { radius11: true });
        decoded++;
      } catch (error) {
        assert.ok(error instanceof RadiusDecodeError, `unexpected ${String(error)}`);
      }
    }
    assert.ok(decoded > 100, `some mutated packets still decode (${decoded})`);
  });
});

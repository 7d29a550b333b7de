import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import dgram from "node:dgram";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  type AttributeInput,
  chapPassword,
  computeMessageAuthenticator,
  decodePacket,
  decryptTunnelPassword,
  decryptUserPassword,
  encodePacket,
  encryptUserPassword,
  getAttribute,
  hasMessageAuthenticator,
  type RadiusAttribute,
  RadiusDecodeError,
  RadiusEncodeError,
  type RadiusPacket,
  verifyChap,
  verifyMessageAuthenticator,
  verifyRequestAuthenticator,
  verifyResponse,
} from "../../src/radius/packet.ts";

function hex(text: string): Buffer {
  return Buffer.from(text.replace(/\s+/g, ""), "hex");
}

function md5(...parts: (Buffer | string)[]): Buffer {
  const h = createHash("md5");
  for (const p of parts) h.update(p);
  return h.digest();
}

/** "Name[:tag]=value" lines, easy to compare. */
function show(packet: RadiusPacket): string[] {
  return packet.attributes.map((a) => `${a.name}${a.tag === undefined ? "" : `:${a.tag}`}=${a.value}`);
}

function only(packet: RadiusPacket, name: string): RadiusAttribute {
  const a = getAttribute(packet, name);
  assert.ok(a, `${name} missing from ${show(packet).join(", ")}`);
  return a;
}

const REQ_AUTH = hex("0f403f9473978057bd83d5cb98f4227a");

/** A response to a request with REQ_AUTH, signed with `secret`. */
function reply(code: number | string, attributes: AttributeInput[], secret = "s3cret", ma = false): Buffer {
  return encodePacket({ code, identifier: 9, attributes }, secret, {
    requestAuthenticator: REQ_AUTH,
    messageAuthenticator: ma,
  });
}

function decodeReply(buf: Buffer, secret = "s3cret"): RadiusPacket {
  return decodePacket(buf, { secret, requestAuthenticator: REQ_AUTH });
}

// RFC 2865 §7.1: nemo logs in with password "arctangent"; shared secret "xyzzy5461".
const RFC_SECRET = "xyzzy5461";
const RFC_REQUEST = hex(`01 00 00 38 0f 40 3f 94 73 97 80 57 bd 83 d5 cb 98 f4 22 7a 01 06 6e 65 6d 6f
  02 12 0d be 70 8d 93 d4 13 ce 31 96 e4 3f 78 2a 0a ee 04 06 c0 a8 01 10 05 06 00 00 00 03`);
const RFC_ACCEPT = hex(`02 00 00 26 86 fe 22 0e 76 24 ba 2a 10 05 f6 bf 9b 55 e0 b2 06 06 00 00 00 01
  0f 06 00 00 00 00 0e 06 c0 a8 01 03`);

describe("RFC 2865 §7.1 example", () => {
  test("decodes the Access-Request and reveals the password with the secret", () => {
    const p = decodePacket(RFC_REQUEST, { secret: RFC_SECRET });
    assert.equal(p.type, "Access-Request");
    assert.equal(p.identifier, 0);
    assert.deepEqual(p.authenticator, REQ_AUTH);
    assert.deepEqual(show(p), [
      "User-Name=nemo",
      "User-Password=arctangent",
      "NAS-IP-Address=192.168.1.16",
      "NAS-Port=3",
    ]);
    // Without the secret the password stays hidden.
    const hidden = only(decodePacket(RFC_REQUEST), "User-Password");
    assert.equal(hidden.encrypted, true);
    assert.equal(hidden.value, "0x0dbe708d93d413ce3196e43f782a0aee");
  });

  test("verifies the Access-Accept's Response Authenticator, and rejects a wrong secret", () => {
    assert.equal(verifyResponse(RFC_ACCEPT, RFC_SECRET, REQ_AUTH), true);
    assert.equal(verifyResponse(RFC_ACCEPT, "xyzzy5462", REQ_AUTH), false);
    assert.equal(verifyResponse(RFC_ACCEPT, RFC_SECRET, Buffer.alloc(16)), false);
    assert.deepEqual(show(decodePacket(RFC_ACCEPT)), [
      "Service-Type=Login-User",
      "Login-Service=Telnet",
      "Login-IP-Host=192.168.1.3",
    ]);
  });

  test("encodes both packets byte for byte", () => {
    const request = encodePacket(
      {
        code: "Access-Request",
        identifier: 0,
        authenticator: REQ_AUTH,
        attributes: [
          ["User-Name", "nemo"],
          ["User-Password", "arctangent"],
          ["NAS-IP-Address", "192.168.1.16"],
          ["NAS-Port", 3],
        ],
      },
      RFC_SECRET,
    );
    assert.deepEqual(request, RFC_REQUEST);
    const accept = encodePacket(
      {
        code: 2,
        identifier: 0,
        attributes: [
          ["Service-Type", "Login-User"],
          ["login-service", "telnet"], // names and VALUE names are case-insensitive
          ["Login-IP-Host", "192.168.1.3"],
        ],
      },
      RFC_SECRET,
      { requestAuthenticator: REQ_AUTH },
    );
    assert.deepEqual(accept, RFC_ACCEPT);
  });
});

describe("User-Password hiding (RFC 2865 §5.2)", () => {
  const auth = REQ_AUTH;
  for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 100, 127, 128]) {
    test(`${length}-octet password`, () => {
      const password = Buffer.alloc(length, 0x61);
      for (let i = 0; i < length; i++) password[i] = 0x21 + ((i * 7) % 90);
      const hidden = encryptUserPassword(password, "secret", auth);
      assert.equal(hidden.length, Math.max(16, Math.ceil(length / 16) * 16));
      // First block by hand: p1 XOR MD5(secret + authenticator).
      const b1 = md5("secret", auth);
      const p1 = Buffer.alloc(16);
      password.copy(p1, 0, 0, 16);
      for (let i = 0; i < 16; i++) assert.equal(hidden[i], p1[i]! ^ b1[i]!);
      // Second block chains on the first cipher block.
      if (length > 16) {
        const b2 = md5("secret", hidden.subarray(0, 16));
        assert.equal(hidden[16], password[16]! ^ b2[0]!);
      }
      assert.deepEqual(decryptUserPassword(hidden, "secret", auth), password);
      // Through the codec too.
      const wire = encodePacket(
        { code: 1, identifier: 1, attributes: [["User-Password", password]] },
        "secret",
      );
      const got = decodePacket(wire, { secret: "secret" });
      if (length === 0) assert.equal(only(got, "User-Password").value, "");
      else assert.deepEqual(only(got, "User-Password").raw, password);
    });
  }

  test("more than 128 octets cannot be hidden", () => {
    assert.throws(() => encryptUserPassword(Buffer.alloc(129, 0x61), "s", auth), RadiusEncodeError);
    const attributes: AttributeInput[] = [["User-Password", "x".repeat(129)]];
    assert.throws(() => encodePacket({ code: 1, identifier: 1, attributes }, "s"), RadiusEncodeError);
  });

  test("trailing NULs are padding; inner NULs stay", () => {
    const hidden = encryptUserPassword(Buffer.from("a\0b\0\0"), "s", auth);
    assert.deepEqual(decryptUserPassword(hidden, "s", auth), Buffer.from("a\0b"));
  });

  test("a UTF-8 password round-trips as text", () => {
    const wire = encodePacket({ code: 1, identifier: 1, attributes: [["User-Password", "pässwörd€"]] }, "s");
    assert.equal(only(decodePacket(wire, { secret: "s" }), "User-Password").value, "pässwörd€");
  });
});

describe("CHAP", () => {
  const challenge = hex("2aee86f08d0d55969ca5978e0d3367a2");

  test("verifies against MD5(ident + password + challenge)", () => {
    const expected = Buffer.concat([Buffer.of(0x16), md5(Buffer.of(0x16), "flopsy-pw", challenge)]);
    assert.deepEqual(chapPassword(0x16, "flopsy-pw", challenge), expected);
    assert.equal(verifyChap(expected, challenge, "flopsy-pw"), true);
    assert.equal(verifyChap(expected, challenge, "flopsy-pW"), false);
    assert.equal(verifyChap(expected, Buffer.alloc(16), "flopsy-pw"), false);
    const otherIdent = Buffer.from(expected);
    otherIdent[0] = 0x17;
    assert.equal(verifyChap(otherIdent, challenge, "flopsy-pw"), false);
    assert.equal(verifyChap(expected.subarray(0, 16), challenge, "flopsy-pw"), false);
  });

  test("RFC 2865 §7.2: CHAP-Password passes through untouched", () => {
    const request = hex(`01 01 00 47 2a ee 86 f0 8d 0d 55 96 9c a5 97 8e 0d 33 67 a2 01 08 66 6c 6f 70 73 79
      03 13 16 e9 75 57 c3 16 18 58 95 f2 93 ff 63 44 07 72 75 04 06 c0 a8 01 10 05 06 00 00 00 14
      06 06 00 00 00 02 07 06 00 00 00 01`);
    const p = decodePacket(request, { secret: "whatever" });
    assert.deepEqual(show(p), [
      "User-Name=flopsy",
      "CHAP-Password=0x16e97557c316185895f293ff6344077275",
      "NAS-IP-Address=192.168.1.16",
      "NAS-Port=20",
      "Service-Type=Framed-User",
      "Framed-Protocol=PPP",
    ]);
    const reencoded = encodePacket(
      {
        code: 1,
        identifier: 1,
        authenticator: p.authenticator,
        attributes: p.attributes.map((a) => [a.name, a.raw] as const),
      },
      "whatever",
    );
    assert.deepEqual(reencoded, request);
  });
});

describe("Message-Authenticator", () => {
  // An Access-Request built by hand: User-Name "bob", then Message-Authenticator (zeros).
  const secret = "testing123";
  const body = Buffer.concat([
    hex("01 2a 00 2b"),
    REQ_AUTH,
    hex("01 05 62 6f 62"),
    hex("50 12"),
    Buffer.alloc(16),
  ]);
  const expected = createHmac("md5", secret).update(body).digest();
  const signed = Buffer.from(body);
  expected.copy(signed, 27); // after the header (20), User-Name (5) and the MA's type and length

  test("Access-Request: HMAC-MD5 over the packet with the MA zeroed", () => {
    assert.deepEqual(computeMessageAuthenticator(body, secret), expected);
    assert.deepEqual(computeMessageAuthenticator(signed, secret), expected, "its own value counts as zeros");
    assert.equal(verifyMessageAuthenticator(signed, secret), true);
    assert.equal(hasMessageAuthenticator(signed), true);
    // The encoder produces the same bytes when the MA is given in place.
    const encoded = encodePacket(
      {
        code: 1,
        identifier: 42,
        authenticator: REQ_AUTH,
        attributes: [
          ["User-Name", "bob"],
          ["Message-Authenticator", ""],
        ],
      },
      secret,
    );
    assert.deepEqual(encoded, signed);
  });

  test("a tampered packet, a wrong secret, a missing or repeated MA fail", () => {
    for (const at of [1, 5, 20, 24, 30]) {
      const bad = Buffer.from(signed);
      bad[at]! ^= 0x01;
      assert.equal(verifyMessageAuthenticator(bad, secret), false, `flip at ${at}`);
    }
    assert.equal(verifyMessageAuthenticator(signed, "testing124"), false);
    const none = encodePacket({ code: 1, identifier: 1, attributes: [["User-Name", "bob"]] }, secret);
    assert.equal(hasMessageAuthenticator(none), false);
    assert.equal(verifyMessageAuthenticator(none, secret), false);
    const twice = Buffer.concat([signed, signed.subarray(25)]);
    twice.writeUInt16BE(twice.length, 2);
    assert.equal(verifyMessageAuthenticator(twice, secret), false);
  });

  test("responses use the request's authenticator and put the MA first (BlastRADIUS)", () => {
    const accept = reply(2, [["Reply-Message", "hi"]], secret, true);
    assert.equal(accept[20], 80, "Message-Authenticator is the first attribute");
    const zeroed = Buffer.from(accept);
    REQ_AUTH.copy(zeroed, 4);
    zeroed.fill(0, 22, 38);
    assert.deepEqual(accept.subarray(22, 38), createHmac("md5", secret).update(zeroed).digest());
    assert.equal(verifyMessageAuthenticator(accept, secret, REQ_AUTH), true);
    assert.equal(verifyMessageAuthenticator(accept, secret, Buffer.alloc(16, 1)), false);
    assert.equal(verifyResponse(accept, secret, REQ_AUTH), true);
    // The Response Authenticator covers the MA: a changed MA breaks both.
    const bad = Buffer.from(accept);
    bad[30]! ^= 0x80;
    assert.equal(verifyResponse(bad, secret, REQ_AUTH), false);
    assert.throws(() => computeMessageAuthenticator(accept, secret), TypeError, "responses need the request");
  });

  test("Accounting-Request (RFC 5176 style): MA over a zero authenticator", () => {
    const acct = encodePacket(
      { code: 4, identifier: 3, attributes: [["Acct-Status-Type", "Start"]] },
      secret,
      { messageAuthenticator: true },
    );
    const zeroed = Buffer.from(acct);
    zeroed.fill(0, 4, 20);
    zeroed.fill(0, 22, 38);
    assert.deepEqual(acct.subarray(22, 38), createHmac("md5", secret).update(zeroed).digest());
    assert.equal(verifyMessageAuthenticator(acct, secret), true);
    assert.equal(verifyRequestAuthenticator(acct, secret), true);
  });

  test("Status-Server always carries one", () => {
    const status = encodePacket({ code: "Status-Server", identifier: 1 }, secret);
    assert.equal(status.length, 38);
    assert.equal(verifyMessageAuthenticator(status, secret), true);
  });
});

describe("Request Authenticator of Accounting / CoA / Disconnect", () => {
  const secret = "acct-secret";
  for (const code of [4, 40, 43]) {
    test(`code ${code}: MD5(packet with zero authenticator + secret)`, () => {
      const wire = encodePacket(
        {
          code,
          identifier: 7,
          attributes: [
            ["User-Name", "bob"],
            ["Acct-Session-Id", "s1"],
          ],
        },
        secret,
      );
      const zeroed = Buffer.from(wire);
      zeroed.fill(0, 4, 20);
      assert.deepEqual(wire.subarray(4, 20), md5(zeroed, secret));
      assert.equal(verifyRequestAuthenticator(wire, secret), true);
      assert.equal(verifyRequestAuthenticator(wire, "other"), false);
      const bad = Buffer.from(wire);
      bad[wire.length - 1]! ^= 1;
      assert.equal(verifyRequestAuthenticator(bad, secret), false);
    });
  }

  test("is refused for packets without one", () => {
    assert.throws(() => verifyRequestAuthenticator(RFC_REQUEST, "x"), TypeError);
  });
});

describe("vendor attributes", () => {
  test("WISPr, Mikrotik, ChilliSpot, Microsoft round-trip", () => {
    const wire = reply(2, [
      ["WISPr-Bandwidth-Max-Down", 10_000_000],
      ["WISPr-Bandwidth-Max-Up", "2000000"],
      ["Mikrotik-Rate-Limit", "2M/10M"],
      ["ChilliSpot-Max-Total-Octets", 1_073_741_824],
      ["MS-CHAP-Challenge", "0x00112233445566778899aabbccddeeff"],
      ["MS-MPPE-Send-Key", "0x000102030405060708090a0b0c0d0e0f"],
    ]);
    const p = decodeReply(wire);
    assert.deepEqual(show(p), [
      "WISPr-Bandwidth-Max-Down=10000000",
      "WISPr-Bandwidth-Max-Up=2000000",
      "Mikrotik-Rate-Limit=2M/10M",
      "ChilliSpot-Max-Total-Octets=1073741824",
      "MS-CHAP-Challenge=0x00112233445566778899aabbccddeeff",
      "MS-MPPE-Send-Key=0x000102030405060708090a0b0c0d0e0f",
    ]);
    assert.equal(only(p, "WISPr-Bandwidth-Max-Down").vendorId, 14122);
    assert.equal(only(p, "Mikrotik-Rate-Limit").code, 8);
    // One Vendor-Specific per attribute, laid out as 26, len, vendor id, type, len, value.
    assert.deepEqual(wire.subarray(20, 32), hex("1a 0c 00 00 37 2a 08 06 00 98 96 80"));
    // MS-MPPE-Send-Key is salted (RFC 2548): hidden without the secret, not the plain bytes.
    const hidden = only(decodePacket(wire), "MS-MPPE-Send-Key");
    assert.equal(hidden.encrypted, true);
    assert.equal(hidden.raw.length, 2 + 32);
    assert.equal(hidden.raw[0]! & 0x80, 0x80, "salt has its high bit set");
  });

  test("vendor formats: USR 4/0, Lucent 2/1, Starent 2/2", () => {
    const wire = reply(2, [
      ["USR-Last-Number-Dialed-Out", "5551234"],
      ["Lucent-Max-Shared-Users", 4],
      ["SN-VPN-Name", "corp"],
    ]);
    assert.deepEqual(wire.subarray(20, 37), hex("1a 11 00 00 01 ad 00 00 00 66 35 35 35 31 32 33 34"));
    assert.deepEqual(wire.subarray(37, 50), hex("1a 0d 00 00 12 ee 00 02 07 00 00 00 04"));
    assert.deepEqual(wire.subarray(50, 64), hex("1a 0e 00 00 1f e4 00 02 00 08 63 6f 72 70"));
    assert.deepEqual(show(decodePacket(wire)), [
      "USR-Last-Number-Dialed-Out=5551234",
      "Lucent-Max-Shared-Users=4",
      "SN-VPN-Name=corp",
    ]);
  });

  test("several sub-attributes in one Vendor-Specific, and unknown ones", () => {
    // WISPr: Bandwidth-Max-Up (7) and an unknown 200, in one VSA; then an unknown vendor.
    const attrs = hex("1a 10 00 00 37 2a 07 06 00 00 00 64 c8 04 ab cd 1a 09 00 01 e2 40 05 03 ff");
    const p = decodePacket(packetOf(2, attrs));
    assert.deepEqual(show(p), [
      "WISPr-Bandwidth-Max-Up=100",
      "Attr-26.14122.200=0xabcd",
      "Attr-26.123456.5=0xff",
    ]);
    // The raw names encode back to the same bytes.
    const again = reply(
      2,
      p.attributes.map((a) => [a.name, a.value] as const),
    );
    assert.deepEqual(again.subarray(20, 32), hex("1a 0c 00 00 37 2a 07 06 00 00 00 64"));
    assert.deepEqual(again.subarray(32), hex("1a 0a 00 00 37 2a c8 04 ab cd 1a 09 00 01 e2 40 05 03 ff"));
    const named = reply(2, [["Vendor-14988-Attr-99", "0x01"]]);
    assert.deepEqual(show(decodePacket(named)), ["Attr-26.14988.99=0x01"]);
  });

  test("malformed Vendor-Specific stays as raw Attr-26, like FreeRADIUS", () => {
    const cases = [
      "1a 06 00 00 37 2a", // vendor id only: no room for a sub-attribute
      "1a 07 01 00 37 2a 08", // vendor id over 24 bits
      "1a 09 00 00 37 2a 08 09 00", // sub-attribute longer than the VSA
      "1a 09 00 00 37 2a 08 01 00", // sub-attribute length below its header
      "1a 05 00 00 37", // shorter than a vendor id
      "1a 0a 00 00 00 00 00 00 00 00", // unknown vendor 0, read as 1/1: sub-attribute length 0
      "1a 0a 00 00 01 ad 01 00 00 01", // USR type over 2^24
    ];
    for (const c of cases) {
      const data = hex(c).subarray(2);
      const p = decodePacket(packetOf(2, hex(c)));
      assert.deepEqual(show(p), [`Attr-26=0x${data.toString("hex")}`], c);
    }
    // Empty VSAs and zero-length sub-attributes produce no attribute.
    assert.deepEqual(show(decodePacket(packetOf(2, hex("1a 02 1a 08 00 00 37 2a 08 02")))), []);
  });
});

describe("tags (RFC 2868)", () => {
  test("Tunnel attributes for a VLAN, tag in the name or in the value", () => {
    const wire = reply(2, [
      ["Tunnel-Type:1", "VLAN"],
      ["Tunnel-Medium-Type", ":1:IEEE-802"],
      { name: "Tunnel-Private-Group-Id", value: "10", tag: 1 },
      ["Tunnel-Private-Group-Id", "untagged"],
      ["Tunnel-Password:2", "t0ps3cret"],
    ]);
    assert.deepEqual(
      wire.subarray(20, 40),
      hex("40 06 01 00 00 0d 41 06 01 00 00 06 51 05 01 31 30 51 0a 75"),
    );
    const p = decodeReply(wire);
    assert.deepEqual(show(p), [
      "Tunnel-Type:1=VLAN",
      "Tunnel-Medium-Type:1=IEEE-802",
      "Tunnel-Private-Group-Id:1=10",
      "Tunnel-Private-Group-Id=untagged",
      "Tunnel-Password:2=t0ps3cret",
    ]);
    assert.deepEqual(only(p, "Tunnel-Type").raw, hex("00 00 00 0d"));
    const tp = attributeAt(wire, 69);
    assert.equal(tp.length, 1 + 2 + 16, "tag, salt, one block");
    assert.equal(tp[0], 2, "tag before the salt");
    assert.equal(tp[1]! & 0x80, 0x80, "salt has its high bit set");
    assert.equal(decryptTunnelPassword(tp.subarray(1), "s3cret", REQ_AUTH)?.toString(), "t0ps3cret");
    // A length octet that decrypts past the data: raw Attr-69, like FreeRADIUS.
    const broken = Buffer.from(wire);
    const at = broken.indexOf(tp);
    broken[at + 3]! ^= 9 ^ 0xff; // the hidden length (9) becomes 255
    const raw = only(decodePacket(broken, { secret: "s3cret", requestAuthenticator: REQ_AUTH }), "Attr-69");
    assert.deepEqual(raw.raw, broken.subarray(at, at + tp.length));
  });

  test("Tunnel-Password in a CoA-Request is salted over a zero vector, as FreeRADIUS reads it", () => {
    const coa = encodePacket(
      {
        code: "CoA-Request",
        identifier: 1,
        attributes: [
          ["Tunnel-Password:1", "pw"],
          ["User-Name", "bob"],
        ],
      },
      "s3cret",
    );
    assert.equal(verifyRequestAuthenticator(coa, "s3cret"), true);
    assert.deepEqual(show(decodePacket(coa, { secret: "s3cret" })), [
      "Tunnel-Password:1=pw",
      "User-Name=bob",
    ]);
  });

  test("bad tags are refused", () => {
    assert.throws(() => reply(2, [["Tunnel-Type:32", "VLAN"]]), RadiusEncodeError);
    assert.throws(() => reply(2, [{ name: "Session-Timeout", value: 1, tag: 1 }]), RadiusEncodeError);
    assert.throws(() => reply(2, [["Tunnel-Type", ":*:VLAN"]]), RadiusEncodeError);
    assert.throws(() => reply(2, [["Tunnel-Type:1", 0x1000000]]), RadiusEncodeError);
  });
});

describe("value types", () => {
  const cases: Array<[name: string, input: string | number, wire: string, text?: string]> = [
    ["Service-Type", "Framed-User", "06 06 00 00 00 02"],
    ["Service-Type", 4242, "06 06 00 00 10 92", "4242"],
    ["Event-Timestamp", "1700000000", "37 06 65 53 f1 00"],
    ["Framed-IP-Address", "192.0.2.1", "08 06 c0 00 02 01"],
    ["Login-IPv6-Host", "2001:db8::1", "62 12 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"],
    ["Login-IPv6-Host", "::ffff:192.0.2.1", "62 12 00 00 00 00 00 00 00 00 00 00 ff ff c0 00 02 01"],
    ["Login-IPv6-Host", "fe80:0:1::", "62 12 fe 80 00 00 00 01 00 00 00 00 00 00 00 00 00 00"],
    [
      "Framed-IPv6-Prefix",
      "2001:db8:ff::/40",
      "61 14 00 28 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 00",
      "2001:db8::/40",
    ],
    // RFC 3162 section 3 and RFC 6911 section 3.1: IPv6 text in, glibc's inet_ntop text out.
    ["NAS-IPv6-Address", "2001:db8::5", "5f 12 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 05"],
    [
      "Framed-IPv6-Address",
      "2001:0DB8:0000:0000:0001:0000:0000:0005",
      "a8 12 20 01 0d b8 00 00 00 00 00 01 00 00 00 00 00 05",
      "2001:db8::1:0:0:5",
    ],
    ["NAS-IPv6-Address", "::ffff:10.0.0.1", "5f 12 00 00 00 00 00 00 00 00 00 00 ff ff 0a 00 00 01"],
    [
      "NAS-IPv6-Address",
      "::FFFF:a00:1",
      "5f 12 00 00 00 00 00 00 00 00 00 00 ff ff 0a 00 00 01",
      "::ffff:10.0.0.1",
    ],
    // IPv4-compatible (RFC 4291 section 2.5.5.1): 96 zero bits, not the IPv4-mapped ::ffff:1.2.3.4.
    ["Framed-IPv6-Address", "::1.2.3.4", "a8 12 00 00 00 00 00 00 00 00 00 00 00 00 01 02 03 04"],
    ["Framed-IPv6-Address", "::", "a8 12 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"],
    [
      "Framed-IPv6-Prefix",
      "2001:0db8:0:0:0:0:0:1/128",
      "61 14 00 80 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01",
      "2001:db8::1/128",
    ],
    ["Framed-IPv6-Prefix", "::/0", "61 14 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"],
    [
      "Delegated-IPv6-Prefix",
      "2001:db8:1:ff00::/56",
      "7b 14 00 38 20 01 0d b8 00 01 ff 00 00 00 00 00 00 00 00 00",
      "2001:db8:1:ff00::/56",
    ],
    ["Framed-Interface-Id", "0:0:ab:1", "60 0a 00 00 00 00 00 ab 00 01"],
    ["MIP6-Feature-Vector", "18446744073709551615", "7c 0a ff ff ff ff ff ff ff ff"],
    ["PMIP6-Home-IPv4-HoA", "10.1.2.3/16", "9b 08 00 10 0a 01 00 00", "10.1.0.0/16"],
    ["PKM-SAID", 513, "8d 04 02 01"],
    ["Class", "plain-text", "19 0c 70 6c 61 69 6e 2d 74 65 78 74", "0x706c61696e2d74657874"],
    ["Reply-Message", "héllo", "12 08 68 c3 a9 6c 6c 6f"],
  ];
  for (const [name, input, wire, text] of cases) {
    test(`${name} = ${input}`, () => {
      const buf = reply(2, [[name, input]]);
      assert.deepEqual(buf.subarray(20), hex(wire));
      assert.deepEqual(show(decodePacket(buf)), [`${name}=${text ?? input}`]);
    });
  }

  test("IPv6 prefixes: short prefix fields decode (RFC 3162 section 2.3), round trips keep the text", () => {
    const short = reply(2, [["Framed-IPv6-Prefix", hex("00 30 20 01 0d b8 00 01")]]);
    assert.deepEqual(show(decodePacket(short)), ["Framed-IPv6-Prefix=2001:db8:1::/48"]);
    const texts = [
      "2001:db8:1::/48",
      "::ffff:192.0.2.0/120",
      "fe80::/10",
      "2001:db8:0:0:1::/80",
      "2001:db8::1:0:0:1/128",
    ];
    const decoded = decodePacket(
      reply(
        2,
        texts.map((text) => ["Framed-IPv6-Prefix", text] as AttributeInput),
      ),
    );
    assert.deepEqual(
      show(
        decodePacket(
          reply(
            2,
            decoded.attributes.map((a) => [a.name, a.value]),
          ),
        ),
      ),
      [...texts.map((text) => `Framed-IPv6-Prefix=${text}`)],
    );
  });

  test("vendor byte, signed, ether and WiMAX (continuation octet) attributes", () => {
    const buf = reply(2, [
      ["3GPP-Session-Stop-Indicator", 1],
      ["3GPP2-GMT-Time-Zone-Offset", "-3600"],
      ["Alc-Client-HardwareAddr", "00-11-22-AA-BB-CC"],
      ["WiMAX-GMT-Timezone-offset", 7200],
      ["Ascend-Data-Filter", "0x0101"],
    ]);
    assert.deepEqual(show(decodePacket(buf)), [
      "3GPP-Session-Stop-Indicator=1",
      "3GPP2-GMT-Time-Zone-Offset=-3600",
      "Alc-Client-HardwareAddr=00:11:22:aa:bb:cc",
      "WiMAX-GMT-Timezone-offset=7200",
      "Ascend-Data-Filter=0x0101",
    ]);
    // WiMAX: 26, len, vendor 24757, type 3, length 7, continuation 0, value.
    assert.ok(buf.includes(hex("1a 0d 00 00 60 b5 03 07 00 00 00 1c 20")));
  });

  test("invalid values are refused with RadiusEncodeError", () => {
    for (const [name, value] of [
      ["Session-Timeout", "-1"],
      ["Session-Timeout", "4294967296"],
      ["Session-Timeout", 1.5],
      ["Service-Type", "No-Such-Service"],
      ["Event-Timestamp", "2024-01-01"],
      ["Framed-IP-Address", "192.0.2.256"],
      ["Framed-IP-Address", "example.com"],
      ["Login-IPv6-Host", "2001:db8::1%eth0"],
      ["Framed-IPv6-Prefix", "2001:db8::/129"],
      // inet_aton's forms, which ipaddr.js would read, are not addresses here.
      ["Framed-IP-Address", "127.1"],
      ["Framed-IP-Address", "0x7f000001"],
      ["Framed-IP-Address", "010.0.0.1"],
      ["NAS-IPv6-Address", "::ffff:127.1"],
      ["NAS-IPv6-Address", "::ffff:010.0.0.1"],
      ["Framed-IPv6-Address", "192.0.2.1"],
      ["Framed-IPv6-Prefix", "fe80::%eth0/64"],
      ["Framed-IPv6-Prefix", "2001:db8::/64/1"],
      ["Framed-IPv6-Prefix", "192.0.2.0/24"],
      ["PMIP6-Home-IPv4-HoA", "10.1/16"],
      ["Framed-Interface-Id", "0:0:1"],
      ["Class", "0x123"],
      ["Reply-Message", "x".repeat(254)],
      ["Mikrotik-Rate-Limit", "x".repeat(248)],
      ["Framed-IP-Address", Buffer.alloc(3)],
    ] as const) {
      assert.throws(() => reply(2, [[name, value]]), RadiusEncodeError, `${name} = ${String(value)}`);
    }
  });

  test("names that cannot go on the wire", () => {
    for (const name of ["Cleartext-Password", "Auth-Type", "Fall-Through", "No-Such-Attribute", "Attr-0"]) {
      assert.throws(() => reply(2, [[name, "1"]]), RadiusEncodeError, name);
    }
  });

  test("a value of the wrong size decodes as raw, like FreeRADIUS's data2vp", () => {
    const p = decodePacket(
      packetOf(2, hex("1b 05 00 0e 10 08 07 01 02 03 04 05 1a 0b 00 00 37 2a 08 05 01 02 03")),
    );
    assert.deepEqual(show(p), ["Attr-27=0x000e10", "Attr-8=0x0102030405", "Attr-26.14122.8=0x010203"]);
    // Empty attributes are dropped, except Chargeable-User-Identity.
    assert.deepEqual(show(decodePacket(packetOf(2, hex("12 02 59 02")))), ["Chargeable-User-Identity=0x"]);
  });

  test("strings: FreeRADIUS's escapes for control characters and invalid UTF-8", () => {
    const text = (octets: string) => {
      const value = hex(octets);
      return show(decodePacket(packetOf(2, Buffer.concat([Buffer.of(18, value.length + 2), value]))))[0];
    };
    assert.equal(text("61 62 63 00"), "Reply-Message=abc", "one trailing NUL is not shown");
    assert.equal(text("61 ff 22 5c 0a 01 c3 a9 00"), 'Reply-Message=a\\377\\"\\\\\\n\\001é');
    assert.equal(text("e2 82 ac 5c"), "Reply-Message=€\\", "valid UTF-8 without controls is verbatim");
    assert.equal(text("ed a0 80"), "Reply-Message=\\355\\240\\200", "UTF-16 surrogates are not UTF-8");
    assert.equal(text("7f"), "Reply-Message=\\177");
  });

  test("concat attributes (EAP-Message) are split and joined; others are not split", () => {
    const eap = Buffer.alloc(600);
    for (let i = 0; i < eap.length; i++) eap[i] = i & 0xff;
    const wire = reply(11, [
      ["State", "0x01"],
      ["EAP-Message", eap],
      ["Reply-Message", "x"],
    ]);
    assert.equal(hasMessageAuthenticator(wire), true, "EAP-Message brings a Message-Authenticator");
    const p = decodeReply(wire);
    assert.deepEqual(only(p, "EAP-Message").raw, eap);
    assert.deepEqual(
      p.attributes.map((a) => a.name),
      ["State", "EAP-Message", "Reply-Message", "Message-Authenticator"],
    );
    const lengths: number[] = [];
    for (let at = 20; at < wire.length; at += wire[at + 1]!) if (wire[at] === 79) lengths.push(wire[at + 1]!);
    assert.deepEqual(lengths, [255, 255, 96]);
    const long: AttributeInput[] = [["Reply-Message", "x".repeat(254)]];
    assert.throws(() => reply(2, long), RadiusEncodeError, "only concat attributes are split");
  });

  test("the packet may not exceed 4096 octets", () => {
    const attributes: AttributeInput[] = [];
    for (let i = 0; i < 17; i++) attributes.push(["Reply-Message", "x".repeat(240)]);
    assert.throws(() => reply(2, attributes), RadiusEncodeError);
    attributes.pop();
    assert.ok(reply(2, attributes).length <= 4096);
  });
});

/** A response with these raw attribute octets, validly signed for REQ_AUTH. */
function packetOf(code: number, attributes: Buffer): Buffer {
  const buf = Buffer.concat([Buffer.of(code, 9, 0, 0), REQ_AUTH, attributes]);
  buf.writeUInt16BE(buf.length, 2);
  return buf;
}

describe("malformed packets throw RadiusDecodeError", () => {
  const ok = encodePacket({ code: 1, identifier: 1, attributes: [["User-Name", "bob"]] }, "s");
  const cases: Array<[string, Buffer]> = [
    ["empty", Buffer.alloc(0)],
    ["19 octets", ok.subarray(0, 19)],
    ["over 4096 octets", Buffer.concat([ok, Buffer.alloc(4097 - ok.length)])],
    ["Length field below 20", withLength(ok, 19)],
    ["Length field beyond the data", withLength(ok, ok.length + 1)],
    ["Length field 65535", withLength(ok, 65535)],
    ["attribute header cut by Length", withLength(ok, 21)],
    ["attribute length 0", packetOf(1, hex("01 00 62"))],
    ["attribute length 1", packetOf(1, hex("01 01"))],
    ["attribute overruns the packet", packetOf(1, hex("01 06 62 6f 62"))],
    ["attribute 0", packetOf(1, hex("00 03 00"))],
    ["Message-Authenticator of 15 octets", packetOf(1, Buffer.concat([hex("50 11"), Buffer.alloc(15)]))],
    ["Status-Server without Message-Authenticator", packetOf(12, hex("01 05 62 6f 62"))],
    ["EAP-Message without Message-Authenticator", packetOf(1, hex("4f 06 02 01 00 04"))],
    [
      "EAP-Message with User-Password",
      packetOf(
        1,
        Buffer.concat([hex("4f 06 02 01 00 04 02 12"), Buffer.alloc(16), hex("50 12"), Buffer.alloc(16)]),
      ),
    ],
    [
      "201 Proxy-State attributes",
      packetOf(2, Buffer.concat(Array.from({ length: 201 }, () => hex("21 03 01")))),
    ],
    ["201 sub-attributes in VSAs", packetOf(2, vsaFlood(201))],
  ];
  for (const code of [0, 6, 10, 14, 21, 39, 46, 255]) {
    const bad = Buffer.from(ok);
    bad[0] = code;
    cases.push([`packet code ${code}`, bad]);
  }
  for (const [label, buf] of cases) {
    test(label, () => {
      assert.throws(
        () => decodePacket(buf),
        (err: unknown) => err instanceof RadiusDecodeError && err.reason.length > 0 && err.reason.length < 80,
      );
    });
  }

  test("octets past the Length field are padding", () => {
    const padded = Buffer.concat([ok, hex("01 05 62 6f 62 ff")]);
    assert.deepEqual(show(decodePacket(padded)), ["User-Name=bob"]);
  });

  test("200 attributes are fine; the limit is configurable", () => {
    const many = packetOf(2, Buffer.concat(Array.from({ length: 200 }, () => hex("21 03 01"))));
    assert.equal(decodePacket(many).attributes.length, 200);
    assert.throws(() => decodePacket(many, { maxAttributes: 199 }), RadiusDecodeError);
  });

  test("non-buffers", () => {
    for (const junk of [undefined, null, "0100", 42, {}, [1, 0, 0, 20]]) {
      assert.throws(() => decodePacket(junk as unknown as Buffer), RadiusDecodeError);
    }
    assert.deepEqual(show(decodePacket(new Uint8Array(ok))), ["User-Name=bob"]);
  });
});

/** The value of the first top-level attribute of this type. */
function attributeAt(wire: Buffer, type: number): Buffer {
  for (let at = 20; at < wire.length; at += wire[at + 1]!) {
    if (wire[at] === type) return wire.subarray(at + 2, at + wire[at + 1]!);
  }
  throw new Error(`no attribute ${type}`);
}

function withLength(buf: Buffer, length: number): Buffer {
  const copy = Buffer.from(buf);
  copy.writeUInt16BE(length, 2);
  return copy;
}

/** `n` WISPr sub-attributes packed into as few Vendor-Specifics as fit. */
function vsaFlood(n: number): Buffer {
  const parts: Buffer[] = [];
  for (let left = n; left > 0; left -= 80) {
    const count = Math.min(80, left);
    const vsa = Buffer.alloc(6 + 3 * count);
    vsa[0] = 26;
    vsa[1] = vsa.length;
    vsa.writeUInt32BE(14122, 2);
    for (let i = 0; i < count; i++) vsa.set([1, 3, 0x41], 6 + 3 * i);
    parts.push(vsa);
  }
  return Buffer.concat(parts);
}

test("fuzz: 20,000 random and mutated packets only decode or throw RadiusDecodeError", () => {
  let seed = 0x2865;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const secret = "fuzz-secret";
  const seeds = [
    RFC_REQUEST,
    RFC_ACCEPT,
    encodePacket(
      {
        code: 1,
        identifier: 5,
        attributes: [
          ["User-Name", "guest"],
          ["User-Password", "pw"],
          ["Called-Station-Id", "AA-BB-CC-DD-EE-FF:Guest"],
          ["WISPr-Location-Name", "Lobby"],
          ["NAS-Port-Type", "Wireless-802.11"],
          ["Framed-IPv6-Prefix", "2001:db8::/48"],
          ["USR-Last-Number-Dialed-Out", "1"],
        ],
      },
      secret,
      { messageAuthenticator: true },
    ),
    reply(
      2,
      [
        ["Tunnel-Type:1", "VLAN"],
        ["Tunnel-Password:1", "pw"],
        ["MS-MPPE-Recv-Key", "0x0102"],
        ["SN-VPN-Name", "x"],
        ["Lucent-Max-Shared-Users", 1],
        ["EAP-Message", Buffer.alloc(300, 7)],
      ],
      secret,
      true,
    ),
    encodePacket({ code: 4, identifier: 1, attributes: [["Acct-Status-Type", "Stop"]] }, secret),
  ];
  let decoded = 0;
  let rejected = 0;
  for (let i = 0; i < 20_000; i++) {
    const base = seeds[rand(seeds.length)]!;
    let buf: Buffer;
    switch (rand(6)) {
      case 0: // random garbage, sometimes with a plausible header
        buf = Buffer.alloc(rand(300));
        for (let k = 0; k < buf.length; k++) buf[k] = rand(256);
        if (buf.length >= 4 && rand(2)) {
          buf[0] = [1, 2, 3, 4, 5, 11, 12, 40, 43][rand(9)]!;
          buf.writeUInt16BE(buf.length, 2);
        }
        break;
      case 1: // bit flips
        buf = Buffer.from(base);
        for (let k = 1 + rand(4); k > 0; k--) buf[rand(buf.length)]! ^= 1 << rand(8);
        break;
      case 2: // truncation, with or without a matching Length field
        buf = Buffer.from(base.subarray(0, rand(base.length + 1)));
        if (buf.length >= 4 && rand(2)) buf.writeUInt16BE(buf.length, 2);
        break;
      case 3: // Length field lies
        buf = Buffer.from(base);
        buf.writeUInt16BE(rand(2) ? rand(65536) : base.length + rand(8) - 4, 2);
        break;
      case 4: // an attribute length lies
        buf = Buffer.from(base);
        if (buf.length > 21) buf[20 + rand(buf.length - 21)] = rand(256);
        break;
      default: // random attribute octets appended to a valid header
        buf = Buffer.concat([
          base.subarray(0, 20),
          Buffer.from(Array.from({ length: rand(200) }, () => rand(256))),
        ]);
        buf.writeUInt16BE(buf.length, 2);
    }
    try {
      const p = decodePacket(buf, rand(2) ? { secret, requestAuthenticator: REQ_AUTH } : {});
      for (const a of p.attributes) assert.equal(typeof a.value, "string");
      decoded++;
    } catch (err) {
      if (!(err instanceof RadiusDecodeError)) {
        assert.fail(`iteration ${i} threw ${String(err)} for ${buf.toString("hex")}`);
      }
      rejected++;
    }
  }
  assert.ok(decoded > 2000 && rejected > 2000, `decoded ${decoded}, rejected ${rejected}`);
});

// --- Interop with FreeRADIUS's own tools -----------------------------------------------------

const radclient = spawnSync("radclient", ["-v"]).status === 0;
const noRadclient = radclient ? false : "radclient is not on PATH (apt install freeradius-utils)";
if (noRadclient) console.log(`# skipping FreeRADIUS interop: ${noRadclient}`);

interface Server {
  port: number;
  requests: RadiusPacket[];
  close(): void;
}

/** A UDP server answering with our codec; `answer` returns the response code and attributes. */
function startServer(
  secret: string,
  answer: (req: RadiusPacket, raw: Buffer) => [code: number, attributes: AttributeInput[]],
): Promise<Server> {
  const socket = dgram.createSocket("udp4");
  const requests: RadiusPacket[] = [];
  socket.on("message", (msg, rinfo) => {
    const req = decodePacket(msg, { secret });
    requests.push(req);
    const [code, attributes] = answer(req, msg);
    const out = encodePacket({ code, identifier: req.identifier, attributes }, secret, {
      requestAuthenticator: req.authenticator,
      requestCode: req.code,
      messageAuthenticator: true,
    });
    socket.send(out, rinfo.port, rinfo.address);
  });
  return new Promise((resolve) => {
    socket.bind(0, "127.0.0.1", () => {
      resolve({ port: (socket.address() as AddressInfo).port, requests, close: () => socket.close() });
    });
  });
}

function run(command: string, args: string[], input = ""): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { timeout: 10_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: unknown }).code as number) : 0;
      resolve({ code: typeof code === "number" ? code : 1, output: stdout + stderr });
    });
    child.stdin?.end(input);
  });
}

describe("interop with FreeRADIUS's radclient and radtest", { skip: noRadclient }, () => {
  const secret = "interop-secret";
  let server: Server;
  before(async () => {
    server = await startServer(secret, (req, raw) => {
      switch (req.code) {
        case 1: {
          const chap = getAttribute(req, "CHAP-Password");
          const challenge = getAttribute(req, "CHAP-Challenge")?.raw ?? req.authenticator;
          const password = getAttribute(req, "User-Password")?.value;
          const ok = chap ? verifyChap(chap.raw, challenge, "chap-pw") : password === "hello wörld";
          if (!ok) return [3, [["Reply-Message", "bad password"]]];
          return [
            2,
            [
              ["Reply-Message", "Welcome, bob"],
              ["Session-Timeout", 3600],
              ["WISPr-Bandwidth-Max-Down", 10_000_000],
              ["Mikrotik-Rate-Limit", "2M/10M"],
              ["Tunnel-Type:1", "VLAN"],
              ["Tunnel-Medium-Type:1", "IEEE-802"],
              ["Tunnel-Private-Group-Id:1", "42"],
              ["Tunnel-Password:1", "tunnel-pw"],
              ["Framed-IPv6-Prefix", "2001:db8:1::/48"],
              ["Class", "0x77697370"],
            ],
          ];
        }
        case 4:
          return [5, [["Reply-Message", verifyRequestAuthenticator(raw, secret) ? "acct ok" : "acct bad"]]];
        case 12:
          return [2, [["Reply-Message", verifyMessageAuthenticator(raw, secret) ? "status ok" : "bad"]]];
        case 40:
          return [41, [["Reply-Message", verifyRequestAuthenticator(raw, secret) ? "dm ok" : "dm bad"]]];
        default:
          return [44, [["Reply-Message", verifyRequestAuthenticator(raw, secret) ? "coa ok" : "coa bad"]]];
      }
    });
  });
  after(() => server.close());

  const radclientArgs = (kind: string) => [
    "-x",
    "-r",
    "1",
    "-t",
    "3",
    `127.0.0.1:${server.port}`,
    kind,
    secret,
  ];

  test("radclient decodes our Access-Accept; we decode its Access-Request", async () => {
    const input = [
      'User-Name = "bob"',
      'User-Password = "hello wörld"',
      'Called-Station-Id = "AA-BB-CC-DD-EE-FF:Guest"',
      "NAS-Port-Type = Wireless-802.11",
      'WISPr-Location-Name = "Lobby"',
      "ChilliSpot-Max-Total-Octets = 1000",
      "Tunnel-Private-Group-Id:3 = 7",
      "Framed-IPv6-Prefix = 2001:db8::/32",
      "Event-Timestamp = 1700000000",
    ].join("\n");
    const { code, output } = await run("radclient", radclientArgs("auth"), input);
    assert.equal(code, 0, output);
    assert.match(output, /Received Access-Accept Id \d+ from 127\.0\.0\.1/);
    for (const line of [
      'Reply-Message = "Welcome, bob"',
      "Session-Timeout = 3600",
      "WISPr-Bandwidth-Max-Down = 10000000",
      'Mikrotik-Rate-Limit = "2M/10M"',
      "Tunnel-Type:1 = VLAN",
      "Tunnel-Medium-Type:1 = IEEE-802",
      'Tunnel-Private-Group-Id:1 = "42"',
      'Tunnel-Password:1 = "tunnel-pw"',
      "Framed-IPv6-Prefix = 2001:db8:1::/48",
      "Class = 0x77697370",
    ]) {
      assert.ok(output.includes(`\t${line}\n`), `radclient should print ${line}:\n${output}`);
    }
    const req = server.requests.at(-1)!;
    assert.deepEqual(show(req), [
      "User-Name=bob",
      "User-Password=hello wörld",
      "Called-Station-Id=AA-BB-CC-DD-EE-FF:Guest",
      "NAS-Port-Type=Wireless-802.11",
      "WISPr-Location-Name=Lobby",
      "ChilliSpot-Max-Total-Octets=1000",
      "Tunnel-Private-Group-Id:3=7",
      "Framed-IPv6-Prefix=2001:db8::/32",
      "Event-Timestamp=1700000000",
    ]);
  });

  test("a wrong password gets an Access-Reject radclient accepts as genuine", async () => {
    const { output } = await run(
      "radclient",
      radclientArgs("auth"),
      'User-Name = bob\nUser-Password = "nope"',
    );
    assert.match(output, /Received Access-Reject/);
    assert.ok(output.includes('\tReply-Message = "bad password"\n'), output);
  });

  test("radtest -t chap: we verify FreeRADIUS's CHAP-Password", async () => {
    const args = ["-t", "chap", "bob", "chap-pw", `127.0.0.1:${server.port}`, "0", secret];
    const good = await run("radtest", args);
    assert.match(good.output, /Received Access-Accept/, good.output);
    const req = server.requests.at(-1)!;
    assert.equal(getAttribute(req, "CHAP-Password")?.raw.length, 17);
    assert.equal(getAttribute(req, "User-Name")?.value, "bob");
    const bad = await run("radtest", ["-t", "chap", "bob", "wrong", `127.0.0.1:${server.port}`, "0", secret]);
    assert.match(bad.output, /Received Access-Reject/, bad.output);
  });

  test("radclient accepts our Accounting-Response, CoA-ACK, Disconnect-ACK, Status reply", async () => {
    for (const [kind, input, expected] of [
      ["acct", "User-Name = bob\nAcct-Status-Type = Start\nAcct-Session-Id = s1", "acct ok"],
      ["coa", "User-Name = bob\nAcct-Session-Id = s1", "coa ok"],
      ["disconnect", "User-Name = bob", "dm ok"],
      ["status", "Message-Authenticator = 0x00", "status ok"],
    ] as const) {
      const { code, output } = await run("radclient", radclientArgs(kind), input);
      assert.equal(code, 0, output);
      // radclient checks our Response Authenticator and Message-Authenticator before printing.
      assert.ok(output.includes(`\tReply-Message = "${expected}"\n`), `${kind}:\n${output}`);
      assert.doesNotMatch(output, /invalid|failed/i);
    }
  });

  test("radclient prints our raw and escaped values the way we decode them", async () => {
    const local = await startServer(secret, () => [
      2,
      [
        ["Attr-26.14988.99", "0xaabb"],
        ["Attr-26.99999.7", "0x01"],
        ["Reply-Message", Buffer.from("61ff225c0a01c3a900", "hex")],
        ["Attr-27", "0x010203"],
      ],
    ]);
    try {
      const { output } = await run(
        "radclient",
        ["-x", "-r", "1", `127.0.0.1:${local.port}`, "auth", secret],
        "User-Name = x",
      );
      const accept = encodePacket(
        {
          code: 2,
          identifier: 1,
          attributes: [
            ["Attr-26.14988.99", "0xaabb"],
            ["Attr-26.99999.7", "0x01"],
            ["Reply-Message", Buffer.from("61ff225c0a01c3a900", "hex")],
            ["Attr-27", "0x010203"],
          ],
        },
        secret,
        { requestAuthenticator: REQ_AUTH },
      );
      for (const a of decodePacket(accept).attributes) {
        const printed = a.name === "Reply-Message" ? `"${a.value}"` : a.value;
        assert.ok(output.includes(`\t${a.name} = ${printed}\n`), `${a.name} = ${printed}\n${output}`);
      }
    } finally {
      local.close();
    }
  });
});

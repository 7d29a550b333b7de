import assert from "node:assert/strict";
import { test } from "node:test";
import { type AttributeDef, findAttribute } from "../../src/core/aaa/dictionary.ts";
import {
  CHECK_OPERATORS,
  checkAttributeValue,
  checkRegex,
  checkUsername,
  checkValueSafe,
  integerValue,
  REPLY_OPERATORS,
} from "../../src/core/aaa/values.ts";

function attr(name: string): AttributeDef {
  const def = findAttribute(name);
  assert.ok(def, `${name} should be in the dictionary`);
  return def;
}

function accepts(name: string, values: string[]): void {
  const def = attr(name);
  for (const v of values)
    assert.equal(checkAttributeValue(def, v), null, `${name} should accept ${JSON.stringify(v)}`);
}

function refuses(name: string, values: string[], reason?: RegExp): void {
  const def = attr(name);
  for (const v of values) {
    const got = checkAttributeValue(def, v);
    assert.equal(typeof got, "string", `${name} should refuse ${JSON.stringify(v)}`);
    if (reason) assert.match(got ?? "", reason, `${name} / ${JSON.stringify(v)}`);
  }
}

/** A definition of a type no shipped dictionary uses much, to test every type. */
function fake(type: AttributeDef["type"], values: Array<[string, number]> = []): AttributeDef {
  return { name: `Test-${type}`, code: 1, type, values: new Map(values), hasTag: false, internal: false };
}

test("operators", () => {
  assert.deepEqual(
    [...CHECK_OPERATORS],
    ["==", ":=", "+=", "!=", ">", ">=", "<", "<=", "=~", "!~", "=*", "!*"],
  );
  assert.deepEqual([...REPLY_OPERATORS], ["=", ":=", "+="]);
});

test("string: any text up to 253 bytes, empty allowed", () => {
  accepts("Reply-Message", ["", "Welcome!", "héllo wörld", "a".repeat(253), "50%", "{not an expansion}"]);
  refuses("Reply-Message", ["a".repeat(254), "é".repeat(127)], /253 bytes/);
  accepts("Reply-Message", ["é".repeat(126)]);
  accepts("Cleartext-Password", ["s3cret!", "with spaces", "it's"]);
});

test("integer: range and named values, case-insensitive", () => {
  accepts("Session-Timeout", ["0", "3600", "4294967295", "007"]);
  refuses("Session-Timeout", ["4294967296", "-1", "1.5", "1e3", "0x10", " 1", "1 ", "+1", "ten"], /integer/);
  assert.equal(checkAttributeValue(attr("Session-Timeout"), ""), "must not be empty");
  accepts("Service-Type", ["Framed-User", "framed-user", "FRAMED-USER", "2", "Login-User"]);
  const reason = checkAttributeValue(attr("Service-Type"), "Framed");
  // "Framed" is a dictionary.compat alias (2), so it is accepted; a made-up name is not.
  assert.equal(reason, null);
  assert.equal(
    checkAttributeValue(attr("Service-Type"), "Frame-User"),
    "must be an integer from 0 to 4294967295 or one of Login-User, Framed-User, Callback-Login-User, " +
      "Callback-Framed-User, Outbound-User, Administrative-User, ...",
  );
  assert.equal(
    checkAttributeValue(attr("Fall-Through"), "maybe"),
    "must be an integer from 0 to 4294967295 or one of No, Yes",
  );
  accepts("Fall-Through", ["Yes", "no", "1"]);
  accepts("Auth-Type", ["Accept", "reject", "PAP"]);
  accepts("Simultaneous-Use", ["1"]);
  refuses("Simultaneous-Use", ["one"], /^must be an integer from 0 to 4294967295$/);
  accepts("WISPr-Bandwidth-Max-Down", ["1000000"]);
  accepts("ChilliSpot-Max-Total-Octets", ["4294967295"]);
  refuses("ChilliSpot-Max-Total-Octets", ["4294967296"]);
});

test("byte, short, signed, integer64 ranges", () => {
  const byte = fake("byte", [["Low", 1]]);
  assert.equal(checkAttributeValue(byte, "255"), null);
  assert.equal(checkAttributeValue(byte, "low"), null);
  assert.equal(checkAttributeValue(byte, "256"), "must be an integer from 0 to 255 or one of Low");
  const short = fake("short");
  assert.equal(checkAttributeValue(short, "65535"), null);
  assert.equal(checkAttributeValue(short, "65536"), "must be an integer from 0 to 65535");
  const signed = fake("signed");
  for (const ok of ["-2147483648", "2147483647", "0", "-5"])
    assert.equal(checkAttributeValue(signed, ok), null, ok);
  for (const bad of ["-2147483649", "2147483648", "--1", "-"]) {
    assert.equal(checkAttributeValue(signed, bad), "must be an integer from -2147483648 to 2147483647", bad);
  }
  const big = attr("Max-All-Session");
  assert.equal(big.type, "integer64");
  for (const ok of ["0", "18446744073709551615", "86400"])
    assert.equal(checkAttributeValue(big, ok), null, ok);
  for (const bad of ["18446744073709551616", "-1", "123456789012345678901", "1h"]) {
    assert.equal(checkAttributeValue(big, bad), "must be an integer from 0 to 18446744073709551615", bad);
  }
  accepts("Max-Daily-Session", ["3600"]);
});

test("integerValue resolves names and numbers", () => {
  assert.equal(integerValue(attr("Service-Type"), "framed-user"), 2n);
  assert.equal(integerValue(attr("Service-Type"), "6"), 6n);
  assert.equal(integerValue(attr("Service-Type"), "nope"), undefined);
  assert.equal(integerValue(attr("Max-All-Session"), "18446744073709551615"), 18446744073709551615n);
  assert.equal(integerValue(attr("User-Name"), "1"), undefined);
});

test("date: Unix seconds only", () => {
  accepts("Expiration", ["0", "1735689600", "4294967295"]);
  refuses(
    "Expiration",
    ["2025-01-01", "2025-01-01T00:00:00Z", "Jan 1 2025", "-1", "4294967296", "1735689600.5", ""],
    /Unix seconds|empty/,
  );
  accepts("Event-Timestamp", ["1700000000"]);
});

test("ipaddr: dotted IPv4 only", () => {
  accepts("Framed-IP-Address", ["192.0.2.1", "0.0.0.0", "255.255.255.255"]);
  refuses(
    "Framed-IP-Address",
    ["example.com", "256.0.0.1", "192.0.2", "192.0.2.01", "192.0.2.1/32", "::1", "", "1.2.3.4 "],
    /IPv4 address|empty/,
  );
  // inet_aton's forms (short, hex, octal), which ipaddr.js would take, are refused.
  refuses(
    "Framed-IP-Address",
    ["127.1", "0x7f000001", "0x7f.0.0.1", "010.0.0.1", "2130706433"],
    /IPv4 address|empty/,
  );
  accepts("Client-IP-Address", ["10.0.0.1"]);
});

test("ipv6addr", () => {
  const def = fake("ipv6addr");
  for (const ok of [
    "2001:db8::1",
    "::1",
    "::",
    "fe80::1:2:3:4",
    "::ffff:192.0.2.1",
    "2001:DB8:0:0:0:0:0:1",
  ]) {
    assert.equal(checkAttributeValue(def, ok), null, ok);
  }
  for (const bad of ["2001:db8::g", "192.0.2.1", "fe80::1%eth0", "2001:db8::/64", "host", "::ffff:127.1"]) {
    assert.equal(checkAttributeValue(def, bad), "must be an IPv6 address such as 2001:db8::1", bad);
  }
  accepts("Framed-IPv6-Address", ["2001:db8::5"]);
});

test("ipv4prefix and ipv6prefix: CIDR", () => {
  const v4 = fake("ipv4prefix");
  for (const ok of ["192.0.2.0/24", "0.0.0.0/0", "10.0.0.1/32", "10.0.0.1"]) {
    assert.equal(checkAttributeValue(v4, ok), null, ok);
  }
  for (const bad of [
    "192.0.2.0/33",
    "192.0.2.0/",
    "192.0.2.0/x",
    "2001:db8::/32",
    "net/24",
    "10.1/16",
    "010.0.0.0/8",
  ]) {
    assert.match(checkAttributeValue(v4, bad) ?? "", /IPv4 prefix/, bad);
  }
  accepts("Framed-IPv6-Prefix", ["2001:db8::/32", "::/0", "2001:db8::1/128", "2001:db8::"]);
  refuses(
    "Framed-IPv6-Prefix",
    ["2001:db8::/129", "192.0.2.0/24", "2001:db8::/-1", "fe80::%eth0/64"],
    /IPv6 prefix/,
  );
  accepts("Delegated-IPv6-Prefix", ["2001:db8:1::/48"]);
});

test("ether: MAC addresses with : or -", () => {
  const def = fake("ether");
  for (const ok of ["00:11:22:aa:bb:cc", "00-11-22-AA-BB-CC", "a0:b1:c2:d3:e4:f5"]) {
    assert.equal(checkAttributeValue(def, ok), null, ok);
  }
  for (const bad of [
    "00:11:22:aa:bb",
    "00:11-22:aa:bb:cc",
    "0011.22aa.bbcc",
    "00:11:22:aa:bb:gg",
    "001122aabbcc",
  ]) {
    assert.match(checkAttributeValue(def, bad) ?? "", /MAC address/, bad);
  }
});

test("ifid", () => {
  accepts("Framed-Interface-Id", ["0000:0000:0000:0001", "1:2:3:4", "abcd:ef01:2345:6789"]);
  refuses("Framed-Interface-Id", ["1:2:3", "1:2:3:4:5", "12345:0:0:0", "g:0:0:0"], /interface id/);
});

test("octets: 0x plus even hex, or plain text", () => {
  accepts("NT-Password", ["0x8846f7eaee8fb117ad06bdd830b7586c", "0X00ff", "plain text", "0y12"]);
  refuses("NT-Password", ["0x123", "0xzz", "0x", "0x12 34", ""], /hex digits|empty/);
  accepts("MS-CHAP-Challenge", ["0x00112233445566778899aabbccddeeff"]);
  // 253 bytes of text is the ceiling for every type, hex included.
  refuses("NT-Password", [`0x${"ab".repeat(126)}`], /253 bytes/);
});

test("types without a text form are refused", () => {
  refuses("Vendor-Specific", ["x"], /have no text form/);
  refuses("WiMAX-Capability", ["0x01"], /type tlv/);
});

test("abinary: only the generic checks", () => {
  accepts("Ascend-Data-Filter", ["ip in forward srcip 192.0.2.1/32"]);
  refuses("Ascend-Data-Filter", ["", "%{User-Name}"]);
});

test("tags on has_tag attributes", () => {
  accepts("Tunnel-Type", ["VLAN", ":1:VLAN", ":0:13", ":31:vlan", ":*:VLAN"]);
  refuses("Tunnel-Type", [":32:VLAN", ":x:VLAN", "::VLAN"], /tag must be from 0 to 31/);
  refuses("Tunnel-Type", [":1:Nope"], /integer/);
  accepts("Tunnel-Private-Group-Id", [":1:100", "100"]);
  // Without has_tag, a leading :n: is just part of the value.
  accepts("Reply-Message", [":1:hello"]);
  refuses("Session-Timeout", [":1:60"], /integer/);
});

test("operators change what the value means", () => {
  const def = attr("Called-Station-Id");
  assert.equal(checkAttributeValue(def, "^AA-BB-CC-DD-EE-FF:Guest.*$", "=~"), null);
  assert.match(checkAttributeValue(def, "([unclosed", "=~") ?? "", /not a valid regular expression/);
  assert.match(checkAttributeValue(def, "(", "!~") ?? "", /not a valid regular expression/);
  // =* and !* ignore the value when comparing, but FreeRADIUS still parses it for the type and
  // rejects the user when it cannot (the parity suite saw "ANY" on an ipaddr do that).
  assert.match(checkAttributeValue(attr("Session-Timeout"), "anything", "=*") ?? "", /integer/);
  assert.match(checkAttributeValue(attr("Framed-IP-Address"), "ANY", "!*") ?? "", /IPv4|address/i);
  assert.equal(checkAttributeValue(attr("Session-Timeout"), "0", "!*"), null);
  // ...but the generic checks still apply, whatever the operator.
  assert.match(checkAttributeValue(def, "%{User-Name}", "=~") ?? "", /%\{/);
  assert.match(checkAttributeValue(def, "a\nb", "=*") ?? "", /control/);
  // Comparison operators keep the type check.
  assert.match(checkAttributeValue(attr("Session-Timeout"), "soon", ">=") ?? "", /integer/);
  assert.equal(checkAttributeValue(attr("Session-Timeout"), "60", ":="), null);
  assert.equal(checkRegex("^[a-z]+@example\\.com$"), null);
  assert.notEqual(checkRegex("a{2,1}"), null);
});

test("checkValueSafe refuses values FreeRADIUS would mangle", () => {
  for (const ok of ["", "plain", "it's", 'say "hi"', "'half", "`", "'", "100%", "{x}", "%s", "é", "😀"]) {
    assert.equal(checkValueSafe(ok), null, ok);
  }
  for (const quoted of ["'x'", '"x"', "`date`", "''", '""', "``", "'a b'"]) {
    assert.equal(checkValueSafe(quoted), "must not be wrapped in quotes or backticks", quoted);
  }
  for (const expansion of ["%{User-Name}", "a%{b", "%{"]) {
    assert.match(checkValueSafe(expansion) ?? "", /%\{/, expansion);
  }
  for (const control of ["a\nb", "a\rb", "\t", "a\u0000", "x\u001f", "del\u007f"]) {
    assert.equal(checkValueSafe(control), "must not contain control characters", JSON.stringify(control));
  }
  assert.equal(checkValueSafe("\ud800"), "must be valid Unicode text");
  assert.equal(checkValueSafe("a".repeat(253)), null);
  assert.equal(checkValueSafe("a".repeat(254)), "must be at most 253 bytes");
  assert.equal(checkValueSafe("😀".repeat(64)), "must be at most 253 bytes"); // 256 bytes
  // checkAttributeValue applies them too.
  assert.equal(
    checkAttributeValue(attr("Reply-Message"), "'quoted'"),
    "must not be wrapped in quotes or backticks",
  );
  assert.equal(
    checkAttributeValue(attr("Session-Timeout"), '"60"'),
    "must not be wrapped in quotes or backticks",
  );
});

test("checkUsername", () => {
  for (const ok of [
    "alice",
    "a",
    "Bob.Smith_2",
    "user@example.com",
    "aa:bb:cc:dd:ee:ff",
    "x-y",
    "a".repeat(64),
  ]) {
    assert.equal(checkUsername(ok), null, ok);
  }
  assert.equal(checkUsername(""), "must be 1 to 64 characters long");
  assert.equal(checkUsername("a".repeat(65)), "must be 1 to 64 characters long");
  for (const bad of ["al ice", "bob!", "é", "a/b", "a'b", "a%b", "a\nb", "a+b"]) {
    assert.equal(checkUsername(bad), "may only contain letters, digits and @ . _ : -", bad);
  }
});

// Addresses and CIDRs typed by people (network addresses, key allow-lists) are read strictly; the
// forms ipaddr.js would also take (inet_aton's short, hex and octal IPv4) are refused.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IpAllowList, parseCidr as parseAllowListEntry } from "../../src/core/keys/ip-allow-list.ts";
import { canonicalNasIp, containingNetworks } from "../../src/core/networks/address.ts";
import { formatIp, inNetwork, parseCidr, parseIp } from "../../src/core/shared/ip.ts";

const LENIENT_IPV4 = ["127.1", "0x7f000001", "0x7f.0.0.1", "010.0.0.1", "0177.0.0.1", "2130706433", "1.2.3"];

describe("shared IP parsing", () => {
  test("IPv4 is four decimal parts without leading zeros", () => {
    for (const text of LENIENT_IPV4) assert.equal(parseIp(text), null, text);
    for (const text of ["::ffff:127.1", "::ffff:010.0.0.1", "::ffff:0x7f.0.0.1", " 10.0.0.1", "10.0.0.1 "]) {
      assert.equal(parseIp(text), null, text);
    }
    assert.equal(formatIp(parseIp("10.0.0.1")!), "10.0.0.1");
    assert.equal(parseIp("10.0.0.1", 6), null);
    assert.equal(parseIp("::1", 4), null);
  });

  test("IPv6: compressed, full and dotted forms; zones refused; RFC 5952 text", () => {
    const same: [string, string][] = [
      ["2001:db8::1", "2001:db8::1"],
      ["2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
      ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
      ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
      ["::ffff:10.0.0.1", "::ffff:a00:1"],
      ["::FFFF:a00:1", "::ffff:a00:1"],
      // IPv4-compatible (RFC 4291 section 2.5.5.1): not the IPv4-mapped address ipaddr.js reads it as.
      ["::1.2.3.4", "::102:304"],
      ["::", "::"],
    ];
    for (const [text, canonical] of same) assert.equal(formatIp(parseIp(text)!), canonical, text);
    for (const text of ["fe80::1%eth0", "fe80::1%1", "2001:db8::g", "1:2:3:4:5:6:7:8:9", "::1::", "[::1]"]) {
      assert.equal(parseIp(text), null, text);
    }
  });

  test("CIDRs: a bare address is a full-length prefix; prefixes are 0-32 or 0-128", () => {
    assert.equal(parseCidr("10.0.0.1").prefix, 32);
    assert.equal(parseCidr("::1").prefix, 128);
    assert.equal(parseCidr("10.0.0.5/24").prefix, 24);
    const reasons: [string, RegExp][] = [
      ["10.0.0.0/33", /invalid prefix length \(0-32\)/],
      ["2001:db8::/129", /invalid prefix length \(0-128\)/],
      ["10.0.0.0/", /invalid prefix length/],
      ["10.0.0.0/-1", /invalid prefix length/],
      ["10.0.0.0/0x8", /invalid prefix length/],
      ["10.0.0.0/8/8", /not an address or CIDR/],
      ["fe80::%eth0/64", /zone/],
      ["127.1/8", /not an IPv4 or IPv6 address/],
    ];
    for (const [text, reason] of reasons) assert.throws(() => parseCidr(text), reason, text);
    assert.throws(() => parseCidr("2001:db8::/32", 4), /not an IPv4 address/);
  });

  test("matching: an IPv4 address and its IPv4-mapped form are one address", () => {
    const v4 = parseCidr("10.0.0.0/8");
    const mapped = parseCidr("::ffff:10.0.0.0/104");
    for (const network of [v4, mapped]) {
      assert.equal(inNetwork(parseIp("10.1.2.3")!, network), true);
      assert.equal(inNetwork(parseIp("::ffff:10.1.2.3")!, network), true);
      assert.equal(inNetwork(parseIp("11.1.2.3")!, network), false);
      assert.equal(inNetwork(parseIp("::a01:203")!, network), false, "IPv4-compatible is not mapped");
    }
    assert.equal(inNetwork(parseIp("2001:db8::5")!, parseCidr("2001:db8::/32")), true);
    assert.equal(inNetwork(parseIp("10.0.0.1")!, parseCidr("2001:db8::/32")), false);
  });
});

describe("network addresses (nas_ip)", () => {
  test("canonical text; lenient IPv4, IPv4-mapped IPv6 and zones refused", () => {
    const canonical: [string, string][] = [
      ["2001:db8:0:0:0:0:0:1", "2001:db8::1"],
      ["2001:DB8::1/128", "2001:db8::1"],
      ["2001:db8::ffff:1/64", "2001:db8::/64"],
      ["::1.2.3.4", "::102:304"],
      ["10.0.0.255/31", "10.0.0.254/31"],
      ["0.0.0.0/0", "0.0.0.0/0"],
    ];
    for (const [text, stored] of canonical) assert.equal(canonicalNasIp(text), stored, text);
    for (const text of LENIENT_IPV4) assert.throws(() => canonicalNasIp(text), /not an IPv4 or IPv6/, text);
    for (const text of ["::ffff:10.0.0.1", "::ffff:a00:1", "::ffff:10.0.0.0/120"]) {
      assert.throws(() => canonicalNasIp(text), /IPv4-mapped/, text);
    }
    assert.throws(() => canonicalNasIp("fe80::1%eth0"), /zone/);
  });

  test("containing networks of a source address: most specific first, mapped as IPv4", () => {
    assert.deepEqual(containingNetworks("::ffff:192.0.2.12").slice(0, 3), [
      "192.0.2.12",
      "192.0.2.12/31",
      "192.0.2.12/30",
    ]);
    assert.deepEqual(containingNetworks("::ffff:c000:20c"), containingNetworks("192.0.2.12"));
    const v6 = containingNetworks("2001:DB8:10:2:0:0:0:5");
    assert.equal(v6.length, 129);
    assert.deepEqual([v6[0], v6[64], v6[128]], ["2001:db8:10:2::5", "2001:db8:10:2::/64", "::/0"]);
    assert.equal(containingNetworks("fe80::1%eth0")[0], "fe80::1");
    for (const text of ["127.1", "010.0.0.1", "192.0.2.0/24", "", "host"]) {
      assert.deepEqual(containingNetworks(text), [], text);
    }
  });
});

describe("API key allow-lists", () => {
  test("entries: canonical network/prefix; lenient IPv4, IPv4-mapped IPv6 and zones refused", () => {
    const entries: [string, string][] = [
      ["::1", "::1/128"],
      [" 10.0.0.0/8 ", "10.0.0.0/8"],
      ["10.1.2.3/16", "10.1.0.0/16"],
      ["2001:0DB8:0:0:0:0:0:0/32", "2001:db8::/32"],
      ["2001:db8::5", "2001:db8::5/128"],
    ];
    for (const [text, stored] of entries) assert.equal(parseAllowListEntry(text), stored, text);
    for (const text of [...LENIENT_IPV4, "127.1/8", "0x7f000001/32"]) {
      assert.throws(() => parseAllowListEntry(text), /not an IPv4 or IPv6/, text);
    }
    assert.throws(() => parseAllowListEntry("::ffff:10.0.0.1"), /IPv4-mapped/);
    assert.throws(() => parseAllowListEntry("fe80::1%eth0"), /zone/);
    assert.throws(() => parseAllowListEntry("fe80::%eth0/64"), /zone/);
  });

  test("matching: IPv4, IPv6 and IPv4-mapped sources; stored entries that do not read match nothing", () => {
    const list = new IpAllowList(["10.0.0.0/8", "2001:db8::/32", "::1/128"]);
    for (const ip of ["10.9.8.7", "::ffff:10.9.8.7", "2001:db8:1::1", "2001:0db8:0:0:0:0:0:1", "::1"]) {
      assert.equal(list.allows(ip), true, ip);
    }
    for (const ip of [
      "11.0.0.1",
      "127.0.0.1",
      "2001:db9::1",
      "::2",
      "010.0.0.1",
      "10.1",
      "fe80::1%eth0",
      "",
    ]) {
      assert.equal(list.allows(ip), false, ip);
    }
    // Written before entries were canonical: an IPv4-mapped entry still matches its IPv4 address.
    const older = new IpAllowList(["::ffff:192.168.0.0/112", "not-a-cidr"]);
    assert.equal(older.allows("192.168.4.5"), true);
    assert.equal(older.allows("192.169.0.1"), false);
    assert.equal(new IpAllowList(["not-a-cidr"]).allows("10.0.0.1"), false);
    assert.equal(new IpAllowList([]).allows("anything"), true);
  });
});

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  findAttribute,
  findAttributeByCode,
  findValue,
  findVendor,
  listAttributes,
  loadDictionary,
  parseAttributeName,
  parseDictionary,
} from "../../src/core/aaa/dictionary.ts";

function attr(name: string) {
  const def = findAttribute(name);
  assert.ok(def, `${name} should be in the dictionary`);
  return def;
}

test("loads the shipped tree without warnings", () => {
  // Its time (about 40 ms cold) is not asserted: timed tests fail on a loaded machine.
  const dict = loadDictionary({ reload: true });
  assert.ok(dict.loadMs > 0);
  assert.ok(dict.files > 150, `only ${dict.files} files read`);
  assert.ok(dict.byName.size > 5000, `only ${dict.byName.size} attributes`);
  assert.ok(dict.skipped > 0, "TLV / extended children should be skipped, not parsed as top-level");
  assert.deepEqual(dict.warnings, []);
  // Cached: the same object until a reload.
  assert.equal(loadDictionary(), dict);
});

test("standard attributes", () => {
  assert.deepEqual(
    { ...attr("User-Name"), values: attr("User-Name").values.size },
    { name: "User-Name", code: 1, type: "string", values: 0, hasTag: false, internal: false },
  );
  assert.equal(attr("Session-Timeout").code, 27);
  assert.equal(attr("Session-Timeout").type, "integer");
  assert.equal(attr("Framed-IP-Address").code, 8);
  assert.equal(attr("Framed-IP-Address").type, "ipaddr");
  assert.equal(attr("Called-Station-Id").code, 30);
  assert.equal(attr("Called-Station-Id").vendorId, undefined);
  assert.equal(attr("Event-Timestamp").type, "date");
  assert.equal(attr("Framed-IPv6-Prefix").type, "ipv6prefix");
  assert.equal(attr("Framed-Interface-Id").type, "ifid");
});

test("flags: has_tag, encrypt, concat", () => {
  assert.equal(attr("Tunnel-Type").hasTag, true);
  assert.equal(attr("Tunnel-Private-Group-Id").hasTag, true);
  assert.equal(attr("Tunnel-Password").hasTag, true);
  assert.equal(attr("Tunnel-Password").encrypt, 2);
  assert.equal(attr("User-Password").encrypt, 1);
  assert.equal(attr("User-Password").hasTag, false);
  assert.equal(attr("EAP-Message").concat, true);
  assert.equal(attr("MS-MPPE-Send-Key").encrypt, 2);
});

test("vendor attributes", () => {
  const wispr = attr("WISPr-Bandwidth-Max-Down");
  assert.equal(wispr.code, 8);
  assert.equal(wispr.type, "integer");
  assert.equal(wispr.vendorId, 14122);
  assert.equal(wispr.vendorName, "WISPr");
  const chilli = attr("ChilliSpot-Max-Total-Octets");
  assert.deepEqual([chilli.code, chilli.vendorId, chilli.type], [3, 14559, "integer"]);
  const mikrotik = attr("Mikrotik-Rate-Limit");
  assert.deepEqual([mikrotik.code, mikrotik.vendorId, mikrotik.type], [8, 14988, "string"]);
  const ms = attr("MS-CHAP-Challenge");
  assert.deepEqual([ms.code, ms.vendorId, ms.vendorName, ms.type], [11, 311, "Microsoft", "octets"]);
  assert.equal(ms.internal, false);
});

test("vendors, including format= options", () => {
  assert.deepEqual(findVendor("wispr"), {
    name: "WISPr",
    id: 14122,
    typeSize: 1,
    lengthSize: 1,
    continuation: false,
  });
  assert.equal(findVendor(311)?.name, "Microsoft");
  assert.equal(findVendor("USR")?.typeSize, 4);
  assert.equal(findVendor("USR")?.lengthSize, 0);
  assert.equal(findVendor("Lucent")?.typeSize, 2);
  assert.equal(findVendor("WiMAX")?.continuation, true);
  assert.equal(findVendor("No-Such-Vendor"), undefined);
  // USR numbers its attributes in hex (0x0066).
  assert.equal(attr("USR-Last-Number-Dialed-Out").code, 0x66);
});

test("FreeRADIUS internal attributes come from the 3.2 table and are never on the wire", () => {
  const expected: Array<[string, number, string]> = [
    ["Cleartext-Password", 1100, "string"],
    ["Auth-Type", 1000, "integer"],
    ["Expiration", 1010, "date"],
    ["Simultaneous-Use", 1034, "integer"],
    ["Fall-Through", 500, "integer"],
    ["Crypt-Password", 1006, "string"],
    ["NT-Password", 1058, "octets"],
    ["MD5-Password", 1095, "octets"],
    ["SHA-Password", 1093, "octets"],
    ["Login-Time", 1042, "string"],
    ["Pool-Name", 1073, "string"],
    ["Client-IP-Address", 1052, "ipaddr"],
    ["Max-All-Session", 3002, "integer64"],
    ["Max-Daily-Session", 3000, "integer64"],
    ["Expire-After", 3003, "integer64"],
  ];
  for (const [name, code, type] of expected) {
    const def = attr(name);
    assert.deepEqual([def.name, def.code, def.type, def.internal], [name, code, type, true], name);
  }
  // The shipped 4.x internal file numbers Packet-Type 1000; the 3.2 table must win.
  assert.equal(attr("Packet-Type").code, 1047);
  assert.equal(findAttributeByCode(1000)?.name, "Auth-Type");
  assert.equal(findValue(attr("Auth-Type"), "accept")?.value, 254);
  assert.equal(findValue(attr("Fall-Through"), "YES")?.value, 1);
  // Session-Timeout is a real RADIUS attribute, not an internal one.
  assert.equal(attr("Session-Timeout").internal, false);
  // `FLAGS internal` in dictionary.broadsoft covers numbers too wide for the vendor's type field.
  assert.equal(attr("BWAS-SCC-Cause").internal, true);
});

test("lookups are case-insensitive and return the canonical name", () => {
  assert.equal(findAttribute("user-name")?.name, "User-Name");
  assert.equal(findAttribute("CLEARTEXT-PASSWORD")?.name, "Cleartext-Password");
  assert.equal(findAttribute("wispr-bandwidth-max-up")?.name, "WISPr-Bandwidth-Max-Up");
  assert.equal(findAttribute("mikrotik-rate-limit")?.name, "Mikrotik-Rate-Limit");
});

test("unknown names", () => {
  assert.equal(findAttribute("No-Such-Attribute-Here"), undefined);
  assert.equal(findAttribute(""), undefined);
  assert.equal(findAttribute("User-Name "), undefined);
  // TLV children are skipped rather than mistaken for top-level attributes.
  assert.equal(findAttribute("WiMAX-Release"), undefined);
  assert.equal(findAttribute("FreeRADIUS-Stats4-Type"), undefined);
});

test("by code: standard, vendor, and the newer name for a reused number", () => {
  assert.equal(findAttributeByCode(1)?.name, "User-Name");
  // dictionary.compat names 4 Client-Id first; decoding uses the later NAS-IP-Address.
  assert.equal(findAttributeByCode(4)?.name, "NAS-IP-Address");
  assert.equal(findAttribute("Client-Id")?.code, 4);
  assert.equal(findAttributeByCode(8, 14122)?.name, "WISPr-Bandwidth-Max-Down");
  assert.equal(findAttributeByCode(11, 311)?.name, "MS-CHAP-Challenge");
  assert.equal(findAttributeByCode(8, 14988)?.name, "Mikrotik-Rate-Limit");
  assert.equal(findAttributeByCode(250, 14122), undefined);
  assert.equal(findAttributeByCode(1, 999999), undefined);
});

test("named values", () => {
  const serviceType = attr("Service-Type");
  assert.equal(serviceType.values.get("Framed-User"), 2);
  assert.deepEqual(findValue(serviceType, "framed-user"), { name: "Framed-User", value: 2 });
  assert.equal(findValue(serviceType, "Nope"), undefined);
  // A VALUE given inside another vendor's block still attaches to its attribute by name.
  assert.equal(serviceType.values.get("ChilliSpot-Authorize-Only"), 0x38df0001);
  assert.equal(attr("Tunnel-Type").values.get("VLAN"), 13);
  assert.equal(attr("Acct-Status-Type").values.get("Interim-Update"), 3);
});

test("tagged names", () => {
  assert.deepEqual(parseAttributeName("Tunnel-Type:1"), { def: attr("Tunnel-Type"), tag: 1 });
  assert.deepEqual(parseAttributeName("tunnel-private-group-id:31")?.tag, 31);
  assert.equal(parseAttributeName("Tunnel-Type:32"), undefined);
  assert.equal(parseAttributeName("User-Name:1"), undefined);
  assert.deepEqual(parseAttributeName("User-Name"), { def: attr("User-Name") });
});

test("listAttributes", () => {
  const names = new Set(listAttributes().map((d) => d.name));
  assert.ok(names.has("User-Name") && names.has("Cleartext-Password") && names.has("MS-CHAP-Challenge"));
});

test("parser tolerates odd input and follows $INCLUDE", () => {
  const dir = mkdtempSync(join(tmpdir(), "wisp-dict-"));
  try {
    writeFileSync(
      join(dir, "dictionary"),
      [
        "# comment",
        "$INCLUDE dictionary.sub",
        "$INCLUDE- dictionary.missing-but-optional",
        "$INCLUDE dictionary.missing",
        "$INCLUDE dictionary.sub # included twice: read once",
        "ATTRIBUTE Test-A 1 string",
        "ATTRIBUTE Test-A 2 integer",
        "ATTRIBUTE Test-Incomplete",
        "ATTRIBUTE Test-Dotted 241.1 integer",
        "ATTRIBUTE Test-Weird 3 struct",
        "ATTRIBUTE Test-Big 300 integer",
        "VALUE Test-B Early 7",
        "ATTRIBUTE Test-B 4 integer",
        "VALUE Test-B Garbage",
        "VALUE No-Such-Attr X 1",
        "VENDOR Acme 9999 format=2,2",
        "BEGIN-VENDOR Acme",
        "ATTRIBUTE Acme-T 1 tlv",
        "BEGIN-TLV Acme-T",
        "ATTRIBUTE Acme-Child 1 string",
        "END-TLV Acme-T",
        "ATTRIBUTE Acme-Mac 2 ether has_tag,encrypt=2",
        "ATTRIBUTE Acme-Wide 300 octets[6]",
        "END-VENDOR",
        "attribute Test-Lower 6 string",
        "FLAGS internal",
        "ATTRIBUTE Test-Internal 5 string",
        "UNKNOWN-KEYWORD a b c",
        "",
      ].join("\n"),
    );
    writeFileSync(join(dir, "dictionary.sub"), "ATTRIBUTE Test-Sub 10 ipaddr\n");
    const dict = parseDictionary(join(dir, "dictionary"));
    const get = (n: string) => dict.byName.get(n.toLowerCase());
    assert.equal(get("Test-Sub")?.type, "ipaddr");
    assert.equal(get("Test-A")?.code, 1, "first definition wins");
    assert.equal(get("Test-Dotted"), undefined);
    assert.equal(get("Test-Weird")?.type, "other");
    assert.equal(get("Test-Big")?.internal, true, "standard numbers above 255 cannot be encoded");
    assert.equal(get("Test-B")?.values.get("Early"), 7, "VALUE before ATTRIBUTE");
    assert.equal(get("Acme-Child"), undefined);
    assert.equal(get("Acme-T")?.type, "tlv");
    assert.deepEqual(
      [get("Acme-Mac")?.type, get("Acme-Mac")?.vendorId, get("Acme-Mac")?.hasTag, get("Acme-Mac")?.encrypt],
      ["ether", 9999, true, 2],
    );
    assert.equal(get("Acme-Wide")?.type, "octets");
    assert.equal(get("Acme-Wide")?.internal, false, "format=2,2 allows numbers up to 65535");
    assert.equal(get("Test-Internal")?.internal, true);
    // Keywords are case-insensitive, and a bare END-VENDOR closes the vendor block.
    assert.deepEqual([get("Test-Lower")?.code, get("Test-Lower")?.vendorId], [6, undefined]);
    // Internal attributes are added even when the tree does not include the internal file.
    assert.equal(get("Cleartext-Password")?.code, 1100);
    assert.equal(dict.files, 2);
    // Missing file, duplicate Test-A, incomplete ATTRIBUTE, bad VALUE; not the optional include.
    assert.equal(dict.warnings.length, 4, dict.warnings.join("\n"));
    assert.ok(dict.warnings.some((w) => w.startsWith(`cannot read ${join(dir, "dictionary.missing")}:`)));
    assert.ok(dict.warnings.some((w) => w.endsWith("dictionary:8: incomplete ATTRIBUTE")));
    assert.ok(dict.warnings.some((w) => w.endsWith("dictionary:14: bad VALUE")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

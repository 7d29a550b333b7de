// PAP through real UDP packets compares octets: the User-Password after RFC 2865 section 5.2
// decryption (NUL padding removed) against the stored Cleartext-Password's UTF-8, in constant time
// and whatever the lengths. Invalid UTF-8 never passes for U+FFFD, a voucher's code ignores the case
// of ASCII letters only, and a User-Password check item compares octets too. Against an
// NT-Password, the NT hash of the octets as rlm_pap reads them; against a hash, its hash.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ntPasswordHash } from "../../src/core/aaa/nt-hash.ts";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import type { AttributeInput } from "../../src/radius/packet.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "pap-Secret-58";
const STATION: AttributeInput[] = [
  ["NAS-IP-Address", "127.0.0.1"],
  ["Calling-Station-Id", "11-22-33-44-55-66"],
];
const utf8 = (text: string) => Buffer.from(text, "utf8");
const ascii = (length: number, seed = "k") =>
  Array.from({ length }, (_, i) => String.fromCharCode(33 + ((i * 7 + seed.charCodeAt(0)) % 90))).join("");

describe("PAP compares octets", () => {
  let server: TestServer;
  let authPort: number;
  let accountId: number;

  /** An Access-Request whose User-Password is these octets (hidden by the encoder, NUL-padded). */
  const papOctets = (username: string, password: Buffer) =>
    sendRadius({
      code: "Access-Request",
      attributes: [["User-Name", username], ["User-Password", password], ...STATION],
      host: "127.0.0.1",
      port: authPort,
      secret: SECRET,
      timeoutMs: 2000,
      retries: 0,
    }).then((answer) => answer.type);

  async function user(username: string, password?: string, check: [string, string, string][] = []) {
    const created = await server.core.users.create(accountId, { username, password });
    for (const [attribute, operator, value] of check) {
      await server.core.attributes.addToUser(accountId, {
        userid: created.id,
        table: "radcheck",
        attribute,
        operator,
        value,
      });
    }
  }

  before(async () => {
    authPort = await freeUdpPort();
    server = await startTestServer({
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_AUTH_PORT: String(authPort), RADIUS_ACCT_PORT: "0" },
    });
    const account = await server.account("default");
    accountId = account.id;
    await server.core.networks.create(accountId, { name: "PAP", nas_ip: "127.0.0.1", secret: SECRET });
  });
  after(() => server?.stop());

  test("invalid UTF-8 does not pass for the U+FFFD it would decode to", async () => {
    await user("fffd", "ab\uFFFDcd");
    assert.equal(await papOctets("fffd", Buffer.from([0x61, 0x62, 0xff, 0x63, 0x64])), "Access-Reject");
    assert.equal(await papOctets("fffd", Buffer.from([0x61, 0x62, 0xc3, 0x63, 0x64])), "Access-Reject");
    assert.equal(
      await papOctets("fffd", Buffer.from([0x61, 0x62, 0xed, 0xa0, 0x80, 0x63, 0x64])),
      "Access-Reject",
    );
    // The stored password's own octets (EF BF BD) do log in.
    assert.equal(await papOctets("fffd", utf8("ab\uFFFDcd")), "Access-Accept");
  });

  test("multi-byte UTF-8 passwords log in octet for octet; another normalization does not", async () => {
    const password = "pässwörd€ 漢字 🔑";
    await user("multibyte", password);
    assert.equal(await papOctets("multibyte", utf8(password)), "Access-Accept");
    // The same text in NFD (a + combining diaeresis): other octets, a different password.
    assert.equal(await papOctets("multibyte", utf8(password.normalize("NFD"))), "Access-Reject");
    assert.equal(await papOctets("multibyte", utf8(password).subarray(0, -1)), "Access-Reject");
    // accessRequestPap (text) encodes the same octets.
    const sent = await sendRadius({
      ...accessRequestPap("multibyte", password, STATION),
      host: "127.0.0.1",
      port: authPort,
      secret: SECRET,
      timeoutMs: 2000,
      retries: 0,
    });
    assert.equal(sent.type, "Access-Accept");
  });

  test("passwords of 16, 17 and 128 octets: exactly right logs in, one octet off or short does not", async () => {
    for (const length of [1, 15, 16, 17, 31, 32, 33, 127, 128]) {
      const password = ascii(length, String(length));
      const name = `len${length}`;
      await user(name, password);
      const octets = utf8(password);
      assert.equal(await papOctets(name, octets), "Access-Accept", `${length} octets`);
      const flipped = Buffer.from(octets);
      flipped[length - 1]! ^= 0x01;
      assert.equal(await papOctets(name, flipped), "Access-Reject", `${length} octets, last one off`);
      if (length > 1) {
        assert.equal(await papOctets(name, octets.subarray(0, length - 1)), "Access-Reject", `${length} - 1`);
      }
      if (length < 128) {
        const longer = Buffer.concat([octets, Buffer.from("x")]);
        assert.equal(await papOctets(name, longer), "Access-Reject", `${length} + 1`);
      }
    }
    // 128 octets of multi-byte text: the longest a User-Password carries.
    const wide = "é".repeat(64);
    await user("wide", wide);
    assert.equal(utf8(wide).length, 128);
    assert.equal(await papOctets("wide", utf8(wide)), "Access-Accept");
    assert.equal(await papOctets("wide", utf8(`${"é".repeat(63)}e`)), "Access-Reject");
  });

  test("a voucher's code as password ignores the case of ASCII letters only", async () => {
    await server.core.vouchers.create(accountId, { code: "PASSKEY", validity: 3600 });
    assert.equal(await papOctets("PASSKEY", utf8("passkey")), "Access-Accept");
    // "ſ" (U+017F) and "ı" (U+0131) upper-case to S and I in Unicode: they are not the code's letters.
    assert.equal(await papOctets("PASSKEY", utf8("paſskey")), "Access-Reject");
    await server.core.vouchers.create(accountId, { code: "KIWIS", validity: 3600 });
    assert.equal(await papOctets("KIWIS", utf8("kıwıs")), "Access-Reject");
    assert.equal(
      await papOctets("KIWIS", Buffer.from([0x6b, 0x69, 0x77, 0x69, 0x73, 0xff])),
      "Access-Reject",
    );
    assert.equal(await papOctets("KIWIS", utf8("KiWiS")), "Access-Accept");
  });

  test("a User-Password check item compares octets as well", async () => {
    // A radcheck User-Password == item (FreeRADIUS compares it with the request) and Auth-Type Accept.
    await user("checked", "the cleartext pw", [
      ["User-Password", "==", "x\uFFFDy"],
      ["Auth-Type", ":=", "Accept"],
    ]);
    assert.equal(await papOctets("checked", Buffer.from([0x78, 0xff, 0x79])), "Access-Reject");
    assert.equal(await papOctets("checked", utf8("x\uFFFDy")), "Access-Accept");
  });

  test("password hashes (Crypt-, MD5-Password) are checked against the octets sent, as rlm_pap does", async () => {
    await user("crypt-only", undefined, [["Crypt-Password", ":=", "$1$salt$qJH7.N4xYta3aEG/dfqo/0"]]);
    await user("md5-only", undefined, [["MD5-Password", ":=", "5f4dcc3b5aa765d61d8327deb882cf99"]]);
    for (const name of ["crypt-only", "md5-only"]) {
      assert.equal(await papOctets(name, utf8("password")), "Access-Accept", name);
      for (const password of [
        "Password",
        "",
        "$1$salt$qJH7.N4xYta3aEG/dfqo/0",
        "5f4dcc3b5aa765d61d8327deb882cf99",
      ]) {
        assert.equal(await papOctets(name, utf8(password)), "Access-Reject", `${name} ${password}`);
      }
    }
  });

  test("an NT-Password is compared with the NT hash of the octets sent, as rlm_pap does", async () => {
    // 8846f7ea... is the NT hash of "password".
    await user("nt-only", undefined, [["NT-Password", ":=", "8846f7eaee8fb117ad06bdd830b7586c"]]);
    assert.equal(await papOctets("nt-only", utf8("password")), "Access-Accept");
    for (const password of ["Password", "", "8846f7eaee8fb117ad06bdd830b7586c"]) {
      assert.equal(await papOctets("nt-only", utf8(password)), "Access-Reject", password);
    }
    // U+1F511 as CESU-8 (its surrogates as two three-byte sequences) is read as the surrogate pair
    // Windows hashes; in UTF-8 (four bytes) it is not: rlm_pap's conversion, not a UTF-8 decoder.
    await user("nt-astral", undefined, [["NT-Password", ":=", `0x${ntPasswordHash("🔑").toString("hex")}`]]);
    assert.equal(
      await papOctets("nt-astral", Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb4, 0x91])),
      "Access-Accept",
    );
    assert.equal(await papOctets("nt-astral", utf8("🔑")), "Access-Reject");
  });
});

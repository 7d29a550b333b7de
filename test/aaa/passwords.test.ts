// rlm_pap's readings of stored password items, piece by piece: FreeRADIUS's base64 and hex
// decoders, normify, Password-With-Header, the list its authorize step leaves, PBKDF2's formats,
// and the login decision's reasons for items it cannot use (recorded, never accepted). The whole
// against the real FreeRADIUS: test/radius/parity.test.ts.
import assert from "node:assert/strict";
import { createHash, pbkdf2Sync } from "node:crypto";
import { describe, test } from "node:test";
import type { Authorization } from "../../src/core/aaa/authorize.ts";
import { decideLogin, type SessionCounters } from "../../src/core/aaa/decide.ts";
import type { Pair } from "../../src/core/aaa/pairs.ts";
import { frBase64Decode, frHex2bin, sqlOctets } from "../../src/core/aaa/passwords/encoding.ts";
import { knownGoodPasswords, normify, withHeader } from "../../src/core/aaa/passwords/items.ts";
import { papFailure } from "../../src/core/aaa/passwords/pap.ts";
import { MAX_PBKDF2_ITERATIONS, parsePbkdf2 } from "../../src/core/aaa/passwords/pbkdf2.ts";
import { passwordHashItem, passwordValueProblem } from "../../src/core/aaa/passwords/validate.ts";

const b = (text: string) => Buffer.from(text, "latin1");
const item = (attribute: string, value: string): Pair => ({ attribute, op: ":=", value });

describe("FreeRADIUS's decoders", () => {
  test("fr_base64_decode: standard alphabet, last group of 2 or 3, any '=' after, room limits", () => {
    assert.deepEqual(frBase64Decode(b("aGVsbG8="), 256), b("hello"));
    assert.deepEqual(frBase64Decode(b("aGVsbG8"), 256), b("hello"));
    assert.deepEqual(frBase64Decode(b("aGVsbG8===="), 256), b("hello"));
    assert.equal(frBase64Decode(b("aGVsbG8=x"), 256), undefined, "no data after padding");
    assert.equal(frBase64Decode(b("aGVsb"), 256), undefined, "a last group of one character");
    assert.equal(frBase64Decode(b("aGV.bG8"), 256), undefined, "passlib's '.' is not base64 there");
    // A full group is written only with more than 3 octets of room left.
    assert.deepEqual(frBase64Decode(b("AAAnEA=="), 4), Buffer.from([0, 0, 0x27, 0x10]));
    assert.equal(frBase64Decode(b("AAAAAAAA"), 6), undefined);
    assert.equal(frBase64Decode(b("AAAAAAAA"), 7)?.length, 6);
  });

  test("fr_hex2bin stops at the first pair that is no hex, and reads a NUL as the digit 16", () => {
    assert.deepEqual(frHex2bin(b("0aFFzz"), 10), Buffer.from([0x0a, 0xff]));
    assert.deepEqual(frHex2bin(Buffer.from([0x31, 0x00]), 10), Buffer.from([0x20]));
    assert.equal(frHex2bin(b("00112233"), 2).length, 2);
  });

  test("rlm_sql's octets: 0x hex, else the text's own octets; 0x that is not hex is unreadable", () => {
    assert.deepEqual(sqlOctets("0X0aff"), Buffer.from([0x0a, 0xff]));
    assert.deepEqual(sqlOctets("plain"), b("plain"));
    assert.equal(sqlOctets("0x0"), undefined);
    assert.equal(sqlOctets("0xzz"), undefined);
  });

  test("normify: hex from twice the length, base64 from 4/3 of it, else unchanged", () => {
    const digest = createHash("md5").update("x").digest();
    assert.deepEqual(normify(b(digest.toString("hex")), 16), digest);
    assert.deepEqual(normify(b(digest.toString("base64")), 16), digest);
    assert.deepEqual(normify(b(digest.toString("base64").replace(/=+$/, "")), 16), digest);
    // 30 hex digits are no hex of 16 octets, but they are base64 (of 22 octets): what FreeRADIUS does.
    assert.equal(normify(b(digest.toString("hex").slice(2)), 16).length, 22);
    assert.deepEqual(normify(b("short"), 16), b("short"));
    assert.deepEqual(normify(digest, 16), digest);
  });
});

describe("Password-With-Header and the list rlm_pap's authorize step leaves", () => {
  test("headers ignore case; unknown or missing ones make a cleartext password of the whole value", () => {
    assert.deepEqual(withHeader(b("{SsHa}abc")), {
      item: "SSHA-Password",
      octets: b("abc"),
      fromHeader: true,
    });
    assert.deepEqual(withHeader(b("{X- orclntv}abc"))?.item, "NT-Password");
    assert.deepEqual(withHeader(b("{foo}bar")), {
      item: "Cleartext-Password",
      octets: b("{foo}bar"),
      fromHeader: true,
    });
    assert.deepEqual(withHeader(b("no}brace")), {
      item: "Cleartext-Password",
      octets: b("no}brace"),
      fromHeader: true,
    });
    assert.deepEqual(withHeader(b("plain")), {
      item: "Cleartext-Password",
      octets: b("plain"),
      fromHeader: true,
    });
    assert.deepEqual(withHeader(b(Buffer.from("{md5}x").toString("base64")))?.item, "MD5-Password");
    assert.equal(
      withHeader(b(`{${"a".repeat(300)}}x`)),
      undefined,
      "a header of 256 octets or more is dropped",
    );
  });

  test("a header goes to the end of the list; beside a Cleartext-Password it is ignored", () => {
    const { known, found } = knownGoodPasswords([
      item("Password-With-Header", "{clear}from header"),
      item("Reply-Message", "not a password"),
      item("SHA-Password", "0x00"),
    ]);
    assert.deepEqual(
      known.map((k) => k.item),
      ["SHA-Password", "Cleartext-Password"],
    );
    assert.ok(found);
    const ignored = knownGoodPasswords([
      item("Password-With-Header", "{md5}x"),
      item("Cleartext-Password", "c"),
    ]);
    assert.deepEqual(
      ignored.known.map((k) => k.item),
      ["Cleartext-Password"],
    );
    // A cleartext one header gives makes a later header ignored too.
    const chained = knownGoodPasswords([
      item("Password-With-Header", "{clear}a"),
      item("Password-With-Header", "{md5}x"),
    ]);
    assert.deepEqual(
      chained.known.map((k) => k.item),
      ["Cleartext-Password"],
    );
    assert.equal(
      knownGoodPasswords([item("PBKDF2-Password", "x")]).found,
      false,
      "3.2's authorize step skips it",
    );
    assert.equal(
      knownGoodPasswords([item("User-Password", "x")]).known.length,
      0,
      "control:User-Password is ignored",
    );
  });
});

describe("PBKDF2-Password formats", () => {
  const salt = Buffer.from("saltsalt");
  const hash = pbkdf2Sync("pw", salt, 1000, 32, "sha256");
  test("the three formats parse to the same parts; limits and bad parts are refused", () => {
    const forms = [
      `{X-PBKDF2}HMACSHA2+256:AAAD6A==:${salt.toString("base64")}:${hash.toString("base64")}`,
      `$PBKDF2$hmacsha2+256:1000:${salt.toString("base64")}$${hash.toString("base64")}`,
      `$pbkdf2-SHA256$1000$${salt.toString("base64")}$${hash.toString("base64").replace(/=+$/, "")}`,
    ];
    for (const form of forms) {
      const parsed = parsePbkdf2(b(form));
      assert.ok(!("kind" in parsed), `${form}: ${JSON.stringify(parsed)}`);
      assert.equal(parsed.iterations, 1000);
      assert.deepEqual(parsed.salt, salt);
      assert.deepEqual(parsed.hash, hash);
    }
    const refused = (value: string, kind: string) =>
      assert.equal((parsePbkdf2(b(value)) as { kind?: string }).kind, kind, value);
    refused(
      `$PBKDF2$HMACSHA2+256:${MAX_PBKDF2_ITERATIONS + 1}:c2FsdA==$${hash.toString("base64")}`,
      "unsupported",
    );
    refused(`$PBKDF2$HMACMD5:1000:c2FsdA==$${hash.toString("base64")}`, "unsupported");
    refused(`$PBKDF2$HMACSHA2+256:1000:c2FsdA==$${hash.subarray(1).toString("base64")}`, "malformed");
    refused("$PBKDF2$HMACSHA2+256:1000:$x", "malformed");
    refused("{X-PBKDF2 no brace", "malformed");
    refused("$PBKDF2$HMACSHA2+256:-1:c2FsdA==$x", "malformed");
    refused("$argon2id$v=19$m=65536", "malformed");
  });
});

describe("the login decision with items it cannot use", () => {
  const counters: SessionCounters = {
    openSessions: async () => 0,
    totalSessionTime: async () => 0,
    firstSessionStart: async () => null,
    sessionTimeSince: async () => 0,
    octetsSince: async () => 0,
  } as unknown as SessionCounters;
  const decide = (control: Pair[], password: string) =>
    decideLogin(
      { found: true, control, reply: [] } as Authorization,
      { password: Buffer.from(password) },
      counters,
      1_700_000_000,
    );

  test("wrong length, unknown header, truncated base64, unsupported crypt: rejected with the reason", async () => {
    const md5 = createHash("md5").update("pw").digest("hex");
    const cases: [Pair, string, RegExp][] = [
      [item("MD5-Password", md5.slice(0, 30)), "the stored MD5-Password is malformed", /wrong length/],
      [item("SSHA-Password", "c2hvcnQ"), "the stored SSHA-Password is malformed", /wrong length/],
      [
        item("SHA2-Password", createHash("sha1").update("pw").digest("hex")),
        "the stored SHA2-Password is malformed",
        /no SHA-2 digest length/,
      ],
      [
        item("Crypt-Password", "$y$j9T$s$h"),
        "the stored Crypt-Password uses a scheme Wisp does not check",
        /\$y\$/,
      ],
      [item("NT-Password", "0xzz"), "the NT-Password is not an NT hash", /octets/],
    ];
    for (const [stored, reason, detail] of cases) {
      const decision = await decide([stored], "pw");
      assert.equal(decision.accepted, false);
      if (decision.accepted) continue;
      assert.equal(decision.reason, reason, stored.value);
      assert.match(decision.detail ?? "", detail, stored.value);
    }
    // An unknown header is a cleartext password of the whole value, as in FreeRADIUS.
    assert.equal((await decide([item("Password-With-Header", "{foo}pw")], "pw")).accepted, false);
    assert.equal((await decide([item("Password-With-Header", "{foo}pw")], "{foo}pw")).accepted, true);
    assert.equal((await papFailure([], Buffer.from("x")))?.reason, "no password configured for the user");
    const empty = await papFailure(
      knownGoodPasswords([item("Cleartext-Password", "x")]).known,
      Buffer.alloc(0),
    );
    assert.equal(empty?.reason, "empty password");
  });

  test("the API's forms of a pre-hashed password and its refusals", () => {
    assert.deepEqual(passwordHashItem("$1$salt$qJH7.N4xYta3aEG/dfqo/0"), {
      attribute: "Password-With-Header",
      value: "{crypt}$1$salt$qJH7.N4xYta3aEG/dfqo/0",
    });
    const pbkdf2 = `$pbkdf2-sha256$1000$c2FsdA$${Buffer.alloc(32).toString("base64").replace(/=+$/, "")}`;
    assert.deepEqual(passwordHashItem(pbkdf2), {
      attribute: "Password-With-Header",
      value: `{x-pbkdf2}${pbkdf2}`,
    });
    assert.match(passwordHashItem("{ssha}AAAA") as string, /SSHA-Password/);
    assert.equal(passwordValueProblem("Cleartext-Password", "{anything}"), null);
    assert.match(passwordValueProblem("NT-Password", "0x123") ?? "", /hex digits/);
    assert.equal(passwordValueProblem("Reply-Message", "x"), null);
  });
});

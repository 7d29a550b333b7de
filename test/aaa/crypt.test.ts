// Crypt-Password against the system's crypt(3) (Debian's libxcrypt, what FreeRADIUS calls), through
// Perl's crypt(): the same passwords (any octets) and settings must give the same strings, and the
// check must accept exactly what crypt(3) writes.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import bcrypt from "bcryptjs";
import { isProblem } from "../../src/core/aaa/passwords/check.ts";
import { checkCrypt, cryptScheme, MAX_SHA_CRYPT_ROUNDS } from "../../src/core/aaa/passwords/crypt.ts";
import { md5Crypt, shaCrypt } from "../../src/core/aaa/passwords/crypt-hashes.ts";

/** crypt(3) of each [password, setting] by the system library; null where it fails ("*0"). */
function systemCrypt(cases: [Buffer, string][]): (string | null)[] {
  const input = cases.map(([password, setting]) => `${password.toString("hex")}\t${setting}\n`).join("");
  const script =
    'while (<STDIN>) { chomp; my ($p, $s) = split /\\t/, $_, 2; my $r = crypt(pack("H*", $p), $s); print((defined $r ? $r : "*0"), "\\n") }';
  const out = execFileSync("perl", ["-e", script], { input }).toString("latin1").split("\n");
  return cases.map((_, i) => (out[i]!.startsWith("*") ? null : out[i]!));
}

const SALT_CHARS = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const salt = (n: number) => [...randomBytes(n)].map((b) => SALT_CHARS[b % 64]).join("");

/** Passwords of every kind: empty, ASCII, UTF-8, invalid UTF-8, long, with high octets. */
function passwords(): Buffer[] {
  const list = ["", "a", "password", "pässwörd € 漢字", "x".repeat(100), "key 🔑 key"].map((p) =>
    Buffer.from(p),
  );
  list.push(Buffer.from([0xff, 0xfe, 0x41]), Buffer.from([0xa3, 0x62, 0x63]));
  for (let i = 0; i < 6; i++) list.push(Buffer.from(randomBytes(1 + ((i * 13) % 70)).map((b) => b || 1)));
  return list;
}

describe("crypt(3) schemes against the system's crypt", () => {
  test("MD5-crypt ($1$) and SHA-crypt ($5$, $6$, with and without rounds) give crypt(3)'s strings", async () => {
    const cases: [Buffer, string, string | Promise<string>][] = [];
    for (const password of passwords()) {
      const s8 = salt(8);
      cases.push([password, `$1$${s8}$`, md5Crypt(password, s8)]);
      const s3 = salt(3);
      cases.push([password, `$1$${s3}$`, md5Crypt(password, s3)]);
      const s16 = salt(16);
      cases.push([password, `$5$${s16}$`, shaCrypt("5", password, s16, undefined)]);
      cases.push([password, `$6$${s16}$`, shaCrypt("6", password, s16, undefined)]);
      cases.push([password, `$5$rounds=1000$${s3}$`, shaCrypt("5", password, s3, 1000)]);
      cases.push([password, `$6$rounds=1234$$`, shaCrypt("6", password, "", 1234)]);
    }
    const expected = systemCrypt(cases.map(([p, s]) => [p, s]));
    for (const [i, [password, setting, ours]] of cases.entries()) {
      assert.equal(await ours, expected[i], `${setting} of ${password.toString("hex")}`);
    }
  });

  test("the check accepts crypt(3)'s string for the right password only, every scheme", async () => {
    const right = Buffer.from("right horse");
    const settings = ["ab", "$1$saltsalt$", "$5$rounds=2000$salt$", "$6$s$", "$2a$04$", "$2b$05$", "$2y$04$"];
    const references = systemCrypt(
      settings.map((s): [Buffer, string] => [right, s.startsWith("$2") ? `${s}${bcryptSalt()}` : s]),
    );
    for (const [i, reference] of references.entries()) {
      assert.ok(reference, settings[i]);
      assert.equal(await checkCrypt(Buffer.from(reference), right), true, reference);
      assert.equal(await checkCrypt(Buffer.from(reference), Buffer.from("wrong horse")), false, reference);
    }
  });

  test("DES uses the first 8 octets, 7 bits each; a NUL ends the password (C strings)", async () => {
    const [reference] = systemCrypt([[Buffer.from("abcdefgh"), "xy"]]);
    assert.equal(await checkCrypt(Buffer.from(reference!), Buffer.from("abcdefghIGNORED")), true);
    assert.equal(
      await checkCrypt(Buffer.from(reference!), Buffer.from([0x61 | 0x80, ...Buffer.from("bcdefgh")])),
      true,
    );
    const [md5] = systemCrypt([[Buffer.from("ab"), "$1$s$"]]);
    assert.equal(await checkCrypt(Buffer.from(md5!), Buffer.from("ab\0cd")), true);
  });

  test("bcrypt with a password that is not UTF-8 is refused, not guessed", async () => {
    const [reference] = systemCrypt([[Buffer.from([0xa3, 0x62]), `$2b$04$${bcryptSalt()}`]]);
    const verdict = await checkCrypt(Buffer.from(reference!), Buffer.from([0xa3, 0x62]));
    assert.ok(isProblem(verdict) && verdict.kind === "uncheckable");
  });

  test("other schemes and non-canonical strings are never accepted, with a reason", async () => {
    const password = Buffer.from("pw");
    const others = systemCrypt([
      [password, "$y$j9T$saltsaltsalt$"],
      [password, "$7$CU..../....saltsalt$"],
      [password, "$2x$05$abcdefghijklmnopqrstuu"],
      [password, "_J9..salt"],
      [password, "$sha1$40000$saltsalt$"],
    ]);
    for (const reference of others) {
      assert.ok(reference, "the system knows the scheme");
      const verdict = await checkCrypt(Buffer.from(reference), password);
      assert.ok(
        isProblem(verdict) && verdict.kind === "unsupported",
        `${reference}: ${JSON.stringify(verdict)}`,
      );
    }
    // bigcrypt: a DES setting longer than 13 characters and a password longer than 8 octets.
    const [big] = systemCrypt([[Buffer.from("longer than eight"), "abXXXXXXXXXXXXXX"]]);
    assert.equal(big!.length, 35);
    const bigVerdict = await checkCrypt(Buffer.from(big!), Buffer.from("longer than eight"));
    assert.ok(isProblem(bigVerdict) && bigVerdict.kind === "unsupported");
    for (const bad of [
      "",
      "a",
      "a!",
      "$1$abc",
      "$1$toolongsalt$aaaaaaaaaaaaaaaaaaaaaa",
      "$5$rounds=999$s$x",
      "$2b$4$x",
    ]) {
      const verdict = await checkCrypt(Buffer.from(bad), password);
      assert.ok(isProblem(verdict) && verdict.kind === "malformed", `${bad}: ${JSON.stringify(verdict)}`);
    }
    const slow = `$6$rounds=${MAX_SHA_CRYPT_ROUNDS + 1}$salt$${"a".repeat(86)}`;
    assert.equal((cryptScheme(slow) as { kind: string }).kind, "unsupported");
  });
});

function bcryptSalt(): string {
  return bcrypt.genSaltSync(4).slice(7);
}

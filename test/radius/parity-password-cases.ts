// Login cases for every password item FreeRADIUS 3.2's rlm_pap checks, in every stored form it
// reads (hex, base64, 0x, {scheme} headers), with rlm_pap's rule for which item decides. Run by
// parity.test.ts against Wisp and the real FreeRADIUS on one database: identical verdicts and
// replies. Hashes are made here with node:crypto; the crypt(3) strings were made by the system's
// crypt(3) (libxcrypt, what FreeRADIUS calls) and are checked against it in test/aaa/crypt.test.ts.
import { createHash, pbkdf2Sync } from "node:crypto";
import { ntPasswordHash } from "../../src/core/aaa/nt-hash.ts";
import { lmPasswordHash } from "../../src/core/aaa/passwords/lm-hash.ts";
import type { CaseUser, ParityCase } from "./parity-cases.ts";

const NAS: [string, string][] = [
  ["NAS-IP-Address", "127.0.0.1"],
  ["NAS-Identifier", "lobby-ap"],
  ["Calling-Station-Id", "11-22-33-44-55-66"],
];
const pap = (user: string, password: string): [string, string][] => [
  ["User-Name", user],
  ["User-Password", password],
  ...NAS,
];

const hash = (algorithm: string, ...parts: (string | Buffer)[]) => {
  const h = createHash(algorithm);
  for (const part of parts) h.update(part);
  return h.digest();
};
const hex = (b: Buffer) => b.toString("hex");
const b64 = (b: Buffer) => b.toString("base64");
const salted = (algorithm: string, password: string, salt: Buffer) =>
  Buffer.concat([hash(algorithm, password, salt), salt]);

const SALT = Buffer.from("5a1t-of-wisp");
const PW = "right pässword";

/** crypt(3) strings of "crypt pw ü" (and "desPassword" for DES), made by the system's libxcrypt. */
const CRYPT = {
  md5: "$1$Wisp1234$5.aMDw3CRhnEE4t27i2Yl/",
  sha256: "$5$rounds=1000$WispSalt$Ftg.D2PvhB5g29tNyNL8BDn5B4hNIcEwajHwQt7ehI5",
  sha512:
    "$6$WispSaltWispSalt$qQqzssuMleRH9VdQGR9zNZOy4G7siB7qmuJphJWek41azw2Z1aJIw1zpKsY90Xj.pyAL0nqFxPt7qjbvQytXT0",
  bcrypt2a: "$2a$04$abcdefghijklmnopqrstuuDxVFgZQb/P.96g5q5rbFO6crpR0A58G",
  bcrypt2b: "$2b$05$WispWispWispWispWispWuKOLssg0dsKLure6h29tdbPxKM9eSS/m",
  bcrypt2y: "$2y$04$0123456789ABCDEFGHIJKuDfoBPbsul8Lyq0UAjGnzxD115IfLzf2",
  des: "dSS0V6Cv/G6Rw",
  yescrypt: "$y$j9T$WispSaltWispSalt$k56dIbKoRbCk56BBlawADFBah1wjxhhx3X1/u7KdxQB",
  bcrypt2x: "$2x$04$abcdefghijklmnopqrstuuExt2j8wRy0cc2rPS6wt9n8GtsyuASyq",
};
const CRYPT_PW = "crypt pw ü";

/** PBKDF2 strings in rlm_pap's three formats, of PW. */
function pbkdf2(format: "ldap" | "crypt" | "passlib", digest: string, iterations: number, name: string) {
  const size = createHash(digest).digest().length;
  const derived = pbkdf2Sync(PW, SALT, iterations, size, digest);
  const iterations64 = Buffer.alloc(4);
  iterations64.writeUInt32BE(iterations);
  if (format === "ldap") return `{X-PBKDF2}${name}:${b64(iterations64)}:${b64(SALT)}:${b64(derived)}`;
  if (format === "crypt") return `$PBKDF2$${name}:${iterations}:${b64(SALT)}$${b64(derived)}`;
  return `$pbkdf2-${name}$${iterations}$${b64(SALT).replace(/=+$/, "")}$${b64(derived).replace(/=+$/, "")}`;
}

/** NS-MTA-MD5: 32 hex digits of MD5(salt, "Y", password, 0xF7, salt), then the 32-character salt. */
function nsMtaMd5(password: string, salt: string): string {
  const s = Buffer.from(salt);
  return hex(hash("md5", s, Buffer.of(89), password, Buffer.of(247), s)) + salt;
}

const AUTH_PAP: [string, string] = ["Auth-Type", "PAP"];

let serial = 0;

/**
 * One user holding `check` items, then one PAP request per [password, verdict]. `imported`: the
 * rows go straight into radcheck, as an imported database holds them (the API refuses them).
 */
function cases(
  title: string,
  check: [string, string][],
  tries: [string, ParityCase["expect"]][],
  options: { imported?: boolean; wispOnly?: string } = {},
): ParityCase[] {
  const username = `pw-${++serial}`;
  const user: CaseUser = {
    username,
    check: check.map(([attribute, value]) => [attribute, ":=", value]),
    reply: [["Reply-Message", ":=", `hello ${username}`]],
    ...(options.imported ? { imported: true } : {}),
  };
  return tries.map(([password, expect], i) => ({
    name: `${title}: ${JSON.stringify(password)} ${expect === "Access-Accept" ? "accepted" : "rejected"}`,
    users: i === 0 ? [user] : [],
    request: pap(username, password),
    expect,
    ...(options.wispOnly ? { wispOnly: options.wispOnly } : {}),
  }));
}

const rightWrong = (password = PW): [string, ParityCase["expect"]][] => [
  [password, "Access-Accept"],
  [`${password}!`, "Access-Reject"],
];

export const PASSWORD_PARITY_CASES: ParityCase[] = [
  // Crypt-Password: crypt(3) of the password with the stored string as setting.
  ...cases("Crypt-Password MD5-crypt", [["Crypt-Password", CRYPT.md5]], rightWrong(CRYPT_PW)),
  ...cases(
    "Crypt-Password SHA-256-crypt with rounds",
    [["Crypt-Password", CRYPT.sha256]],
    rightWrong(CRYPT_PW),
  ),
  ...cases("Crypt-Password SHA-512-crypt", [["Crypt-Password", CRYPT.sha512]], rightWrong(CRYPT_PW)),
  ...cases("Crypt-Password bcrypt $2a$", [["Crypt-Password", CRYPT.bcrypt2a]], rightWrong(CRYPT_PW)),
  ...cases("Crypt-Password bcrypt $2b$", [["Crypt-Password", CRYPT.bcrypt2b]], rightWrong(CRYPT_PW)),
  ...cases("Crypt-Password bcrypt $2y$", [["Crypt-Password", CRYPT.bcrypt2y]], rightWrong(CRYPT_PW)),
  ...cases(
    "Crypt-Password DES (8 characters count)",
    [["Crypt-Password", CRYPT.des]],
    [
      ["desPassword", "Access-Accept"],
      ["desPassw", "Access-Accept"],
      ["desPasswOTHER", "Access-Accept"],
      ["desPass", "Access-Reject"],
    ],
  ),
  ...cases(
    "Crypt-Password that is no crypt string",
    [["Crypt-Password", "not-a-hash"]],
    [["not-a-hash", "Access-Reject"]],
    {
      imported: true,
    },
  ),
  ...cases(
    "Crypt-Password yescrypt",
    [["Crypt-Password", CRYPT.yescrypt]],
    [[`${CRYPT_PW}!`, "Access-Reject"]],
    {
      imported: true,
    },
  ),
  ...cases(
    "Crypt-Password yescrypt, right password",
    [["Crypt-Password", CRYPT.yescrypt]],
    [[CRYPT_PW, "Access-Reject"]],
    {
      imported: true,
      wispOnly:
        "FreeRADIUS accepts it through Debian's libxcrypt; Wisp refuses schemes it does not implement",
    },
  ),
  ...cases(
    "Crypt-Password bcrypt $2x$",
    [["Crypt-Password", CRYPT.bcrypt2x]],
    [[CRYPT_PW, "Access-Reject"]],
    {
      imported: true,
      wispOnly: "libxcrypt's $2x$ (the old sign-extension bug) is not implemented by bcryptjs; refused",
    },
  ),

  // MD5-Password and SMD5-Password: hex, base64 or 0x; normalised to 16 octets (+ salt).
  ...cases("MD5-Password in hex", [["MD5-Password", hex(hash("md5", PW))]], rightWrong()),
  ...cases("MD5-Password in base64", [["MD5-Password", b64(hash("md5", PW))]], rightWrong()),
  ...cases("MD5-Password 0x", [["MD5-Password", `0x${hex(hash("md5", PW))}`]], rightWrong()),
  ...cases(
    "MD5-Password of 15 octets",
    [["MD5-Password", hex(hash("md5", PW)).slice(0, 30)]],
    [[PW, "Access-Reject"]],
    {
      imported: true,
    },
  ),
  ...cases("SMD5-Password in base64", [["SMD5-Password", b64(salted("md5", PW, SALT))]], rightWrong()),
  ...cases("SMD5-Password in hex", [["SMD5-Password", hex(salted("md5", PW, SALT))]], rightWrong()),
  ...cases("SMD5-Password without salt", [["SMD5-Password", hex(hash("md5", PW))]], [[PW, "Access-Reject"]], {
    imported: true,
  }),

  // SHA-1: SHA-Password (alias SHA1-Password) and salted SSHA-Password (alias SSHA1-Password).
  ...cases("SHA-Password in hex", [["SHA-Password", hex(hash("sha1", PW))]], rightWrong()),
  ...cases("SHA1-Password in base64", [["SHA1-Password", b64(hash("sha1", PW))]], rightWrong()),
  ...cases("SSHA-Password in base64", [["SSHA-Password", b64(salted("sha1", PW, SALT))]], rightWrong()),
  ...cases("SSHA1-Password in hex", [["SSHA1-Password", hex(salted("sha1", PW, SALT))]], rightWrong()),
  ...cases(
    "SSHA-Password in truncated base64",
    [["SSHA-Password", b64(salted("sha1", PW, SALT)).slice(0, 21)]],
    [[PW, "Access-Reject"]],
    { imported: true },
  ),

  // SHA-2: SHA2-Password (the length says which) and SSHA2-224/256/384/512-Password.
  ...cases("SHA2-Password SHA-224", [["SHA2-Password", hex(hash("sha224", PW))]], rightWrong()),
  ...cases("SHA2-Password SHA-256", [["SHA2-Password", hex(hash("sha256", PW))]], rightWrong()),
  ...cases("SHA2-Password SHA-384 in base64", [["SHA2-Password", b64(hash("sha384", PW))]], rightWrong()),
  ...cases("SHA2-Password SHA-512", [["SHA2-Password", hex(hash("sha512", PW))]], rightWrong()),
  ...cases(
    "SHA2-Password of SHA-1's length",
    [["SHA2-Password", hex(hash("sha1", PW))]],
    [[PW, "Access-Reject"]],
    {
      imported: true,
    },
  ),
  ...cases("SSHA2-224-Password", [["SSHA2-224-Password", b64(salted("sha224", PW, SALT))]], rightWrong()),
  ...cases("SSHA2-256-Password", [["SSHA2-256-Password", b64(salted("sha256", PW, SALT))]], rightWrong()),
  ...cases(
    "SSHA2-384-Password in hex",
    [["SSHA2-384-Password", hex(salted("sha384", PW, SALT))]],
    rightWrong(),
  ),
  ...cases("SSHA2-512-Password", [["SSHA2-512-Password", b64(salted("sha512", PW, SALT))]], rightWrong()),
  ...cases(
    "SSHA3-256-Password (rlm_pap 3.2 checks none)",
    [["SSHA3-256-Password", b64(salted("sha3-256", PW, SALT))]],
    [[PW, "Access-Reject"]],
  ),

  // PBKDF2-Password in the LDAP, Crypt::PBKDF2 and passlib formats, SHA-1, SHA-2 and SHA-3. rlm_pap
  // 3.2's authorize step does not count it as a password: alone, it needs Auth-Type := PAP.
  ...cases(
    "PBKDF2-Password alone (rlm_pap sets no Auth-Type for it)",
    [["PBKDF2-Password", pbkdf2("crypt", "sha1", 1000, "HMACSHA1")]],
    [[PW, "Access-Reject"]],
  ),
  ...cases(
    "PBKDF2-Password before a Cleartext-Password decides",
    [
      ["PBKDF2-Password", pbkdf2("crypt", "sha1", 1000, "HMACSHA1")],
      ["Cleartext-Password", "clear pw"],
    ],
    [
      [PW, "Access-Accept"],
      ["clear pw", "Access-Reject"],
    ],
  ),
  ...cases(
    "PBKDF2-Password LDAP SHA-256",
    [["PBKDF2-Password", pbkdf2("ldap", "sha256", 1000, "HMACSHA2+256")], AUTH_PAP],
    rightWrong(),
  ),
  ...cases(
    "PBKDF2-Password LDAP SHA3-256",
    [["PBKDF2-Password", pbkdf2("ldap", "sha3-256", 500, "HMACSHA3+256")], AUTH_PAP],
    rightWrong(),
  ),
  ...cases(
    "PBKDF2-Password Crypt::PBKDF2 SHA-1",
    [["PBKDF2-Password", pbkdf2("crypt", "sha1", 1200, "HMACSHA1")], AUTH_PAP],
    rightWrong(),
  ),
  ...cases(
    "PBKDF2-Password Crypt::PBKDF2 SHA-512",
    [["PBKDF2-Password", pbkdf2("crypt", "sha512", 1000, "HMACSHA2+512")], AUTH_PAP],
    rightWrong(),
  ),
  ...cases(
    "PBKDF2-Password passlib sha256",
    [["PBKDF2-Password", pbkdf2("passlib", "sha256", 1000, "sha256")], AUTH_PAP],
    rightWrong(),
  ),
  ...cases(
    "PBKDF2-Password iterations 0 (read as 1)",
    [["PBKDF2-Password", pbkdf2("crypt", "sha1", 1, "HMACSHA1").replace(":1:", ":0:")], AUTH_PAP],
    rightWrong(),
  ),
  ...cases(
    "PBKDF2-Password hash of the wrong length",
    [["PBKDF2-Password", pbkdf2("crypt", "sha1", 10, "HMACSHA1").slice(0, -8)], AUTH_PAP],
    [[PW, "Access-Reject"]],
    { imported: true },
  ),

  // LM-Password (through rlm_mschap's LM-Hash) and NS-MTA-MD5-Password.
  ...cases(
    "LM-Password",
    [["LM-Password", hex(lmPasswordHash(Buffer.from("Lm Secret7")))]],
    [
      ["Lm Secret7", "Access-Accept"],
      ["LM SECRET7", "Access-Accept"],
      ["  lm secret7", "Access-Accept"],
      ["Lm Secret8", "Access-Reject"],
    ],
  ),
  ...cases(
    "NS-MTA-MD5-Password",
    [["NS-MTA-MD5-Password", nsMtaMd5(PW, "saltsaltsaltsaltsaltsaltsaltsalt")]],
    rightWrong(),
  ),
  ...cases(
    "NS-MTA-MD5-Password whose salt starts with hex digits",
    [["NS-MTA-MD5-Password", nsMtaMd5(PW, "abcdefghijklmnopqrstuvwxyzABCDEF")]],
    [[PW, "Access-Reject"]],
    { imported: true },
  ),

  // Password-With-Header: the {scheme} names the item; it goes to the end of the list.
  ...cases(
    "Password-With-Header {SSHA}",
    [["Password-With-Header", `{SSHA}${b64(salted("sha1", PW, SALT))}`]],
    rightWrong(),
  ),
  ...cases(
    "Password-With-Header {crypt}",
    [["Password-With-Header", `{crypt}${CRYPT.sha512}`]],
    rightWrong(CRYPT_PW),
  ),
  ...cases(
    "Password-With-Header {clear}",
    [["Password-With-Header", "{clear}plain pw"]],
    rightWrong("plain pw"),
  ),
  ...cases(
    "Password-With-Header {MD5} in capitals",
    [["Password-With-Header", `{MD5}${b64(hash("md5", PW))}`]],
    rightWrong(),
  ),
  ...cases(
    "Password-With-Header {nthash}",
    [["Password-With-Header", `{nthash}${hex(ntPasswordHash(PW))}`]],
    rightWrong(),
  ),
  ...cases(
    "Password-With-Header {sha256}",
    [["Password-With-Header", `{sha256}${b64(hash("sha256", PW))}`]],
    rightWrong(),
  ),
  ...cases(
    "Password-With-Header {ssha512}",
    [["Password-With-Header", `{ssha512}${b64(salted("sha512", PW, SALT))}`]],
    rightWrong(),
  ),
  ...cases(
    "Password-With-Header {X-PBKDF2}",
    [["Password-With-Header", pbkdf2("ldap", "sha1", 1000, "HMACSHA1")]],
    rightWrong(),
  ),
  ...cases(
    "Password-With-Header all in base64",
    [["Password-With-Header", b64(Buffer.from(`{SHA}${b64(hash("sha1", PW))}`))]],
    rightWrong(),
  ),
  ...cases(
    "Password-With-Header with an unknown header is the cleartext of all of it",
    [["Password-With-Header", "{FOO}bar"]],
    [
      ["{FOO}bar", "Access-Accept"],
      ["bar", "Access-Reject"],
    ],
    { imported: true },
  ),
  ...cases(
    "Password-With-Header without a header is a cleartext password",
    [["Password-With-Header", "just-text"]],
    rightWrong("just-text"),
    {
      imported: true,
    },
  ),
  ...cases(
    "Password-With-Header beside a Cleartext-Password is ignored",
    [
      ["Cleartext-Password", "clear one"],
      ["Password-With-Header", "{clear}header one"],
    ],
    [
      ["clear one", "Access-Accept"],
      ["header one", "Access-Reject"],
    ],
  ),
  ...cases(
    "Password-With-Header first still goes after the other items",
    [
      ["Password-With-Header", `{md5}${b64(hash("md5", "header pw"))}`],
      ["SHA-Password", hex(hash("sha1", PW))],
    ],
    [
      [PW, "Access-Accept"],
      ["header pw", "Access-Reject"],
    ],
  ),

  // Which item decides: the first password item in the list, whatever follows.
  ...cases(
    "first of SHA-Password and MD5-Password decides",
    [
      ["SHA-Password", hex(hash("sha1", "first pw"))],
      ["MD5-Password", hex(hash("md5", "second pw"))],
    ],
    [
      ["first pw", "Access-Accept"],
      ["second pw", "Access-Reject"],
    ],
  ),
  ...cases(
    "a malformed first item fails before a good Cleartext-Password",
    [
      ["MD5-Password", "abcd"],
      ["Cleartext-Password", "clear pw"],
    ],
    [["clear pw", "Access-Reject"]],
    { imported: true },
  ),
  ...cases(
    "an item rlm_pap does not check is passed over",
    [
      ["SSHA3-512-Password", b64(salted("sha3-512", "other", SALT))],
      ["Crypt-Password", CRYPT.md5],
    ],
    rightWrong(CRYPT_PW),
  ),
];

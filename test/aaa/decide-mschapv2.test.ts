// The login decision with MS-CHAPv2 credentials (rlm_mschap semantics): the NT hash comes from an
// NT-Password check item first, else from the Cleartext-Password; Auth-Type picks the method; the
// other rules (expiration, Simultaneous-Use) apply as for PAP and CHAP. And PAP against the same
// NT-Password items (rlm_pap semantics): the first Cleartext-Password or NT-Password decides.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import type { Authorization } from "../../src/core/aaa/authorize.ts";
import { type Credentials, decideLogin, type SessionCounters } from "../../src/core/aaa/decide.ts";
import { ntPasswordHash } from "../../src/core/aaa/nt-hash.ts";
import type { Pair } from "../../src/core/aaa/pairs.ts";
import { generateNtResponse } from "../../src/radius/mschap/mschapv2.ts";

const NOW = 1_800_000_000;
const counters = (open = 0): SessionCounters => ({
  openSessions: async () => open,
  totalSessionTime: async () => 0,
  firstSessionStart: async () => null,
  sessionTimeSince: async () => 0,
  octetsSince: async () => 0,
});
const item = (attribute: string, value: string, op = ":="): Pair => ({ attribute, op, value });
const user = (control: Pair[], reply: Pair[] = []): Authorization => ({ found: true, control, reply });

/** What the door builds: the peer's NT-Response for `password`, checked against a candidate hash. */
function mschapv2(username: string, password: string): Credentials & { tried: Buffer[] } {
  const authenticatorChallenge = randomBytes(16);
  const peerChallenge = randomBytes(16);
  const response = generateNtResponse(
    authenticatorChallenge,
    peerChallenge,
    username,
    ntPasswordHash(password),
  );
  const tried: Buffer[] = [];
  return {
    tried,
    mschapv2: (hash) => {
      tried.push(hash);
      return generateNtResponse(authenticatorChallenge, peerChallenge, username, hash).equals(response);
    },
  };
}

const verdict = async (authz: Authorization, credentials: Credentials, open = 0) => {
  const decision = await decideLogin(authz, credentials, counters(open), NOW);
  return decision.accepted ? "accept" : decision.reason;
};

describe("decideLogin with MS-CHAPv2", () => {
  test("the Cleartext-Password's NT hash is what the verifier gets", async () => {
    const credentials = mschapv2("alice", "alice-pw");
    assert.equal(await verdict(user([item("Cleartext-Password", "alice-pw")]), credentials), "accept");
    assert.deepEqual(credentials.tried, [ntPasswordHash("alice-pw")]);
    assert.equal(
      await verdict(user([item("Cleartext-Password", "other")]), mschapv2("alice", "alice-pw")),
      "wrong password",
    );
  });

  test("an NT-Password check item alone logs in, hex with or without 0x", async () => {
    const nt = ntPasswordHash("nt-pw").toString("hex");
    for (const value of [nt, `0x${nt}`, nt.toUpperCase()]) {
      assert.equal(
        await verdict(user([item("NT-Password", value)]), mschapv2("bob", "nt-pw")),
        "accept",
        value,
      );
      assert.equal(
        await verdict(user([item("NT-Password", value)]), mschapv2("bob", "nt-pX")),
        "wrong password",
      );
    }
  });

  test("NT-Password comes before Cleartext-Password, as in rlm_mschap", async () => {
    const control = [
      item("Cleartext-Password", "clear-pw"),
      item("NT-Password", ntPasswordHash("nt-pw").toString("hex")),
    ];
    assert.equal(await verdict(user(control), mschapv2("carol", "nt-pw")), "accept");
    assert.equal(await verdict(user(control), mschapv2("carol", "clear-pw")), "wrong password");
  });

  test("an NT-Password that is no hash is passed over for the Cleartext-Password (FreeRADIUS 3.2)", async () => {
    for (const value of ["nt-pw", "0x1234", ntPasswordHash("x").toString("hex").slice(1)]) {
      const control = [item("Cleartext-Password", "clear-pw"), item("NT-Password", value)];
      assert.equal(await verdict(user(control), mschapv2("dave", "clear-pw")), "accept", value);
      const alone = mschapv2("dave", "clear-pw");
      assert.equal(
        await verdict(user([item("NT-Password", value)]), alone),
        "the NT-Password is not an NT hash",
      );
      assert.equal(alone.tried.length, 0, "the verifier is never asked");
    }
  });

  test("an NT-Password of 16 other octets is the hash itself, as FreeRADIUS reads octets", async () => {
    const raw = "sixteen-octets!!";
    const credentials = mschapv2("frank", "whatever");
    await verdict(user([item("NT-Password", raw)]), credentials);
    assert.deepEqual(credentials.tried, [Buffer.from(raw)]);
  });

  test("no password at all, or an unknown user, is rejected without asking the verifier", async () => {
    const credentials = mschapv2("erin", "pw");
    assert.equal(
      await verdict(user([item("Crypt-Password", "$1$x$y")]), credentials),
      "no password configured for the user",
    );
    assert.equal(await verdict({ found: false, control: [], reply: [] }, credentials), "unknown user");
    assert.equal(credentials.tried.length, 0);
  });

  test("Auth-Type decides which method may authenticate", async () => {
    const control = (authType: string) => [item("Cleartext-Password", "pw"), item("Auth-Type", authType)];
    assert.equal(await verdict(user(control("MS-CHAP")), mschapv2("f", "pw")), "accept");
    assert.equal(await verdict(user(control("PAP")), mschapv2("f", "pw")), "no credentials in the request");
    assert.equal(await verdict(user(control("CHAP")), mschapv2("f", "pw")), "no credentials in the request");
    assert.equal(await verdict(user(control("Reject")), mschapv2("f", "pw")), "rejected by Auth-Type");
    const accept = mschapv2("f", "wrong");
    assert.equal(await verdict(user(control("Accept")), accept), "accept");
    assert.equal(accept.tried.length, 0, "Auth-Type Accept checks no password");
    // A PAP request to a user whose Auth-Type is MS-CHAP is not authenticated by PAP.
    assert.equal(
      await verdict(user(control("MS-CHAP")), { password: Buffer.from("pw") }),
      "no credentials in the request",
    );
  });

  test("expiration and Simultaneous-Use apply as for PAP", async () => {
    const base = [item("Cleartext-Password", "pw")];
    assert.equal(
      await verdict(user([...base, item("Expiration", String(NOW - 1))]), mschapv2("g", "pw")),
      "account expired",
    );
    assert.equal(
      await verdict(user([...base, item("Simultaneous-Use", "1")]), mschapv2("g", "pw"), 1),
      "already logged in",
    );
    const decision = await decideLogin(
      user([...base, item("Expiration", String(NOW + 60))], [item("Reply-Message", "hi", "=")]),
      mschapv2("g", "pw"),
      counters(),
      NOW,
    );
    assert.ok(decision.accepted);
    assert.deepEqual(decision.reply, [item("Reply-Message", "hi", "="), item("Session-Timeout", "60", "=")]);
  });
});

describe("decideLogin with PAP against an NT-Password (rlm_pap)", () => {
  const pap = (password: string | Buffer): Credentials => ({
    password: typeof password === "string" ? Buffer.from(password, "utf8") : password,
  });
  const nt = (password: string, form = (hash: Buffer) => hash.toString("hex")) =>
    item("NT-Password", form(ntPasswordHash(password)));

  test("the NT hash of the password sent is compared, in every form of the item", async () => {
    for (const form of [
      (hash: Buffer) => hash.toString("hex"),
      (hash: Buffer) => `0x${hash.toString("hex").toUpperCase()}`,
      (hash: Buffer) => hash.toString("base64"),
    ]) {
      const control = [nt("nt-pw", form)];
      assert.equal(await verdict(user(control), pap("nt-pw")), "accept", control[0]!.value);
      assert.equal(await verdict(user(control), pap("nt-pW")), "wrong password", control[0]!.value);
    }
    assert.equal(await verdict(user([nt("pässwörd €")]), pap("pässwörd €")), "accept");
  });

  test("the first of Cleartext-Password and NT-Password decides; the other is not tried", async () => {
    const clear = item("Cleartext-Password", "clear-pw");
    assert.equal(await verdict(user([clear, nt("nt-pw")]), pap("clear-pw")), "accept");
    assert.equal(await verdict(user([clear, nt("nt-pw")]), pap("nt-pw")), "wrong password");
    assert.equal(await verdict(user([nt("nt-pw"), clear]), pap("nt-pw")), "accept");
    assert.equal(await verdict(user([nt("nt-pw"), clear]), pap("clear-pw")), "wrong password");
    // Any password item rlm_pap checks takes part: the first of them decides.
    const crypt = item("Crypt-Password", "$1$salt$qJH7.N4xYta3aEG/dfqo/0"); // crypt(3) of "password"
    assert.equal(await verdict(user([crypt, nt("nt-pw"), clear]), pap("nt-pw")), "wrong password");
    assert.equal(await verdict(user([crypt, nt("nt-pw"), clear]), pap("password")), "accept");
    // Items rlm_pap does not check change nothing.
    const other = item("SSHA3-256-Password", "0x00");
    assert.equal(await verdict(user([other, nt("nt-pw")]), pap("nt-pw")), "accept");
    assert.equal(await verdict(user([other]), pap("nt-pw")), "no password configured for the user");
  });

  test("an NT-Password that is no hash fails, unlike MS-CHAPv2's passing over it", async () => {
    const clear = item("Cleartext-Password", "clear-pw");
    for (const value of ["clear-pw", "0x1234", `0x${ntPasswordHash("x").toString("hex")}00`]) {
      const text = item("NT-Password", value);
      assert.equal(await verdict(user([text]), pap(value)), "the NT-Password is not an NT hash", value);
      assert.equal(await verdict(user([text, clear]), pap("clear-pw")), "the NT-Password is not an NT hash");
      assert.equal(await verdict(user([clear, text]), pap("clear-pw")), "accept", value);
    }
  });

  test("octets rlm_pap cannot read as UTF-16 are refused", async () => {
    // A byte above 0x7f as the last octet: fr_utf8_to_ucs2 fails.
    assert.equal(
      await verdict(user([nt("pw")]), pap(Buffer.from([0x70, 0x77, 0xc3]))),
      "the password cannot be checked against the stored NT-Password",
    );
  });

  test("Auth-Type PAP checks the NT-Password; Auth-Type CHAP leaves a PAP request unchecked", async () => {
    assert.equal(await verdict(user([nt("nt-pw"), item("Auth-Type", "PAP")]), pap("nt-pw")), "accept");
    assert.equal(
      await verdict(user([nt("nt-pw"), item("Auth-Type", "CHAP")]), pap("nt-pw")),
      "no credentials in the request",
    );
  });
});

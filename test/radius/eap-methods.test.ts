// PEAP/EAP-MSCHAPv2, EAP-TTLS (PAP and EAP-MSCHAPv2) and EAP-TLS through eapol_test (wpa_supplicant's
// test supplicant) against the embedded RADIUS server: every success must come with `MPPE keys OK`
// (RFC 2548 keys from the right exporter label), every rule of the core decision must still apply
// (unknown, disabled, expired users), client certificates are checked (CA, revocation, identity),
// TLS 1.3 (RFC 9190 / RFC 9427), resumption, and a small fragment size. One radpostauth row per login.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { serialOf } from "../support/eap-certs.ts";
import { type EapTestServer, peapLogin, startEapServer } from "../support/eap-server.ts";
import { type EapolOptions, type EapolResult, eapolTest, eapolTestUnavailable } from "../support/eapol.ts";

const missing = eapolTestUnavailable();
if (missing) console.log(`# skipping EAP tests: ${missing}`);

/** Runs logins a few at a time (2 cores: eapol_test itself costs more CPU than the server). */
async function inParallel<T>(jobs: (() => Promise<T>)[], width = 6): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
      }
    }),
  );
  return results;
}

const TLS13 = { phase1: "tls_disable_tlsv1_3=0" };

// Every case on both TLS engines (EAP_TLS_ENGINE, test/radius/eap-tls-engines.test.ts).
for (const tlsEngine of ["openssl", "node"]) {
  describe(`EAP methods with eapol_test, TLS on ${tlsEngine}`, { skip: missing ?? false }, () => {
    let lab: EapTestServer;
    const run = (
      raw: Record<string, string>,
      network: Record<string, string>,
      extra: Partial<EapolOptions> = {},
    ) => eapolTest({ port: lab.authPort, secret: lab.secret, raw, network, ...extra });
    const tunnelled = (eap: string, phase2: string, identity: string, password: string, more = {}) =>
      run(
        { eap },
        {
          identity,
          anonymous_identity: "anonymous@example.org",
          password,
          phase2,
          ca_cert: lab.certs.caFile,
          domain_match: "radius.test",
          ...more,
        },
      );
    const tls = (
      identity: string,
      cert: { cert: string; key: string },
      more = {},
      extra: Partial<EapolOptions> = {},
    ) =>
      run(
        { eap: "TLS" },
        { identity, client_cert: cert.cert, private_key: cert.key, ca_cert: lab.certs.caFile, ...more },
        extra,
      );
    const accepted = (r: EapolResult, what: string) => {
      assert.equal(r.code, 0, `${what}: eapol_test exit ${r.code}\n${r.output.slice(-1500)}`);
      assert.ok(r.success, `${what}: SUCCESS`);
      assert.ok(r.mppeOk, `${what}: MPPE keys OK`);
    };
    const rejected = (r: EapolResult, what: string) => {
      assert.equal(
        r.code,
        252,
        `${what}: eapol_test exit ${r.code} (252 = EAP failure)\n${r.output.slice(-800)}`,
      );
      assert.ok(!r.success, what);
    };

    before(async () => {
      lab = await startEapServer({ env: { EAP_TLS_ENGINE: tlsEngine } });
      await lab.user("alice", "alice-pw");
      await lab.user("erin", "erin-pw", [["Expiration", ":=", String(Math.floor(Date.now() / 1000) - 60)]]);
      const disabled = await lab.server.core.users.create(lab.accountId, {
        username: "dana",
        password: "dana-pw",
        status: "disabled",
      });
      assert.ok(disabled.id);
    });
    after(() => lab?.stop());

    test("each tunnelled method: success with MPPE keys; wrong password, unknown, disabled, expired users rejected", async () => {
      const methods: [string, string][] = [
        ["PEAP", "autheap=MSCHAPV2"],
        ["TTLS", "auth=PAP"],
        ["TTLS", "autheap=MSCHAPV2"],
      ];
      const cases: [string, string, boolean][] = [
        ["alice", "alice-pw", true],
        ["alice", "wrong-pw", false],
        ["nobody", "alice-pw", false],
        ["dana", "dana-pw", false],
        ["erin", "erin-pw", false],
      ];
      const jobs = methods.flatMap(([eap, phase2]) =>
        cases.map(([user, password, ok]) => async () => ({
          what: `${eap} ${phase2} ${user}/${password}`,
          ok,
          result: await tunnelled(eap, phase2, user, password),
        })),
      );
      for (const { what, ok, result } of await inParallel(jobs)) {
        if (ok) accepted(result, what);
        else rejected(result, what);
      }
      // One row per login (not per round trip), the inner identity as username, the outer beside it.
      const rows = await lab.server.core.database.db
        .selectFrom("radpostauth")
        .select(["username", "reply", "method", "outer_identity", "reason"])
        .where("username", "in", ["alice", "nobody", "dana", "erin"])
        .execute();
      assert.equal(rows.length, jobs.length);
      const peapAccepts = rows.filter((r) => r.method === "PEAP" && r.reply === "Access-Accept");
      assert.deepEqual(peapAccepts, [
        {
          username: "alice",
          reply: "Access-Accept",
          method: "PEAP",
          outer_identity: "anonymous@example.org",
          reason: null,
        },
      ]);
      assert.equal(rows.filter((r) => r.method === "TTLS").length, 10);
      assert.ok(rows.some((r) => r.username === "dana" && r.reason === "user disabled"));
      assert.ok(rows.some((r) => r.username === "erin" && r.reason === "account expired"));
      const events = await lab.server.core.database.db
        .selectFrom("events")
        .select(["kind", "data"])
        .where("kind", "in", ["user.authenticated", "user.rejected"])
        .execute();
      const methodsSeen = new Set(events.map((e) => `${e.kind} ${JSON.parse(e.data).method}`));
      assert.ok(
        methodsSeen.has("user.authenticated PEAP") && methodsSeen.has("user.rejected TTLS"),
        [...methodsSeen].join(),
      );
      for (const e of events) assert.ok(!e.data.includes("alice-pw"), "never the password");
    });

    test("EAP-TLS: a valid certificate logs in; foreign CA, revoked, other identity, disabled user rejected", async () => {
      const alice = lab.certs.client("alice");
      const revoked = lab.certs.client("mallory");
      await lab.user("mallory", "x");
      lab.revoked.add(serialOf(revoked.cert));
      const foreign = lab.certs.client("alice", "foreign");
      const dana = lab.certs.client("dana");
      const [ok, ok13, wrongCa, isRevoked, otherIdentity, disabled, unknown] = await inParallel([
        () => tls("alice", alice),
        () => tls("alice", alice, TLS13),
        () => tls("alice", foreign),
        () => tls("mallory", revoked),
        () => tls("bob", alice),
        () => tls("dana", dana),
        () => tls("zed", lab.certs.client("zed")),
      ]);
      accepted(ok!, "EAP-TLS");
      accepted(ok13!, "EAP-TLS on TLS 1.3");
      assert.equal(ok13!.tlsVersion, "TLSv1.3");
      rejected(wrongCa!, "client certificate from a foreign CA");
      rejected(isRevoked!, "revoked client certificate");
      rejected(otherIdentity!, "identity not the certificate's");
      rejected(disabled!, "disabled user with a valid certificate");
      rejected(unknown!, "certificate of no user");
      const rows = await lab.server.core.database.db
        .selectFrom("radpostauth")
        .select(["username", "reply", "reason"])
        .where("method", "=", "TLS")
        .execute();
      assert.equal(rows.length, 7);
      assert.ok(
        rows.some((r) => r.username === "mallory" && /revoked/.test(r.reason ?? "")),
        JSON.stringify(rows),
      );
      assert.ok(rows.some((r) => r.username === "dana" && r.reason === "user disabled"));
      // The README's wording, the same as Wisp's certificate check (issue 22 point 10).
      assert.ok(
        rows.some((r) => r.username === "bob" && r.reason === "identity does not match the certificate"),
        JSON.stringify(rows),
      );
    });

    test("TLS 1.3 for PEAP and TTLS (RFC 9427 keys)", async () => {
      const [peap, ttls, ttlsEap] = await inParallel([
        () => tunnelled("PEAP", "autheap=MSCHAPV2", "alice", "alice-pw", TLS13),
        () => tunnelled("TTLS", "auth=PAP", "alice", "alice-pw", TLS13),
        () => tunnelled("TTLS", "autheap=MSCHAPV2", "alice", "alice-pw", TLS13),
      ]);
      for (const [r, what] of [
        [peap, "PEAP"],
        [ttls, "TTLS/PAP"],
        [ttlsEap, "TTLS/EAP-MSCHAPv2"],
      ] as const) {
        accepted(r!, `${what} on TLS 1.3`);
        assert.equal(r!.tlsVersion, "TLSv1.3", what);
      }
    });

    test("resumption (session tickets): EAP-TLS resumes and is decided again; TTLS does a full handshake again; each recorded", async () => {
      // wpa_supplicant offers session tickets only when told to.
      const tickets = { phase1: "tls_disable_session_ticket=0" };
      const before = await lab.server.core.database.db
        .selectFrom("radpostauth")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      const [tlsAgain, ttlsAgain] = await Promise.all([
        tls("alice", lab.certs.client("alice"), tickets, { reauth: 1 }),
        run(
          { eap: "TTLS" },
          {
            identity: "alice",
            anonymous_identity: "anon",
            password: "alice-pw",
            phase2: "auth=PAP",
            ca_cert: lab.certs.caFile,
            ...tickets,
          },
          { reauth: 1 },
        ),
      ]);
      for (const [r, what] of [
        [tlsAgain, "EAP-TLS"],
        [ttlsAgain, "TTLS"],
      ] as const) {
        accepted(r, `${what} twice`);
        assert.match(r.output, /MPPE keys OK: 2 +mismatch: 0/, what);
      }
      assert.match(tlsAgain.output, /resumed=1/, "EAP-TLS: the second handshake resumed the session");
      // No tickets for tunnelled methods: a resumed session would let the peer skip phase 2.
      assert.doesNotMatch(ttlsAgain.output, /resumed=1/, "TTLS: full handshakes");
      const after = await lab.server.core.database.db
        .selectFrom("radpostauth")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      assert.equal(Number(after.n) - Number(before.n), 4, "each login, resumed or not, recorded once");
    });
  });
}

describe("EAP with a small fragment size", { skip: missing ?? false }, () => {
  let lab: EapTestServer;
  before(async () => {
    lab = await startEapServer({ fragmentSize: 200 });
    await lab.user("alice", "alice-pw");
  });
  after(() => lab?.stop());

  test("200-octet fragments: PEAP and EAP-TLS still log in, in more round trips", async () => {
    const alice = lab.certs.client("alice");
    const [peap, tls] = await Promise.all([
      peapLogin(lab),
      eapolTest({
        port: lab.authPort,
        secret: lab.secret,
        raw: { eap: "TLS" },
        network: {
          identity: "alice",
          client_cert: alice.cert,
          private_key: alice.key,
          ca_cert: lab.certs.caFile,
        },
      }),
    ]);
    for (const [r, what] of [
      [peap, "PEAP"],
      [tls, "EAP-TLS"],
    ] as const) {
      assert.equal(r.code, 0, `${what}\n${r.output.slice(-1500)}`);
      assert.ok(r.mppeOk, what);
      assert.ok(r.accessRequests > (what === "PEAP" ? 10 : 8), `${what}: ${r.accessRequests} round trips`);
    }
  });
});

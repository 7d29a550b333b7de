// Two-factor sign-in to the console (issue 29 point 2) over HTTP, on SQLite and PostgreSQL: TOTP set
// up from the page's key (codes computed here by RFC 6238 with node:crypto, not by the server's
// library) and then asked after the password; a code is accepted once (replay refused); recovery
// codes shown once, each used once (a second use refused); five wrong answers end the sign-in; the
// account's requirement ends sessions without a second factor and sends their admins to set one up,
// with nothing else reachable meanwhile; bad input answered with its page. Passkeys: passkeys.test.ts.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const PASSWORD = "two factor password 123";

/** RFC 4648 base32 to bytes. */
function base32(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const c of text.replace(/[\s=]/g, "")) bits += alphabet.indexOf(c).toString(2).padStart(5, "0");
  return Buffer.from(bits.match(/.{8}/g)!.map((b) => Number.parseInt(b, 2)));
}

/** RFC 6238 TOTP (HMAC-SHA-1, 6 digits, 30 s) at a time step offset from now: RFC 4226 section 5.3. */
function totp(secret: string, stepOffset = 0): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000) + stepOffset));
  const mac = createHmac("sha1", base32(secret)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const value = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(value).padStart(6, "0");
}

const secretOf = (page: string) => /<code id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(page)?.[1] ?? "";
const codesOf = (page: string) =>
  /<pre id="recovery-codes"[^>]*>([^<]*)<\/pre>/.exec(page)?.[1]?.split("\n") ?? [];
const alertOf = (page: string) => /role="alert"[^>]*>([^<]*)</.exec(page)?.[1] ?? "";

for (const { dialect, skip } of await dialects()) {
  describe(`two-factor console sign-in on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let setupCode = "";
    let secret = "";
    let codes: string[] = [];
    const client = (ip: string) => new ConsoleClient(server.url, { "x-forwarded-for": ip });
    const auditOf = (email: string) =>
      server.core.database.db
        .selectFrom("audit_log")
        .selectAll()
        .where("actor_name", "=", email)
        .orderBy("id")
        .execute();

    before(async () => {
      server = await startTestServer({ dialect, env: { TRUSTED_PROXIES: "127.0.0.1" } });
      const account = await server.account("default");
      for (const email of ["ana@example.com", "ben@example.com", "cy@example.com"])
        await server.core.admins.create(account, { email, password: PASSWORD });
    });
    after(async () => server?.stop());

    /** Password step; the answer (a redirect to the second step) is returned. */
    async function password(c: ConsoleClient, email: string) {
      const answer = await c.login(email, PASSWORD);
      assert.equal(answer.status, 303, answer.text.slice(0, 300));
      return answer;
    }

    test("TOTP is set up from the page's key and confirmed by a first code; recovery codes are shown once", async () => {
      const c = client("192.0.2.1");
      assert.equal((await password(c, "ana@example.com")).location, "/console", "no second factor yet");
      const setup = await c.get("/console/security/totp");
      assert.equal(setup.status, 200);
      assert.match(setup.text, /<svg[^>]*>.*<path/s, "the QR code is an inline SVG");
      secret = secretOf(setup.text).replace(/ /g, "");
      assert.equal(secret.length, 32, "160-bit base32 secret");
      assert.equal(
        secretOf((await c.get("/console/security/totp")).text).replace(/ /g, ""),
        secret,
        "same until confirmed",
      );

      const wrong = await c.post("/console/security/totp", { code: "12345" });
      assert.equal(wrong.status, 400);
      assert.match(wrong.text, /Code from the app is not the app&#39;s current 6-digit code|is not the app/);
      setupCode = totp(secret);
      const confirmed = await c.post("/console/security/totp", { code: setupCode });
      assert.equal(confirmed.location, "/console/security/recovery-codes");
      codes = codesOf((await c.get("/console/security/recovery-codes")).text);
      assert.equal(codes.length, 10);
      assert.ok(
        codes.every((code) => /^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/.test(code)),
        codes.join(" "),
      );
      const again = await c.get("/console/security/recovery-codes");
      assert.equal(again.location, "/console/security?notice=codes-shown", "shown once");
      const page = (await c.get("/console/security")).text;
      assert.doesNotMatch(page, new RegExp(secret.slice(0, 8)), "the secret is never shown again");
      assert.doesNotMatch((await c.get("/console/security/totp")).text, new RegExp(secret.slice(0, 8)));
    });

    test("after the password, the TOTP code; the same code again is refused (replay)", async () => {
      const c = client("192.0.2.2");
      const first = await password(c, "ana@example.com");
      assert.equal(first.location, "/console/login/second-factor");
      assert.equal(c.cookies.has("wisp_session"), false, "no session before the second factor");
      assert.match((await c.get("/console")).location ?? "", /^\/console\/login/, "nothing reachable yet");
      const page = await c.get("/console/login/second-factor");
      assert.match(page.text, /Code from your authenticator app/);

      // The code that confirmed the setup is never taken again: "already used" while it is inside
      // the accepted window, a wrong code once a loaded machine has let its 30 s step go by.
      const reused = await c.post("/console/login/second-factor/totp", { code: setupCode });
      assert.ok([409, 401].includes(reused.status), `the setup code again: ${reused.status}`);
      if (reused.status === 409) assert.match(alertOf(reused.text), /already used/);
      const near = [-1, 0, 1].map((step) => totp(secret, step));
      const wrongCode = ["000000", "111111", "222222", "333333"].find((code) => !near.includes(code))!;
      const wrong = await c.post("/console/login/second-factor/totp", { code: wrongCode });
      assert.equal(wrong.status, 401);
      const next = totp(secret, 1); // the next step's code: within the accepted window
      const ok = await c.post("/console/login/second-factor/totp", { code: next });
      assert.equal(ok.location, "/console");
      assert.equal((await c.get("/console")).status, 200);

      const thief = client("192.0.2.3");
      await password(thief, "ana@example.com");
      await thief.get("/console/login/second-factor");
      const replay = await thief.post("/console/login/second-factor/totp", { code: next });
      assert.equal(replay.status, 409, "a code is accepted once, from any browser");
      assert.match(alertOf(replay.text), /already used/);
      assert.equal(thief.cookies.has("wisp_session"), false);
    });

    test("a recovery code works once; the same code again is refused", async () => {
      const c = client("192.0.2.4");
      await password(c, "ana@example.com");
      await c.get("/console/login/second-factor");
      const used = await c.post("/console/login/second-factor/recovery", { code: codes[0]!.toLowerCase() });
      assert.equal(used.location, "/console", "case and dashes do not matter");

      const thief = client("192.0.2.5");
      await password(thief, "ana@example.com");
      await thief.get("/console/login/second-factor");
      const again = await thief.post("/console/login/second-factor/recovery", { code: codes[0]! });
      assert.equal(again.status, 409);
      assert.match(alertOf(again.text), /already used/);
      const bad = await thief.post("/console/login/second-factor/recovery", { code: "not a code" });
      assert.equal(bad.status, 401);
      assert.match(alertOf(bad.text), /not a recovery code/);
      const other = await thief.post("/console/login/second-factor/recovery", { code: codes[1]! });
      assert.equal(other.location, "/console");
      assert.match((await c.get("/console/security")).text, /8 of 10 unused/);
    });

    test("five wrong answers end the sign-in; answers without a sign-in are refused", async () => {
      const c = client("192.0.2.6");
      await password(c, "ana@example.com");
      await c.get("/console/login/second-factor");
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push(
          (await c.post("/console/login/second-factor/recovery", { code: "AAAA-AAAA-AAAA" })).status,
        );
      assert.deepEqual(statuses, [401, 401, 401, 401, 401]);
      const after = await c.post("/console/login/second-factor/totp", { code: totp(secret, -1) });
      assert.equal(after.status, 401);
      assert.match(after.text, /expired or was already used|Log in again/);
      assert.equal(c.cookies.has("wisp_session"), false);

      const stranger = client("192.0.2.7");
      await stranger.get("/console/login");
      const none = await stranger.post("/console/login/second-factor/totp", { code: "123456" });
      assert.equal(none.status, 401);
      const forged = await stranger.post(
        "/console/login/second-factor/totp",
        { code: "123456" },
        { csrf: "x".repeat(43) },
      );
      assert.equal(forged.status, 403, "the CSRF token is checked");
      assert.equal((await stranger.get("/console/login/enrol")).location, "/console/login");
    });

    test("the account's requirement: sessions without a second factor end; their admins must set one up first", async () => {
      const ben = client("192.0.2.8");
      assert.equal((await password(ben, "ben@example.com")).location, "/console");
      assert.equal((await ben.get("/console")).status, 200);

      const cy = client("192.0.2.9");
      await password(cy, "cy@example.com");
      await cy.get("/console/security");
      const refused = await cy.post("/console/security/requirement", { required: "1" });
      assert.equal(refused.status, 409, "nobody requires what they have not set up themselves");
      assert.match(alertOf(refused.text), /set up a second factor for yourself/);

      const ana = client("192.0.2.10");
      await password(ana, "ana@example.com");
      await ana.get("/console/login/second-factor");
      assert.equal(
        (await ana.post("/console/login/second-factor/recovery", { code: codes[2]! })).location,
        "/console",
      );
      await ana.get("/console/security");
      const on = await ana.post("/console/security/requirement", { required: "1" });
      assert.equal(on.location, "/console/security?notice=second-factor-required");
      assert.equal((await ana.get("/console")).status, 200, "the session that turned it on stays");
      assert.match((await ben.get("/console")).location ?? "", /^\/console\/login/, "ben's session ended");

      const again = await password(ben, "ben@example.com");
      assert.equal(again.location, "/console/login/enrol");
      for (const path of ["/console", "/console/users", "/console/security", "/console/login/second-factor"])
        assert.match((await ben.get(path)).location ?? "", /^\/console\/login/, `${path} is not reachable`);
      const enrol = await ben.get("/console/login/enrol");
      assert.equal(enrol.status, 200);
      assert.match(enrol.text, /requires a second factor/);
      const benSecret = secretOf(enrol.text).replace(/ /g, "");
      const wrong = await ben.post("/console/login/enrol/totp", { code: "abcdef" });
      assert.equal(wrong.status, 400);
      const auditedBefore = (await auditOf("ben@example.com")).length;
      const done = await ben.post("/console/login/enrol/totp", { code: totp(benSecret) });
      assert.equal(done.location, "/console/security/recovery-codes?next=%2Fconsole");
      assert.equal(codesOf((await ben.get(done.location!)).text).length, 10);
      // Enrolment during the sign-in (test/audit/console-walk.test.ts's CHECKED_ELSEWHERE): one row (the
      // first factor's recovery codes come with it), naming ben, his role and address.
      assert.deepEqual(
        (await auditOf("ben@example.com"))
          .slice(auditedBefore)
          .map((r) => [r.actor_type, r.actor_role, r.resource, r.action, r.address]),
        [["admin", "owner", "totp", "create", "192.0.2.8"]],
      );
      assert.equal((await ben.get("/console")).status, 200);

      const remove = await ben.post("/console/security/totp/remove");
      assert.equal(remove.status, 409, "the last factor stays while the account requires one");
      const off = await ana.post("/console/security/requirement", { required: "0" });
      assert.equal(off.location, "/console/security?notice=second-factor-optional");
      assert.equal(
        (await ben.post("/console/security/totp/remove")).location,
        "/console/security?notice=totp-off",
      );
      assert.equal((await password(client("192.0.2.11"), "ben@example.com")).location, "/console");

      // `wisp admins reset-second-factor`: a lost phone and lost codes; the sessions end too.
      await server.core.admins.resetSecondFactors("ana@example.com");
      assert.match((await ana.get("/console")).location ?? "", /^\/console\/login/);
      assert.equal((await password(client("192.0.2.12"), "ana@example.com")).location, "/console");
    });
  });
}

// Pre-hashed passwords end to end: the API takes them (and says why it refuses a bad one), stores
// them as FreeRADIUS's Password-With-Header, and every door that checks a password Wisp-side uses
// them: RADIUS PAP over UDP, EAP-TTLS/PAP (eapol_test), and the captive portal's password sign-in.
// (`wisp radius test` goes through the RADIUS door: test/cli/radius.test.ts.)
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import { ConsoleClient } from "../support/browser.ts";
import { type EapTestServer, startEapServer } from "../support/eap-server.ts";
import { eapolTest, eapolTestUnavailable } from "../support/eapol.ts";

const SALT = Buffer.from("salty");
const ssha = (password: string) =>
  `{SSHA}${Buffer.concat([createHash("sha1").update(password).update(SALT).digest(), SALT]).toString("base64")}`;
/** crypt(3) of "password" (system libxcrypt). */
const MD5_CRYPT = "$1$salt$qJH7.N4xYta3aEG/dfqo/0";
const BCRYPT = "$2b$05$WispWispWispWispWispWuKOLssg0dsKLure6h29tdbPxKM9eSS/m"; // "crypt pw ü"

describe("pre-hashed passwords through the API and every door", () => {
  let lab: EapTestServer;
  let key: string;

  const pap = (username: string, password: string) =>
    sendRadius({
      ...accessRequestPap(username, password, [["NAS-IP-Address", "127.0.0.1"]]),
      host: "127.0.0.1",
      port: lab.authPort,
      secret: lab.secret,
      timeoutMs: 3000,
      retries: 0,
    }).then((answer) => answer.type);

  const createUser = (body: Record<string, unknown>) => lab.server.call("POST", "/api/users", { key, body });
  const radcheck = (username: string) =>
    lab.server.core.database.db
      .selectFrom("radcheck")
      .select(["attribute", "op", "value"])
      .where("account_id", "=", lab.accountId)
      .where("username", "=", username)
      .orderBy("id")
      .execute();

  before(async () => {
    lab = await startEapServer();
    key = await lab.server.key("default");
  });
  after(() => lab?.stop());

  test("the API stores a hash as Password-With-Header; PAP logins check it", async () => {
    const forms: [string, string, string, string][] = [
      ["hash-ssha", ssha("ssha pw"), ssha("ssha pw"), "ssha pw"],
      ["hash-crypt", MD5_CRYPT, `{crypt}${MD5_CRYPT}`, "password"],
      ["hash-bcrypt", BCRYPT, `{crypt}${BCRYPT}`, "crypt pw ü"],
      ["hash-md5", `{MD5}${createHash("md5").update("md5 pw").digest("base64")}`, "", "md5 pw"],
      ["hash-pbkdf2", "$pbkdf2-sha256$1000$c2FsdHk$", "", ""],
    ];
    for (const [username, hash, stored, password] of forms.slice(0, 4)) {
      const created = await createUser({ username, password_hash: hash });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.password_hash, undefined, "write-only");
      const rows = await radcheck(username);
      assert.deepEqual(rows, [{ attribute: "Password-With-Header", op: ":=", value: stored || hash }]);
      assert.equal(await pap(username, password), "Access-Accept", username);
      assert.equal(await pap(username, `${password}x`), "Access-Reject", username);
    }
  });

  test("a hash the login could not use is refused with the reason, and nothing is stored", async () => {
    const bad: [string, RegExp][] = [
      ["{FOO}abc", /unknown \{scheme\} header \{FOO\}/],
      ["{SHA}c2hvcnQ=", /SHA-Password of the wrong length/],
      [`{SSHA}${ssha("x").slice(6, 20)}`, /SSHA-Password/],
      ["$y$j9T$WispSaltWispSalt$k56dIbKoRbCk56BBlawADFBah1wjxhhx3X1/u7KdxQB", /must be a \{SCHEME\} hash/],
      ["{crypt}$y$j9T$WispSaltWispSalt$k56dIbKoRbCk56BBlawADFBah1wjxhhx3X1/u7KdxQB", /not supported by Wisp/],
      ["{crypt}$1$salt$short", /crypt string not in crypt\(3\)'s form/],
      ["{clear}plain", /set password instead/],
      ["5f4dcc3b5aa765d61d8327deb882cf99", /must be a \{SCHEME\} hash/],
      [`{crypt}$2b$31$${"a".repeat(53)}`, /bcrypt cost above/],
    ];
    for (const [hash, reason] of bad) {
      const answer = await createUser({ username: "refused-hash", password_hash: hash });
      assert.equal(answer.status, 400, `${hash}: ${answer.text}`);
      assert.equal(answer.body.details[0].field, "password_hash");
      assert.match(answer.body.message, reason, hash);
    }
    const both = await createUser({ username: "refused-hash", password: "x", password_hash: ssha("x") });
    assert.equal(both.status, 400);
    assert.match(both.body.message, /together with password/);
    assert.deepEqual(await radcheck("refused-hash"), []);
    assert.equal((await lab.server.call("GET", "/api/users?search=refused-hash", { key })).body.total, 0);
  });

  test("an imported hash Wisp cannot use is rejected, and the auth log says why", async () => {
    await createUser({ username: "yescrypt-user" });
    await lab.server.core.database.db
      .insertInto("radcheck")
      .values({
        account_id: lab.accountId,
        username: "yescrypt-user",
        attribute: "Crypt-Password",
        op: ":=",
        value: "$y$j9T$WispSaltWispSalt$k56dIbKoRbCk56BBlawADFBah1wjxhhx3X1/u7KdxQB",
      })
      .execute();
    assert.equal(await pap("yescrypt-user", "crypt pw ü"), "Access-Reject");
    await lab.server.core.aaa.drain();
    const logged = await lab.server.core.database.db
      .selectFrom("radpostauth")
      .select(["reason"])
      .where("account_id", "=", lab.accountId)
      .where("username", "=", "yescrypt-user")
      .executeTakeFirstOrThrow();
    assert.equal(
      logged.reason,
      "the stored Crypt-Password uses a scheme Wisp does not check (crypt scheme $y$)",
    );
  });

  test("a new password or hash replaces every password item, so the new one decides", async () => {
    const created = await createUser({ username: "switcher", password: "old clear" });
    const id = created.body.id;
    await lab.server.core.database.db
      .insertInto("radcheck")
      .values({
        account_id: lab.accountId,
        username: "switcher",
        attribute: "NT-Password",
        op: ":=",
        value: "0x00",
      })
      .execute();
    const toHash = await lab.server.call("PATCH", `/api/users/${id}`, {
      key,
      body: { password_hash: ssha("new") },
    });
    assert.equal(toHash.status, 200, toHash.text);
    assert.deepEqual(await radcheck("switcher"), [
      { attribute: "Password-With-Header", op: ":=", value: ssha("new") },
    ]);
    assert.equal(await pap("switcher", "old clear"), "Access-Reject");
    assert.equal(await pap("switcher", "new"), "Access-Accept");
    await lab.server.call("PATCH", `/api/users/${id}`, { key, body: { password: "clear again" } });
    assert.deepEqual(await radcheck("switcher"), [
      { attribute: "Cleartext-Password", op: ":=", value: "clear again" },
    ]);
    assert.equal(await pap("switcher", "new"), "Access-Reject");
    assert.equal(await pap("switcher", "clear again"), "Access-Accept");
  });

  test("the attributes API refuses a password item no login could use", async () => {
    const user = await createUser({ username: "attr-hash" });
    const add = (attribute: string, value: string) =>
      lab.server.call("POST", "/api/attributes", {
        key,
        body: { userid: user.body.id, table: "radcheck", attribute, operator: ":=", value },
      });
    const md5 = createHash("md5").update("attr pw").digest("hex");
    assert.equal((await add("MD5-Password", md5.slice(0, 30))).status, 400);
    assert.equal((await add("Crypt-Password", "$6$rounds=10$x$y")).status, 400);
    assert.equal((await add("Password-With-Header", "no header here")).status, 400);
    const good = await add("MD5-Password", md5);
    assert.equal(good.status, 201, good.text);
    assert.equal(await pap("attr-hash", "attr pw"), "Access-Accept");
  });

  test("EAP-TTLS/PAP checks the hash", { skip: eapolTestUnavailable() ?? false }, async () => {
    assert.equal((await createUser({ username: "ttls-hash", password_hash: MD5_CRYPT })).status, 201);
    const login = (password: string) =>
      eapolTest({
        port: lab.authPort,
        secret: lab.secret,
        raw: { eap: "TTLS" },
        network: {
          identity: "ttls-hash",
          anonymous_identity: "anonymous@example.org",
          password,
          phase2: "auth=PAP",
          ca_cert: lab.certs.caFile,
          domain_match: "radius.test",
        },
      });
    const [right, wrong] = await Promise.all([login("password"), login("Password")]);
    assert.ok(right.success && right.mppeOk, right.output.slice(-800));
    assert.equal(wrong.code, 252, wrong.output.slice(-800));
  });

  test("the captive portal's password sign-in checks the hash", async () => {
    const network = await lab.server.core.networks.create(lab.accountId, {
      name: "portal net",
      nas_ip: "192.0.2.40",
    });
    const portal = await lab.server.core.portals.create(lab.accountId, {
      name: "Hashes",
      network_id: network.network.id,
      vendor: "coovachilli",
      uam_secret: "portal-s3cret",
      uam_auth: "pap",
      methods: ["password"],
    });
    assert.equal(
      (await createUser({ username: "portal-hash", password_hash: ssha("portal pw") })).status,
      201,
    );
    const query = new URLSearchParams({
      res: "notyet",
      uamip: "10.1.0.1",
      uamport: "3990",
      challenge: "0123456789abcdef0123456789abcdef",
      mac: "AA-BB-CC-DD-EE-41",
    }).toString();
    const gw = `${query}&md=${createHash("md5").update(`${lab.server.url}/portal/${portal.id}?${query}portal-s3cret`).digest("hex").toUpperCase()}`;
    const client = new ConsoleClient(lab.server.url);
    assert.equal((await client.get(`/portal/${portal.id}?${gw}`)).status, 200);
    const signIn = (password: string) =>
      client.post(`/portal/${portal.id}`, { method: "password", username: "portal-hash", password, gw });
    assert.equal((await signIn("portal wrong")).status, 401);
    const right = await signIn("portal pw");
    assert.equal(right.status, 200, right.text.slice(0, 500));
    assert.match(right.text, /10\.1\.0\.1:3990\/logon/);
  });
});

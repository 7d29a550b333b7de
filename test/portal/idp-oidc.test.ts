// Guest sign-in through OpenID Connect (issue 26 point 2) against a real OpenID Provider
// (oidc-provider, run by the test on 127.0.0.1): the guest's browser over HTTP presses the
// provider's button, logs in at the IdP, comes back with a code; Wisp checks state, PKCE, the ID
// token (signature, iss, aud, exp, nonce), makes or finds `<provider>:<sub>`, maps the groups and
// hands a one-time credential to the gateway. Then each refusal of the list.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { freeTcpPort, GuestBrowser, handoffFields, type IdpLab, startIdpLab } from "../support/idp-lab.ts";
import { stepsToCallback } from "../support/oidc-op.ts";
import { startRogueOp, type TokenContext } from "../support/rogue-op.ts";

describe("guest sign-in through OpenID Connect", () => {
  let lab: IdpLab;
  let macs = 0;
  before(async () => {
    lab = await startIdpLab();
  });
  after(async () => {
    await lab?.stop();
  });

  const newMac = () => `AA:BB:CC:26:01:${String(++macs).padStart(2, "0")}`;
  const callbackOf = (providerId: number) => `${lab.server.url}/portal/idp/${providerId}/callback`;

  async function usersNamed(prefix: string) {
    const rows = await lab.server.core.database.db
      .selectFrom("users")
      .select(["username", "email", "fullname"])
      .where("account_id", "=", lab.accountId)
      .where("username", "like", `${prefix}%`)
      .execute();
    return rows;
  }

  async function groupsOf(username: string) {
    const rows = await lab.server.core.database.db
      .selectFrom("radusergroup")
      .select("groupname")
      .where("account_id", "=", lab.accountId)
      .where("username", "=", username)
      .orderBy("groupname")
      .execute();
    return rows.map((r) => r.groupname);
  }

  test("login at the IdP, back to the gateway hand-off as <provider>:<sub> in the mapped group", async () => {
    const provider = await lab.oidcProvider({
      group_mappings: [
        { idp_group: "staff-all", group: "staff" },
        { idp_group: "undergrad", group: "students" },
      ],
    });
    lab.op.accounts.set("alice", {
      email: "alice@uni.example",
      email_verified: true,
      name: "Alice",
      groups: ["staff-all", "other"],
    });
    const portal = await lab.portal({ identity_providers: [provider.id] });
    const guest = new GuestBrowser(lab, portal, newMac());
    const page = await guest.open();
    assert.match(page, new RegExp(`id="idp-${provider.id}"[^>]*>Continue with Campus ID<`));
    const started = await guest.start(provider.id);
    assert.equal(started.status, 200, started.text);
    assert.ok(started.idpUrl?.startsWith(`${lab.op.issuer}/auth?`), started.idpUrl ?? "");
    const authorize = new URL(started.idpUrl ?? "");
    assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
    assert.ok(authorize.searchParams.get("nonce"));
    assert.equal(authorize.searchParams.get("redirect_uri"), callbackOf(provider.id));
    const callback = await stepsToCallback(guest.jar, started.idpUrl ?? "", "alice", callbackOf(provider.id));
    const back = await guest.jar.fetch(callback);
    assert.equal(back.status, 303);
    assert.match(
      back.headers.get("location") ?? "",
      new RegExp(`^/portal/${portal.id}/idp/finish/[A-Za-z0-9_-]{43}$`),
    );
    const done = await guest.follow(back);
    assert.equal(done.status, 200, done.text.slice(0, 500));
    const fields = handoffFields(done.text);
    assert.equal(fields.username, `${provider.name}:alice`);
    assert.ok((fields.password ?? "").length >= 20);
    const [user] = await usersNamed(`${provider.name}:`);
    assert.deepEqual(user, {
      username: `${provider.name}:alice`,
      email: "alice@uni.example",
      fullname: "Alice",
    });
    assert.deepEqual(await groupsOf(`${provider.name}:alice`), ["staff"]);
    // The credential passes the RADIUS rules the gateway's request will meet.
    const verdict = await lab.server.core.aaa.precheck(lab.accountId, {
      username: fields.username ?? "",
      password: fields.password ?? "",
      clientMac: guest.mac,
    });
    assert.equal(verdict.accepted, true, verdict.reason ?? "");

    // Signing in again with a changed email and groups: the same user, the mapping follows the IdP.
    lab.op.accounts.set("alice", {
      email: "alice.new@uni.example",
      email_verified: true,
      name: "Alice",
      groups: ["undergrad"],
    });
    const again = new GuestBrowser(lab, portal, newMac());
    const second = await again.start(provider.id);
    const cb = await stepsToCallback(again.jar, second.idpUrl ?? "", "alice", callbackOf(provider.id));
    const finished = await again.follow(await again.jar.fetch(cb));
    assert.equal(handoffFields(finished.text).username, `${provider.name}:alice`);
    const users = await usersNamed(`${provider.name}:`);
    assert.equal(users.length, 1);
    assert.equal(users[0]?.email, "alice.new@uni.example");
    assert.deepEqual(await groupsOf(`${provider.name}:alice`), ["students"]);
  });

  test("a forged state, a replayed callback and a finish in another browser are refused", async () => {
    const provider = await lab.oidcProvider();
    const portal = await lab.portal({ identity_providers: [provider.id] });
    const guest = new GuestBrowser(lab, portal, newMac());
    const forged = await guest.jar.fetch(`${callbackOf(provider.id)}?code=abc&state=${"A".repeat(43)}`);
    assert.equal(forged.status, 410);
    assert.match(await forged.text(), /expired or was already used/);

    const started = await guest.start(provider.id);
    const callback = await stepsToCallback(guest.jar, started.idpUrl ?? "", "bob", callbackOf(provider.id));
    const first = await guest.jar.fetch(callback);
    assert.equal(first.status, 303);
    // The same code and state again (a replay): the sign-in was taken once.
    const replay = await guest.jar.fetch(callback);
    assert.equal(replay.status, 410);
    // Another browser (no cookie of the one that started) cannot finish it.
    const finishUrl = new URL(first.headers.get("location") ?? "", lab.server.url).href;
    const stranger = await fetch(finishUrl, { redirect: "manual" });
    assert.equal(stranger.status, 403);
    assert.match(await stranger.text(), /expired or was already used/);
    // ...and that spent it: the right browser cannot use it afterwards either.
    assert.equal((await guest.jar.fetch(finishUrl)).status, 410);
    assert.deepEqual(await usersNamed(`${provider.name}:`), []);
  });

  test("an email domain not allowed, and an unverified address, create no user", async () => {
    const provider = await lab.oidcProvider({ allowed_domains: ["uni.example"] });
    const portal = await lab.portal({ identity_providers: [provider.id] });
    lab.op.accounts.set("mallory", { email: "mallory@elsewhere.example", email_verified: true, name: "M" });
    lab.op.accounts.set("carol", { email: "carol@uni.example", email_verified: false, name: "C" });
    for (const login of ["mallory", "carol"]) {
      const guest = new GuestBrowser(lab, portal, newMac());
      const started = await guest.start(provider.id);
      const callback = await stepsToCallback(guest.jar, started.idpUrl ?? "", login, callbackOf(provider.id));
      const answer = await guest.jar.fetch(callback);
      assert.equal(answer.status, 403, login);
      assert.match(await answer.text(), /may not be used on this network/);
    }
    assert.deepEqual(await usersNamed(`${provider.name}:`), []);
  });

  test("a provider disabled during the sign-in: refused on the way back", async () => {
    const provider = await lab.oidcProvider();
    const portal = await lab.portal({ identity_providers: [provider.id] });
    const guest = new GuestBrowser(lab, portal, newMac());
    const started = await guest.start(provider.id);
    const callback = await stepsToCallback(guest.jar, started.idpUrl ?? "", "dave", callbackOf(provider.id));
    await lab.server.core.idp.update(lab.accountId, provider.id, { enabled: false });
    const answer = await guest.jar.fetch(callback);
    assert.equal(answer.status, 403);
    assert.match(await answer.text(), /not available on this network any more/);
    assert.deepEqual(await usersNamed(`${provider.name}:`), []);
  });

  test("an IdP that is down, or too slow: a bounded wait and a friendly page", async () => {
    const closed = await freeTcpPort();
    const down = await lab.oidcProvider({ issuer: `http://127.0.0.1:${closed}` });
    // A server that accepts and never answers.
    const silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const slow = await lab.oidcProvider({
      issuer: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    });
    const portal = await lab.portal({ identity_providers: [down.id, slow.id] });
    try {
      const guest = new GuestBrowser(lab, portal, newMac());
      const refused = await guest.start(down.id);
      assert.equal(refused.status, 502);
      assert.match(refused.text, /did not answer in time/);
      const began = Date.now();
      const late = await guest.start(slow.id);
      assert.equal(late.status, 502);
      assert.ok(Date.now() - began < 15_000, `waited ${Date.now() - began} ms`);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  test("ID tokens a real IdP would not send: alg none, other audience or issuer, expired, other nonce or key", async () => {
    const rogue = await startRogueOp();
    try {
      const provider = await lab.oidcProvider({
        issuer: rogue.issuer,
        client_id: rogue.clientId,
        client_secret: rogue.clientSecret,
      });
      const portal = await lab.portal({ identity_providers: [provider.id] });
      /** One sign-in with the token the rogue IdP builds; the answer to the callback. */
      async function signIn(idToken: (c: TokenContext) => string) {
        rogue.idToken = idToken;
        const guest = new GuestBrowser(lab, portal, newMac());
        const started = await guest.start(provider.id);
        const back = await guest.jar.fetch(started.idpUrl ?? "");
        const callback = back.headers.get("location") ?? "";
        assert.ok(callback.startsWith(callbackOf(provider.id)), callback);
        return guest.follow(await guest.jar.fetch(callback));
      }
      // The harness itself: a correct token is accepted.
      const good = await signIn((c) => rogue.signed(rogue.validClaims(c)));
      assert.equal(handoffFields(good.text).username, `${provider.name}:rogue-user`);
      const none = (c: TokenContext) =>
        `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${Buffer.from(JSON.stringify(rogue.validClaims(c))).toString("base64url")}.`;
      const cases: [string, (c: TokenContext) => string][] = [
        ["alg none", none],
        ["HS256 with the client secret", (c) => rogue.signed(rogue.validClaims(c), { alg: "HS256" })],
        ["another audience", (c) => rogue.signed({ ...rogue.validClaims(c), aud: "someone-else" })],
        ["another issuer", (c) => rogue.signed({ ...rogue.validClaims(c), iss: "https://impostor.example" })],
        [
          "expired beyond the skew",
          (c) => rogue.signed({ ...rogue.validClaims(c), iat: c.now - 3600, exp: c.now - 600 }),
        ],
        ["another nonce", (c) => rogue.signed({ ...rogue.validClaims(c), nonce: "not-the-one" })],
        ["signed by another key", (c) => rogue.signed(rogue.validClaims(c), {}, rogue.otherKey)],
      ];
      for (const [name, token] of cases) {
        const answer = await signIn((c) => token({ ...c, nonce: c.nonce }));
        assert.equal(answer.status, 403, `${name}: ${answer.text.slice(0, 200)}`);
        assert.match(answer.text, /could not confirm who you are/, name);
      }
      assert.equal((await usersNamed(`${provider.name}:`)).length, 1);
    } finally {
      await rogue.close();
    }
  });
});

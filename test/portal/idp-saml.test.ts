// Guest sign-in through SAML 2.0 (issue 26 point 2): Wisp's SP-initiated AuthnRequest, the test's
// IdP answering with an assertion signed by its key (xml-crypto), posted to Wisp's ACS. Then the
// refusals: unsigned, signed by another key, wrapped (signature wrapping), for another SP, expired
// beyond the clock skew, another issuer, SHA-1, a response replayed, a RelayState forged. Wisp's
// SP metadata is published.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { GuestBrowser, handoffFields, type IdpLab, startIdpLab } from "../support/idp-lab.ts";
import type { AuthnRequest, ResponseOptions } from "../support/saml-idp.ts";

describe("guest sign-in through SAML", () => {
  let lab: IdpLab;
  let macs = 0;
  before(async () => {
    lab = await startIdpLab();
  });
  after(async () => {
    await lab?.stop();
  });

  const newMac = () => `AA:BB:CC:26:02:${String(++macs).padStart(2, "0")}`;

  async function usersNamed(prefix: string) {
    return lab.server.core.database.db
      .selectFrom("users")
      .select(["username", "email"])
      .where("account_id", "=", lab.accountId)
      .where("username", "like", `${prefix}%`)
      .execute();
  }

  /** A guest who pressed the button: the AuthnRequest Wisp sent, read at the IdP. */
  async function started(providerId: number) {
    const portal = await lab.portal({ identity_providers: [providerId] });
    const guest = new GuestBrowser(lab, portal, newMac());
    const start = await guest.start(providerId);
    assert.equal(start.status, 200, start.text);
    assert.ok(start.idpUrl?.startsWith(`${lab.saml.url}/sso?SAMLRequest=`), start.idpUrl ?? "");
    const request = lab.saml.parseRedirect(start.idpUrl ?? "");
    return { portal, guest, request };
  }

  /** Posts a Response to the ACS as the IdP's auto-submitted form would. */
  function post(guest: GuestBrowser, providerId: number, saml: string, relayState: string) {
    return guest.jar.fetch(guest.url(`/portal/idp/${providerId}/acs`), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: saml, RelayState: relayState }),
    });
  }

  test("Wisp's SP metadata names its entity id and ACS", async () => {
    const provider = await lab.samlProvider();
    const answer = await fetch(`${lab.server.url}/portal/idp/${provider.id}/metadata`);
    assert.equal(answer.status, 200);
    const xml = await answer.text();
    assert.match(xml, new RegExp(`entityID="${lab.server.url}/portal/idp/${provider.id}/metadata"`));
    assert.match(xml, new RegExp(`Location="${lab.server.url}/portal/idp/${provider.id}/acs"`));
    const shown = await lab.server.core.idp.get(lab.accountId, provider.id);
    assert.equal(shown.idp_entity_id, lab.saml.entityId);
    assert.equal(shown.sso_url, `${lab.saml.url}/sso`);
  });

  test("a signed assertion: the gateway hand-off as <provider>:<NameID> in the mapped group", async () => {
    const provider = await lab.samlProvider({ group_mappings: [{ idp_group: "employees", group: "staff" }] });
    const { portal, guest, request } = await started(provider.id);
    assert.equal(request.acs, `${lab.server.url}/portal/idp/${provider.id}/acs`);
    assert.equal(request.issuer, `${lab.server.url}/portal/idp/${provider.id}/metadata`);
    const saml = lab.saml.response({
      request,
      nameId: "u-4711",
      attributes: { email: ["Eve@City.example"], groups: ["employees", "parking"] },
    });
    const answer = await post(guest, provider.id, saml, request.relayState);
    assert.equal(answer.status, 303, await answer.clone().text());
    assert.match(answer.headers.get("location") ?? "", new RegExp(`^/portal/${portal.id}/idp/finish/`));
    const done = await guest.follow(answer);
    const fields = handoffFields(done.text);
    assert.equal(fields.username, `${provider.name}:u-4711`);
    assert.deepEqual(await usersNamed(`${provider.name}:`), [
      { username: `${provider.name}:u-4711`, email: "eve@city.example" },
    ]);
    const groups = await lab.server.core.database.db
      .selectFrom("radusergroup")
      .select("groupname")
      .where("account_id", "=", lab.accountId)
      .where("username", "=", `${provider.name}:u-4711`)
      .execute();
    assert.deepEqual(
      groups.map((g) => g.groupname),
      ["staff"],
    );
    // The same response again: the sign-in it answered was taken once.
    const replay = await post(guest, provider.id, saml, request.relayState);
    assert.equal(replay.status, 410);
  });

  /** A refusal: the page, its status, and no user made. */
  async function refused(
    change: (request: AuthnRequest) => Partial<ResponseOptions> & { raw?: string },
    status = 403,
  ) {
    const provider = await lab.samlProvider();
    const { guest, request } = await started(provider.id);
    const options = change(request);
    const saml = options.raw ?? lab.saml.response({ request, nameId: "victim", ...options });
    const answer = await post(guest, provider.id, saml, request.relayState);
    const text = await answer.text();
    assert.equal(answer.status, status, text.slice(0, 300));
    assert.match(text, /could not confirm who you are|expired or was already used/);
    assert.deepEqual(await usersNamed(`${provider.name}:`), []);
  }

  test("an unsigned assertion, or one signed by another key, is refused", async () => {
    await refused(() => ({ sign: "none" }));
    await refused(() => ({ otherKey: true }));
  });

  test("signature wrapping: a forged assertion beside the signed one is refused", async () => {
    await refused((request) => {
      // The IdP's genuine signed assertion for someone else, kept inside the response's Extensions,
      // and an unsigned assertion for the attacker's choice of user where the SP reads it.
      const genuine = Buffer.from(lab.saml.response({ request, nameId: "someone" }), "base64").toString();
      const signed = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(genuine)?.[0] ?? "";
      const evil = signed
        .replace(/ID="[^"]+"/, 'ID="_evil"')
        .replace(/<ds:Signature[\s\S]*<\/ds:Signature>|<Signature[\s\S]*<\/Signature>/, "")
        .replace(/>someone</, ">admin<");
      const wrapped = genuine.replace(signed, `<samlp:Extensions>${signed}</samlp:Extensions>${evil}`);
      return { raw: Buffer.from(wrapped).toString("base64") };
    });
  });

  test("a response for another SP, another issuer, SHA-1, or expired beyond the skew is refused", async () => {
    await refused(() => ({ audience: "https://other-sp.example/metadata" }));
    await refused(() => ({ issuer: "https://impostor.example/idp" }));
    await refused(() => ({ algorithm: "sha1" }));
    // NotOnOrAfter ten minutes ago: past the two minutes of allowed clock skew.
    await refused(() => ({ notBefore: -1200, notOnOrAfter: -600 }));
    // NotBefore ten minutes ahead (the IdP's clock far in the future).
    await refused(() => ({ notBefore: 600, notOnOrAfter: 900 }));
  });

  test("a forged RelayState, or a response answering no request of ours, is refused", async () => {
    const provider = await lab.samlProvider();
    const { guest, request } = await started(provider.id);
    const saml = lab.saml.response({ request, nameId: "victim" });
    assert.equal((await post(guest, provider.id, saml, "B".repeat(43))).status, 410);
    // The right RelayState with a response to another request (InResponseTo) is refused too.
    const other = lab.saml.response({ request: { ...request, id: "_not-ours" }, nameId: "victim" });
    assert.equal((await post(guest, provider.id, other, request.relayState)).status, 403);
    assert.deepEqual(await usersNamed(`${provider.name}:`), []);
  });
});

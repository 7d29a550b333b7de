// The console's identity provider pages (issue 26 point 1) over HTTP on a started server: list,
// create from a preset (OIDC by form, SAML with its metadata file uploaded), edit with the client
// secret write-only, the service's checks shown next to their fields, delete after confirmation;
// another account's provider is a 404 page; CSRF; password login cannot be turned off from a
// password session.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { startSamlIdp, type TestSamlIdp } from "../support/saml-idp.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "idp-pages@example.com";
const PASSWORD = "idp pages password 123";
const SECRET = "console-oidc-secret-0123456789";

describe("console: identity provider pages", () => {
  let server: TestServer;
  let saml: TestSamlIdp;
  let client: ConsoleClient;
  let accountId: number;
  let theirs: number;

  before(async () => {
    server = await startTestServer({ env: { PUBLIC_URL: "https://wifi.example.org", IDP_ALLOW_HTTP: "1" } });
    saml = await startSamlIdp();
    const account = await server.account("default");
    accountId = account.id;
    await server.core.groups.create(accountId, { name: "staff" });
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    const other = await server.account("idp-pages-other");
    theirs = (
      await server.core.idp.create(other.id, {
        name: "theirs",
        kind: "oidc",
        issuer: "https://login.other.example",
        client_id: "x",
      })
    ).id;
    client = new ConsoleClient(server.url);
    const login = await client.login(EMAIL, PASSWORD);
    assert.equal(login.status, 303, login.text);
  });
  after(async () => {
    await server?.stop();
    await saml?.close();
  });

  /** A multipart form post (the create and edit forms' encoding) with the session's cookies. */
  async function postMultipart(
    path: string,
    fields: Record<string, string>,
    file?: { name: string; text: string },
  ) {
    const form = new FormData();
    form.set("_csrf", client.csrf);
    for (const [name, value] of Object.entries(fields)) form.set(name, value);
    if (file) form.set(file.name, new Blob([file.text], { type: "application/xml" }), "metadata.xml");
    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { cookie },
    });
    return {
      status: response.status,
      location: response.headers.get("location"),
      text: await response.text(),
    };
  }

  const rows = () =>
    server.core.database.db
      .selectFrom("identity_providers")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("id")
      .execute();

  test("the list offers the presets; a preset fills the form", async () => {
    const list = await client.get("/console/identity-providers");
    assert.equal(list.status, 200);
    assert.match(list.text, /href="\/console\/identity-providers" aria-current="page">Identity providers</);
    for (const preset of ["google", "entra", "okta", "saml"])
      assert.match(list.text, new RegExp(`/console/identity-providers/new\\?preset=${preset}"`));
    assert.match(list.text, /No identity providers yet/);
    const okta = await client.get("/console/identity-providers/new?preset=okta");
    assert.match(okta.text, /name="issuer" type="text" value="https:\/\/&lt;your-org&gt;.okta.com"/);
    assert.match(okta.text, /name="scopes" type="text" value="openid email profile groups"/);
    const entra = await client.get("/console/identity-providers/new?preset=entra");
    assert.match(entra.text, /name="user_claim" type="text" value="oid"/);
  });

  test("OIDC: created, the secret never shown, kept on edit, removed on request; errors by field", async () => {
    await client.get("/console/identity-providers/new?preset=google");
    const bad = await client.post("/console/identity-providers", {
      name: "google",
      kind: "oidc",
      display_name: "Google",
      issuer: "ftp://accounts.google.com",
      client_id: "client-1",
      client_secret: SECRET,
      scopes: "openid email",
      user_claim: "sub",
      enabled: "1",
    });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /id="e-issuer">Issuer URL must be an http:\/\/ or https:\/\/ URL/);
    assert.ok(!bad.text.includes(SECRET), "the secret is not sent back in the form");
    const badMap = await client.post("/console/identity-providers", {
      name: "google",
      kind: "oidc",
      issuer: "https://accounts.google.com",
      client_id: "client-1",
      scopes: "openid",
      user_claim: "sub",
      group_mappings: "no equals sign here",
    });
    assert.equal(badMap.status, 400);
    assert.match(badMap.text, /id="e-group_mappings">Group mapping must be lines of/);
    assert.equal((await rows()).length, 0, "nothing written");

    const created = await client.post("/console/identity-providers", {
      name: "google",
      kind: "oidc",
      display_name: "Google",
      issuer: "https://accounts.google.com",
      client_id: "client-1",
      client_secret: SECRET,
      scopes: "openid email profile",
      user_claim: "sub",
      enabled: "1",
      allowed_domains: "uni.example\nstaff.uni.example",
      group_mappings: "staff-all = staff",
    });
    assert.equal(created.status, 303, created.text.slice(0, 400));
    const id = Number(
      /\/console\/identity-providers\/(\d+)\?notice=idp-created/.exec(created.location ?? "")?.[1],
    );
    assert.ok(id > 0, created.location ?? "");
    const page = await client.get(created.location ?? "");
    assert.match(
      page.text,
      new RegExp(`id="redirect-uri">https://wifi.example.org/portal/idp/${id}/callback<`),
    );
    assert.match(page.text, /A client secret is set. Leave empty to keep it/);
    assert.match(page.text, /staff-all = staff/);
    assert.ok(!page.text.includes(SECRET));
    const [row] = await rows();
    assert.equal(row?.allowed_domains, "uni.example,staff.uni.example");
    assert.ok(row?.client_secret && !row.client_secret.includes(SECRET));

    const fields = {
      kind: "oidc",
      display_name: "Google Workspace",
      issuer: "https://accounts.google.com",
      client_id: "client-1",
      scopes: "openid email profile",
      user_claim: "sub",
      enabled: "1",
      group_mappings: "",
    };
    const kept = await client.post(`/console/identity-providers/${id}`, { ...fields, client_secret: "" });
    assert.equal(kept.status, 303, kept.text.slice(0, 400));
    let shown = await server.core.idp.get(accountId, id);
    assert.equal(shown.display_name, "Google Workspace");
    assert.equal(shown.client_secret_set, true);
    assert.deepEqual(shown.group_mappings, []);
    assert.equal(shown.enabled, true);
    await client.get(`/console/identity-providers/${id}`);
    const removed = await client.post(`/console/identity-providers/${id}`, {
      ...fields,
      client_secret_remove: "1",
    });
    assert.equal(removed.status, 303);
    shown = await server.core.idp.get(accountId, id);
    assert.equal(shown.client_secret_set, false);
    // Unchecked "enabled" disables it.
    await client.get(`/console/identity-providers/${id}`);
    const { enabled: _, ...off } = fields;
    await client.post(`/console/identity-providers/${id}`, off);
    assert.equal((await server.core.idp.get(accountId, id)).enabled, false);
  });

  test("SAML: created with an uploaded metadata file; hostile files refused", async () => {
    await client.get("/console/identity-providers/new?preset=saml");
    const xxe = `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${saml.metadata}`;
    const hostile = await postMultipart(
      "/console/identity-providers",
      { name: "city", kind: "saml", display_name: "City", enabled: "1" },
      { name: "metadata_file", text: xxe },
    );
    assert.equal(hostile.status, 400, hostile.text.slice(0, 300));
    assert.match(hostile.text, /id="e-metadata">Metadata must not contain a DOCTYPE/);
    const created = await postMultipart(
      "/console/identity-providers",
      { name: "city", kind: "saml", display_name: "City", enabled: "1", group_attribute: "groups" },
      { name: "metadata_file", text: saml.metadata },
    );
    assert.equal(created.status, 303, created.text.slice(0, 400));
    const page = await client.get(created.location ?? "");
    const id = Number(/identity-providers\/(\d+)/.exec(created.location ?? "")?.[1]);
    assert.match(
      page.text,
      new RegExp(`id="sp-metadata" href="https://wifi.example.org/portal/idp/${id}/metadata"`),
    );
    assert.match(page.text, new RegExp(`<code>${saml.entityId}</code>`));
    // Edited without a new file: the metadata stays.
    const edited = await postMultipart(`/console/identity-providers/${id}`, {
      kind: "saml",
      display_name: "City SSO",
      enabled: "1",
      metadata_url: "",
    });
    assert.equal(edited.status, 303, edited.text.slice(0, 400));
    const shown = await server.core.idp.get(accountId, id);
    assert.equal(shown.display_name, "City SSO");
    assert.equal(shown.idp_entity_id, saml.entityId);
  });

  test("a portal's form offers the account's providers for the idp method", async () => {
    const { network } = await server.core.networks.create(accountId, {
      name: "idp lobby",
      nas_ip: "192.0.2.44",
    });
    const [google, city] = await rows();
    const form = await client.get("/console/portals/new");
    assert.match(form.text, new RegExp(`name="identity_providers" value="${google?.id}"`));
    assert.doesNotMatch(
      form.text,
      new RegExp(`name="identity_providers" value="${theirs}"`),
      "only this account's",
    );
    // The new-portal form's own defaults (its text fields), as a browser would send them back.
    const defaults = Object.fromEntries(
      [...form.text.matchAll(/<input id="f-\w+" name="(\w+)" type="text" value="([^"]*)"/g)].map((m) => [
        m[1] ?? "",
        (m[2] ?? "").replace(/&amp;/g, "&"),
      ]),
    );
    const base = {
      ...defaults,
      name: "IdP portal",
      network_id: String(network.id),
      vendor: "mikrotik",
      language: "auto",
    };
    const none = await client.post("/console/portals", { ...base, methods: "idp" });
    assert.equal(none.status, 400);
    assert.match(none.text, /Identity providers must name at least one provider/);
    await client.get("/console/portals/new");
    const foreign = await client.post("/console/portals", {
      ...base,
      methods: "idp",
      identity_providers: String(theirs),
    });
    assert.equal(foreign.status, 400);
    assert.match(foreign.text, /must name identity providers of this account/);
    await client.get("/console/portals/new");
    const made = await client.post("/console/portals", {
      ...base,
      methods: "idp",
      identity_providers: [String(city?.id)],
    });
    assert.equal(made.status, 303, made.text.slice(0, 500));
    const portal = (
      await server.core.portals.list(accountId, { search: "IdP portal" }, { page: 1, limit: 5 })
    ).data[0];
    assert.deepEqual(portal?.identity_providers, [city?.id]);
    const edit = await client.get(`/console/portals/${portal?.id}/edit`);
    assert.match(edit.text, new RegExp(`name="identity_providers" value="${city?.id}" checked`));
    // The provider cannot be deleted while the portal offers it.
    await client.get(`/console/identity-providers/${city?.id}/delete`);
    const refused = await client.post(`/console/identity-providers/${city?.id}/delete`);
    assert.equal(refused.status, 409);
    assert.match(refused.text, /offered by the captive portal/);
    await server.core.portals.delete(accountId, portal?.id ?? 0);
  });

  test("another account's provider is a 404 page; CSRF is checked; delete after confirmation", async () => {
    for (const path of [
      `/console/identity-providers/${theirs}`,
      `/console/identity-providers/${theirs}/delete`,
    ])
      assert.equal((await client.get(path)).status, 404);
    await client.get("/console/identity-providers");
    assert.equal((await client.post(`/console/identity-providers/${theirs}/delete`)).status, 404);
    assert.equal(
      (await client.post(`/console/identity-providers/${theirs}`, { display_name: "x" })).status,
      404,
    );
    assert.ok(await server.core.idp.get((await server.account("idp-pages-other")).id, theirs));

    const [first] = await rows();
    const confirm = await client.get(`/console/identity-providers/${first?.id}/delete`);
    assert.match(confirm.text, /Delete identity provider/);
    const forged = await client.post(
      `/console/identity-providers/${first?.id}/delete`,
      {},
      { csrf: "forged" },
    );
    assert.equal(forged.status, 403);
    assert.ok(await server.core.idp.get(accountId, first?.id ?? 0));
    const deleted = await client.post(`/console/identity-providers/${first?.id}/delete`);
    assert.equal(deleted.status, 303);
    assert.equal(deleted.location, "/console/identity-providers?notice=idp-deleted");
    assert.equal((await client.get(`/console/identity-providers/${first?.id}`)).status, 404);
  });

  test("password login cannot be turned off from a password session", async () => {
    const list = await client.get("/console/identity-providers");
    assert.match(list.text, /first log in through one of this account's providers/);
    const off = await client.post("/console/identity-providers/password-login", { password_login: "off" });
    assert.equal(off.status, 409);
    assert.match(off.text, /log in through single sign-on first/);
    assert.equal(await server.core.consoleSso.passwordLogin(accountId), true);
  });
});

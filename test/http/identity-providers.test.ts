// /api/identityproviders (issue 26 point 1) over HTTP on a started server, on each dialect: create
// OIDC and SAML providers (metadata uploaded or read from the test SAML IdP's address), list, get,
// update, delete; the client secret is write-only (never in an answer, sealed in the database);
// the service's input checks (hostile metadata, bad issuer URLs, unknown groups...) answer 400 and
// write nothing; permissions; another account's provider is 404.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { dialects } from "../support/databases.ts";
import { startSamlIdp, type TestSamlIdp } from "../support/saml-idp.ts";
import { type ApiResponse, startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "oidc-client-secret-0123456789abcdef";

for (const { dialect, skip } of await dialects()) {
  describe(`identity providers API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let saml: TestSamlIdp;
    let key: string;
    let otherKey: string;
    let accountId: number;
    let slow: http.Server;
    let slowUrl: string;

    /** A call whose raw answer is checked for the client secret. */
    async function call(method: string, path: string, body?: unknown, as = key): Promise<ApiResponse> {
      const res = await server.call(method, path, { key: as, body });
      assert.ok(!res.text.includes(SECRET), `${method} ${path} leaked the client secret`);
      if (res.status < 300)
        assert.ok(!res.text.includes('"client_secret"'), `${method} ${path} has a client_secret field`);
      return res;
    }

    /** A 400 naming the field, and no provider more than before. */
    async function refused(body: Record<string, unknown>, field: string, message?: RegExp) {
      const before = (await call("GET", "/api/identityproviders")).body.total;
      const res = await call("POST", "/api/identityproviders", body);
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 200)}: ${res.text.slice(0, 300)}`);
      assert.equal(res.body.details?.[0]?.field, field, res.text);
      if (message) assert.match(res.body.message, message);
      assert.equal((await call("GET", "/api/identityproviders")).body.total, before, "nothing written");
      return res;
    }

    const oidc = (name: string, extra: Record<string, unknown> = {}) => ({
      name,
      kind: "oidc",
      display_name: "Campus ID",
      issuer: "https://login.example.edu/",
      client_id: "wisp",
      client_secret: SECRET,
      ...extra,
    });

    before(async () => {
      server = await startTestServer({
        dialect,
        env: { PUBLIC_URL: "https://wifi.example.org", IDP_ALLOW_HTTP: "1" },
      });
      saml = await startSamlIdp();
      key = await server.key("default", { rateLimit: 100_000 });
      otherKey = await server.key("idp-other", { rateLimit: 100_000 });
      accountId = (await server.account("default")).id;
      await server.core.groups.create(accountId, { name: "staff" });
      // An address that accepts the connection and never answers.
      slow = http.createServer(() => {});
      await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
      slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/metadata`;
    });
    after(async () => {
      await server?.stop();
      await saml?.close();
      slow?.closeAllConnections();
      slow?.close();
    });

    test("OIDC: created with a write-only secret, listed, read, updated, secret removed", async () => {
      const created = await call("POST", "/api/identityproviders", {
        ...oidc("campus"),
        allowed_domains: ["Uni.Example", "@staff.uni.example"],
        group_claim: "groups",
        group_mappings: [{ idp_group: "staff-all", group: "staff" }],
      });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id;
      assert.equal(created.headers.get("location"), `/api/identityproviders/${id}`);
      assert.deepEqual(
        {
          name: created.body.name,
          kind: created.body.kind,
          enabled: created.body.enabled,
          issuer: created.body.issuer,
          client_secret_set: created.body.client_secret_set,
          scopes: created.body.scopes,
          user_claim: created.body.user_claim,
          allowed_domains: created.body.allowed_domains,
          redirect_uri: created.body.redirect_uri,
          group_mappings: created.body.group_mappings,
          console_login: created.body.console_login,
        },
        {
          name: "campus",
          kind: "oidc",
          enabled: true,
          issuer: "https://login.example.edu",
          client_secret_set: true,
          scopes: "openid email profile",
          user_claim: "sub",
          allowed_domains: ["uni.example", "staff.uni.example"],
          redirect_uri: `https://wifi.example.org/portal/idp/${id}/callback`,
          group_mappings: [{ idp_group: "staff-all", group: "staff" }],
          console_login: false,
        },
      );
      // Sealed at rest: the column holds no plaintext.
      const row = await server.core.database.db
        .selectFrom("identity_providers")
        .select("client_secret")
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirstOrThrow();
      assert.ok(row.client_secret.length > 0 && !row.client_secret.includes(SECRET));

      assert.deepEqual((await call("GET", `/api/identityproviders/${id}`)).body, created.body);
      const list = await call("GET", "/api/identityproviders");
      assert.deepEqual(
        { page: list.body.page, limit: list.body.limit, total: list.body.total },
        { page: 1, limit: 50, total: 1 },
      );
      assert.deepEqual(list.body.data[0], created.body);

      const put = await call("PUT", `/api/identityproviders/${id}`, {
        display_name: "University login",
        scopes: " openid   email groups ",
        group_mappings: [],
      });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.display_name, "University login");
      assert.equal(put.body.scopes, "openid email groups");
      assert.deepEqual(put.body.group_mappings, []);
      assert.equal(put.body.client_secret_set, true, "a secret not sent is kept");
      assert.equal(put.body.issuer, "https://login.example.edu", "fields not sent are kept");
      const patch = await call("PATCH", `/api/identityproviders/${id}`, {
        client_secret: "",
        enabled: false,
      });
      assert.equal(patch.status, 200, patch.text);
      assert.equal(patch.body.client_secret_set, false);
      assert.equal(patch.body.enabled, false);
      // Name and kind are fixed; unchanged values are accepted.
      assert.equal((await call("PUT", `/api/identityproviders/${id}`, { name: "campus" })).status, 200);
      const rename = await call("PUT", `/api/identityproviders/${id}`, { name: "other" });
      assert.equal(rename.status, 400);
      assert.equal(rename.body.details[0].field, "name");
      assert.equal((await call("PUT", `/api/identityproviders/${id}`, { kind: "saml" })).status, 400);
      assert.equal((await call("PUT", `/api/identityproviders/${id}`, { colour: "red" })).status, 400);
      const dup = await call("POST", "/api/identityproviders", oidc("campus"));
      assert.equal(dup.status, 409, dup.text);
    });

    test("SAML: metadata uploaded or read from the IdP's address; Wisp's SP addresses", async () => {
      const uploaded = await call("POST", "/api/identityproviders", {
        name: "city",
        kind: "saml",
        metadata: saml.metadata,
        group_attribute: "groups",
      });
      assert.equal(uploaded.status, 201, uploaded.text);
      const id = uploaded.body.id;
      assert.equal(uploaded.body.display_name, "city", "the name when no display name is given");
      assert.equal(uploaded.body.idp_entity_id, saml.entityId);
      assert.equal(uploaded.body.sso_url, `${saml.url}/sso`);
      assert.equal(uploaded.body.redirect_uri, `https://wifi.example.org/portal/idp/${id}/acs`);
      assert.equal(uploaded.body.sp_metadata_url, `https://wifi.example.org/portal/idp/${id}/metadata`);
      assert.equal(uploaded.body.metadata, undefined, "the metadata itself is not echoed");
      const fromUrl = await call("POST", "/api/identityproviders", {
        name: "city-url",
        kind: "saml",
        metadata_url: `${saml.url}/metadata`,
      });
      assert.equal(fromUrl.status, 201, fromUrl.text);
      assert.equal(fromUrl.body.metadata_url, `${saml.url}/metadata`);
      assert.equal(fromUrl.body.idp_entity_id, saml.entityId);
      // A SAML provider needs metadata.
      await refused({ name: "no-meta", kind: "saml" }, "metadata", /metadata_url is required/);
    });

    test("hostile or broken metadata is refused with the reason, nothing written", async () => {
      const saml1 = (metadata: string) => ({ name: "bad-meta", kind: "saml", metadata });
      const xxe =
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>' +
        saml.metadata.replace(saml.entityId, "&e;");
      await refused(saml1(xxe), "metadata", /DOCTYPE/);
      await refused(
        saml1('<!DOCTYPE lol [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><x>&b;</x>'),
        "metadata",
        /DOCTYPE/,
      );
      await refused(saml1("this is not xml <"), "metadata", /well-formed|IDPSSODescriptor/);
      await refused(saml1("<x/>"), "metadata", /IDPSSODescriptor/);
      const twice = saml.metadata.replace(/(<md:IDPSSODescriptor[\s\S]*<\/md:IDPSSODescriptor>)/, "$1$1");
      await refused(saml1(twice), "metadata", /exactly one IdP/);
      await refused(
        saml1(saml.metadata.replace(/<md:KeyDescriptor[\s\S]*<\/md:KeyDescriptor>/, "")),
        "metadata",
        /signing certificate/,
      );
      await refused(
        saml1(saml.metadata.replace(`${saml.url}/sso`, "javascript:alert(1)")),
        "metadata",
        /SingleSignOnService/,
      );
      await refused(saml1(saml.metadata.replace(/entityID="[^"]+"/, 'entityID=""')), "metadata", /entityID/);
      // Over the API's schema limit (512 KiB): refused before the service.
      const huge = await call("POST", "/api/identityproviders", saml1(`<x>${"a".repeat(530 * 1024)}</x>`));
      assert.equal(huge.status, 400);
      // A metadata address that answers 404, that nobody listens on, or that never answers (bounded wait).
      await refused(
        { name: "bad-url", kind: "saml", metadata_url: `${saml.url}/nothing` },
        "metadata_url",
        /HTTP 404/,
      );
      await refused(
        { name: "bad-url", kind: "saml", metadata_url: "http://127.0.0.1:9/metadata" },
        "metadata_url",
        /did not answer/,
      );
      const started = Date.now();
      await refused({ name: "bad-url", kind: "saml", metadata_url: slowUrl }, "metadata_url", /in time/);
      assert.ok(Date.now() - started < 15_000, "the wait is bounded");
    });

    test("bad OIDC fields: issuer URLs, scopes, claims, domains, names, unknown groups", async () => {
      for (const issuer of [
        "not a url",
        "ftp://login.example.edu",
        "javascript:alert(1)",
        "https://user:pw@login.example.edu",
        "https://login.example.edu/#frag",
        `https://login.example.edu/${"a".repeat(2100)}`,
        "https://login.example.edu/\u0000",
      ])
        await refused(oidc("bad", { issuer }), "issuer");
      await refused(oidc("bad", { issuer: "" }), "issuer", /required/);
      await refused(oidc("bad", { client_id: "" }), "client_id", /required/);
      await refused(oidc("bad", { client_id: "a\nb" }), "client_id");
      await refused(oidc("bad", { scopes: "email profile" }), "scopes", /openid/);
      await refused(oidc("bad", { user_claim: "has space" }), "user_claim");
      await refused(oidc("bad", { allowed_domains: ["not a domain"] }), "allowed_domains");
      await refused(oidc("bad", { admin_domains: ["example"] }), "admin_domains");
      await refused(oidc("bad", { client_secret: "tab\there" }), "client_secret");
      await refused(oidc("bad", { display_name: "two\nlines" }), "display_name");
      await refused(oidc("Bad_Name"), "name");
      await refused(oidc("bad", { kind: "ldap" }), "kind");
      await refused(
        oidc("bad", { group_mappings: [{ idp_group: "x", group: "no-such-group" }] }),
        "group_mappings",
        /no-such-group is not a group/,
      );
      await refused(
        oidc("bad", {
          group_mappings: [
            { idp_group: "x", group: "staff" },
            { idp_group: "x", group: "staff" },
          ],
        }),
        "group_mappings",
      );
    });

    test("permissions: identityproviders:read reads, :write writes, others are refused", async () => {
      const reader = await server.key("default", { permissions: "identityproviders:read" });
      const writer = await server.key("default", { permissions: "identityproviders:write" });
      const readAll = await server.key("default", { permissions: "read" });
      const users = await server.key("default", { permissions: "users:write" });
      assert.equal((await call("GET", "/api/identityproviders", undefined, reader)).status, 200);
      assert.equal((await call("GET", "/api/identityproviders", undefined, readAll)).status, 200);
      for (const k of [reader, readAll]) {
        const res = await call("POST", "/api/identityproviders", oidc("perm"), k);
        assert.equal(res.status, 403);
        assert.match(res.body.message, /identityproviders:write/);
      }
      assert.equal((await call("GET", "/api/identityproviders", undefined, users)).status, 403);
      const made = await call("POST", "/api/identityproviders", oidc("perm"), writer);
      assert.equal(made.status, 201, made.text);
      assert.equal(
        (await call("DELETE", `/api/identityproviders/${made.body.id}`, undefined, writer)).status,
        204,
      );
    });

    test("another account's provider is 404 to read, change and delete; lists are per account", async () => {
      const mine = await call("POST", "/api/identityproviders", oidc("mine"));
      assert.equal(mine.status, 201);
      const path = `/api/identityproviders/${mine.body.id}`;
      assert.equal((await call("GET", path, undefined, otherKey)).status, 404);
      assert.equal((await call("PUT", path, { display_name: "taken" }, otherKey)).status, 404);
      assert.equal((await call("DELETE", path, undefined, otherKey)).status, 404);
      assert.equal((await call("GET", "/api/identityproviders", undefined, otherKey)).body.total, 0);
      assert.equal((await call("GET", path)).body.display_name, "Campus ID", "unchanged");
      assert.equal((await call("GET", "/api/identityproviders/999999")).status, 404);
      assert.equal((await call("GET", "/api/identityproviders/abc")).status, 400);
    });

    test("delete: 204, then 404; refused while a portal offers the provider", async () => {
      const made = await call("POST", "/api/identityproviders", oidc("gone"));
      const { network } = await server.core.networks.create(accountId, {
        name: "idp-net",
        nas_ip: "192.0.2.9",
      });
      const portal = await server.core.portals.create(accountId, {
        name: "offers it",
        network_id: network.id,
        methods: ["idp"],
        identity_providers: [made.body.id],
      });
      const offered = await call("DELETE", `/api/identityproviders/${made.body.id}`);
      assert.equal(offered.status, 409, offered.text);
      assert.match(offered.body.message, /offered by the captive portal/);
      const shown = await call("GET", `/api/captiveportals/${portal.id}`);
      assert.deepEqual(shown.body.identity_providers, [made.body.id]);
      await server.core.portals.update(accountId, portal.id, {
        methods: ["clickthrough"],
        identity_providers: [],
      });
      assert.equal((await call("DELETE", `/api/identityproviders/${made.body.id}`)).status, 204);
      assert.equal((await call("GET", `/api/identityproviders/${made.body.id}`)).status, 404);
      assert.equal((await call("DELETE", `/api/identityproviders/${made.body.id}`)).status, 404);
    });

    test("the OpenAPI document describes the resource without a readable secret", async () => {
      const doc = (await server.call("GET", "/api/openapi.json")).body;
      assert.ok(doc.paths["/api/identityproviders"]?.post);
      assert.ok(doc.paths["/api/identityproviders/{provider_id}"]?.delete);
      const schema = doc.components.schemas.IdentityProvider;
      assert.ok(schema.properties.client_secret_set);
      assert.equal(schema.properties.client_secret, undefined);
    });
  });
}

// Without IDP_ALLOW_HTTP an operator's IdP addresses are reached like webhooks: https to public
// addresses only, so metadata_url and an OIDC issuer cannot aim the server at its own network.
describe("identity provider addresses are SSRF-guarded without IDP_ALLOW_HTTP", () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer({ env: { PUBLIC_URL: "https://wifi.example.org" } });
    key = await server.key("default", { rateLimit: 100_000 });
  });
  after(async () => server?.stop());

  test("SAML metadata_url on a loopback or private address is refused and nothing is written", async () => {
    for (const [url, reason] of [
      [
        "https://127.0.0.1:8443/metadata",
        /127\.0\.0\.1 is a loopback address \(IDP_ALLOW_HTTP=1 allows it\)/,
      ],
      ["https://localhost:8443/metadata", /localhost resolves to a private or reserved address/],
      ["https://169.254.169.254/latest/meta-data", /metadata/],
      ["https://[::ffff:10.0.0.1]/metadata", /private/],
    ] as const) {
      const res = await server.call("POST", "/api/identityproviders", {
        key,
        body: { name: "guarded", kind: "saml", metadata_url: url },
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.details?.[0]?.field, "metadata_url", res.text);
      assert.match(res.body.message, reason);
    }
    assert.equal((await server.call("GET", "/api/identityproviders", { key })).body.total, 0);
  });

  test("an OIDC issuer on a loopback address fails discovery with the refusal, no connection made", async () => {
    const listener = http.createServer((_req, res) => res.end("{}"));
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    let connections = 0;
    listener.on("connection", () => connections++);
    const port = (listener.address() as AddressInfo).port;
    try {
      const accountId = (await server.account("default")).id;
      const made = await server.core.idp.create(accountId, {
        name: "loop",
        kind: "oidc",
        issuer: `https://127.0.0.1:${port}/`,
        client_id: "wisp",
        client_secret: SECRET,
      });
      const row = await server.core.idp.row(accountId, made.id);
      await assert.rejects(
        server.core.idpSignIn.start(row, { kind: "console" }),
        /idp_unreachable: discovery at https:\/\/127\.0\.0\.1:\d+\/? failed: .*loopback address \(IDP_ALLOW_HTTP=1 allows it\)/,
      );
      assert.equal(connections, 0);
    } finally {
      listener.close();
    }
  });
});

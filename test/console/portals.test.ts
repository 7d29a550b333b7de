// The console's portal form over plain HTTP (no JavaScript): every field of the model, field
// errors next to their fields, the UAM secret write-only (never echoed back).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { GIF, HTML_AS_PNG, JPEG, png, WEBP } from "./logo-fixtures.ts";

const EMAIL = "portals@example.com";
const PASSWORD = "a long enough password";
const SECRET = "uam-Secret-9f3k2";

export const FULL = {
  name: "Lobby portal",
  success_url: "https://example.org/welcome",
  enabled: "1",
  vendor: "coovachilli",
  uam_secret: SECRET,
  uam_auth: "pap",
  title: "Café <Wi-Fi>",
  welcome_text: "Hello & welcome.\n\nSecond paragraph.",
  terms: "Be nice.",
  methods: ["voucher", "password"],
  language: "fr",
  color_primary: "#AA3300",
  color_background: "#fafafa",
  generic_login_param: "switch_url",
  generic_username_field: "user",
  generic_password_field: "pass",
  generic_redirect_field: "redirect_url",
  generic_extra_fields: "accept=Continue&zone=$zone",
  allowed_gateways: "HotSpot.lan, 10.1.0.0/24\n",
  clickthrough_validity: "7200",
  clickthrough_session_timeout: "1800",
  registration_validity: "172800",
  guest_group_id: "",
};

/** Posts a multipart form (a browser's file upload) with the client's cookies. */
async function upload(
  client: ConsoleClient,
  path: string,
  file: { name: string; type: string; data: Buffer } | null,
  csrf = client.csrf,
) {
  const body = new FormData();
  body.set("_csrf", csrf);
  if (file) body.set("logo", new Blob([new Uint8Array(file.data)], { type: file.type }), file.name);
  const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  const res = await fetch(`${client.base}${path}`, {
    method: "POST",
    body,
    headers: { cookie },
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

for (const { dialect, skip } of await dialects()) {
  describe(`console portal form on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let client: ConsoleClient;
    let networkId = 0;
    let accountId = 0;

    before(async () => {
      server = await startTestServer({ dialect });
      const account = await server.account("default");
      accountId = account.id;
      await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
      networkId = (await server.core.networks.create(account.id, { name: "Lobby", nas_ip: "10.1.0.0/24" }))
        .network.id;
      client = new ConsoleClient(server.url);
      assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
    });
    after(() => server?.stop());

    test("the new-portal form has every field, with the model's defaults", async () => {
      const page = await client.get("/console/portals/new");
      assert.equal(page.status, 200);
      for (const name of Object.keys(FULL)) assert.match(page.text, new RegExp(`name="${name}"`), name);
      assert.match(page.text, /name="color_primary" type="text" value="#1b5e9e"/);
      assert.match(page.text, /<option value="generic" selected>/);
      assert.match(page.text, /name="methods" value="voucher" checked/);
    });

    test("create and edit with every field; the UAM secret is never echoed", async () => {
      await client.get("/console/portals/new");
      const created = await client.post("/console/portals", { ...FULL, network_id: String(networkId) });
      assert.equal(created.status, 303, created.text);
      const portal = (
        await server.core.portals.list(accountId, { search: "Lobby portal" }, { page: 1, limit: 5 })
      ).data[0];
      assert.ok(portal);
      assert.equal(portal.vendor, "coovachilli");
      assert.equal(portal.uam_secret_set, true);
      assert.equal(portal.title, "Café <Wi-Fi>");
      assert.equal(portal.welcome_text, "Hello & welcome.\n\nSecond paragraph.");
      assert.deepEqual(portal.methods, ["voucher", "password"]);
      assert.equal(portal.language, "fr");
      assert.equal(portal.color_primary, "#aa3300");
      assert.equal(portal.generic_login_param, "switch_url");
      assert.equal(portal.generic_redirect_field, "redirect_url");
      assert.equal(portal.uam_auth, "pap");
      assert.equal(portal.generic_extra_fields, "accept=Continue&zone=$zone");
      assert.deepEqual(portal.allowed_gateways, ["hotspot.lan", "10.1.0.0/24"]);
      assert.equal(portal.enabled, true);

      const edit = await client.get(`/console/portals/${portal.id}/edit`);
      assert.equal(edit.status, 200);
      assert.doesNotMatch(edit.text, new RegExp(SECRET));
      assert.match(edit.text, /Replace UAM secret/);
      assert.match(edit.text, /value="Café &lt;Wi-Fi&gt;"/, "escaped");
      assert.match(edit.text, /<option value="fr" selected>/);
      assert.match(edit.text, /<option value="pap" selected>/);
      assert.match(edit.text, /value="accept=Continue&amp;zone=\$zone"/);
      assert.match(edit.text, /name="allowed_gateways" rows="2">hotspot\.lan\n10\.1\.0\.0\/24<\/textarea>/);

      // Blank secret keeps the stored one; unticked boxes turn things off.
      const { enabled: _e, uam_secret: _s, ...rest } = FULL;
      const saved = await client.post(`/console/portals/${portal.id}`, {
        ...rest,
        network_id: String(networkId),
        title: "New title",
        methods: ["password"],
      });
      assert.equal(saved.status, 303, saved.text);
      const after1 = await server.core.portals.get(accountId, portal.id);
      assert.equal(after1.title, "New title");
      assert.equal(after1.enabled, false);
      assert.equal(after1.uam_secret_set, true, "a blank secret field keeps the secret");
      assert.deepEqual(after1.methods, ["password"]);

      // A refused save shows the page again without the secret typed.
      await client.get(`/console/portals/${portal.id}/edit`);
      const refused = await client.post(`/console/portals/${portal.id}`, {
        ...rest,
        network_id: String(networkId),
        uam_secret: "another-Secret-x",
        color_primary: "red",
      });
      assert.equal(refused.status, 400);
      assert.doesNotMatch(refused.text, /another-Secret-x/);
      assert.match(refused.text, /id="e-color_primary">Button colour must be a hex colour/);

      // A bad gateway entry: named next to its field, as typed, and nothing of the save written.
      await client.get(`/console/portals/${portal.id}/edit`);
      const badGateway = await client.post(`/console/portals/${portal.id}`, {
        ...rest,
        network_id: String(networkId),
        title: "Not saved",
        allowed_gateways: "hotspot.lan\nhttps://evil.example/collect",
      });
      assert.equal(badGateway.status, 400);
      assert.match(
        badGateway.text,
        /id="e-allowed_gateways">Allowed gateway addresses &quot;https:\/\/evil\.example\/collect&quot; is a URL; give its host alone/,
      );
      assert.match(badGateway.text, />hotspot\.lan\nhttps:\/\/evil\.example\/collect<\/textarea>/);
      const unchanged = await server.core.portals.get(accountId, portal.id);
      assert.equal(unchanged.title, "New title");
      assert.deepEqual(unchanged.allowed_gateways, ["hotspot.lan", "10.1.0.0/24"]);

      // Switching to the generic vendor and removing the secret.
      await client.get(`/console/portals/${portal.id}/edit`);
      const generic = await client.post(`/console/portals/${portal.id}`, {
        ...rest,
        network_id: String(networkId),
        vendor: "generic",
        uam_secret_remove: "1",
      });
      assert.equal(generic.status, 303, generic.text);
      assert.equal((await server.core.portals.get(accountId, portal.id)).uam_secret_set, false);
    });

    test("click-through and registration settings, with the guest group, are set from the form", async () => {
      const group = await server.core.groups.create(accountId, { name: "form-guests" });
      await client.get("/console/portals/new");
      const page = await client.get("/console/portals/new");
      assert.match(page.text, new RegExp(`<option value="${group.id}">form-guests</option>`));
      const { uam_secret: _s, ...rest } = FULL;
      const created = await client.post("/console/portals", {
        ...rest,
        name: "Guest portal",
        vendor: "mikrotik",
        network_id: String(networkId),
        methods: ["clickthrough", "registration"],
        guest_group_id: String(group.id),
      });
      assert.equal(created.status, 303, created.text);
      const portal = (
        await server.core.portals.list(accountId, { search: "Guest portal" }, { page: 1, limit: 5 })
      ).data[0];
      assert.ok(portal);
      assert.deepEqual(portal.methods, ["clickthrough", "registration"]);
      assert.equal(portal.clickthrough_validity, 7200);
      assert.equal(portal.clickthrough_session_timeout, 1800);
      assert.equal(portal.registration_validity, 172800);
      assert.equal(portal.guest_group_id, group.id);
      const edit = await client.get(`/console/portals/${portal.id}/edit`);
      assert.match(edit.text, new RegExp(`<option value="${group.id}" selected>`));

      await client.get(`/console/portals/${portal.id}/edit`);
      const refused = await client.post(`/console/portals/${portal.id}`, {
        ...rest,
        name: "Guest portal",
        vendor: "mikrotik",
        network_id: String(networkId),
        methods: ["registration"],
        clickthrough_validity: "soon",
        guest_group_id: "",
      });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /id="e-clickthrough_validity">/);
      assert.equal(
        (await server.core.portals.get(accountId, portal.id)).clickthrough_validity,
        7200,
        "nothing saved",
      );
    });

    test("server-side errors are shown next to each field, with what was typed", async () => {
      await client.get("/console/portals/new");
      const res = await client.post("/console/portals", {
        ...FULL,
        network_id: String(networkId),
        name: "Bad one",
        vendor: "cisco",
        title: "x".repeat(101),
        methods: [],
        language: "de",
        color_background: "#12345",
        generic_username_field: "has space",
        success_url: "javascript:alert(1)",
        allowed_gateways: "10.0.0.0/33",
      });
      assert.equal(res.status, 400);
      assert.doesNotMatch(res.text, new RegExp(SECRET));
      for (const field of [
        "vendor",
        "title",
        "methods",
        "language",
        "color_background",
        "generic_username_field",
        "success_url",
        "allowed_gateways",
      ]) {
        assert.match(res.text, new RegExp(`id="e-${field}"`), field);
      }
      assert.match(res.text, /value="Bad one"/);
      const missing = await client.post("/console/portals", {
        ...FULL,
        uam_secret: "",
        network_id: String(networkId),
      });
      assert.equal(missing.status, 400);
      assert.match(missing.text, /id="e-uam_secret">Set UAM secret is required when vendor is coovachilli/);
    });

    test("logo: PNG, JPEG and WebP accepted by their bytes, others refused next to the field, removable", async () => {
      const portal = await server.core.portals.create(accountId, {
        name: "Logo portal",
        network_id: networkId,
      });
      const path = `/console/portals/${portal.id}/logo`;
      const edit = await client.get(`/console/portals/${portal.id}/edit`);
      assert.match(edit.text, /enctype="multipart\/form-data"/);
      assert.match(edit.text, /No logo/);

      const image = png(24, 16, [200, 40, 10]);
      for (const [name, type, data, expected] of [
        ["logo.png", "image/png", image, "image/png"],
        ["photo.jpg", "image/jpeg", JPEG, "image/jpeg"],
        // The client's name and type are not what decides.
        ["logo.bin", "application/octet-stream", WEBP, "image/webp"],
      ] as const) {
        await client.get(`/console/portals/${portal.id}/edit`);
        const res = await upload(client, path, { name, type, data });
        assert.equal(res.status, 303, res.text);
        assert.equal(res.location, `/console/portals/${portal.id}/edit?notice=logo-uploaded`);
        const page = await client.get(`/console/portals/${portal.id}/edit`);
        assert.match(page.text, new RegExp(`${expected.replace("/", "\\/")}, 24 × 16 pixels`));
        const shown = await client.get(`/console/portals/${portal.id}/logo`);
        assert.equal(shown.headers.get("content-type"), expected);
        const served = await fetch(`${server.url}/portal/${portal.id}/logo`);
        assert.equal(served.headers.get("content-type"), expected);
        assert.equal(served.headers.get("x-content-type-options"), "nosniff");
        assert.match(served.headers.get("content-security-policy") ?? "", /default-src 'none'/);
        assert.ok(served.headers.get("etag"));
        assert.deepEqual(Buffer.from(await served.arrayBuffer()), data);
      }

      for (const [what, file, message] of [
        [
          "a GIF",
          { name: "a.gif", type: "image/gif", data: GIF },
          /must be a complete PNG, JPEG or WebP image/,
        ],
        [
          "HTML named .png",
          { name: "x.png", type: "image/png", data: HTML_AS_PNG },
          /must be a complete PNG/,
        ],
        [
          "600 KB",
          { name: "big.png", type: "image/png", data: png(8, 8, [0, 0, 0], 600 * 1024) },
          /at most 512 KB/,
        ],
        [
          "a truncated PNG",
          { name: "cut.png", type: "image/png", data: image.subarray(0, 60) },
          /complete PNG/,
        ],
        ["no file", null, /must be a file/],
      ] as const) {
        await client.get(`/console/portals/${portal.id}/edit`);
        const res = await upload(client, path, file);
        assert.equal(res.status, 400, what);
        assert.match(res.text, /id="e-logo">Logo /, what);
        assert.match(res.text, message, what);
        assert.match(res.text, /aria-invalid="true"/, what);
      }
      // The last good one (the WebP) is still there.
      assert.equal(
        (await fetch(`${server.url}/portal/${portal.id}/logo`)).headers.get("content-type"),
        "image/webp",
      );

      // CSRF is checked for multipart posts too.
      const forged = await upload(
        client,
        path,
        { name: "a.png", type: "image/png", data: image },
        "x".repeat(43),
      );
      assert.equal(forged.status, 403);

      await client.get(`/console/portals/${portal.id}/edit`);
      const removed = await client.post(`/console/portals/${portal.id}/logo/delete`);
      assert.equal(removed.status, 303);
      assert.equal((await fetch(`${server.url}/portal/${portal.id}/logo`)).status, 404);
      assert.match((await client.get(`/console/portals/${portal.id}/edit`)).text, /No logo/);
    });

    test("preview: renders unsaved values escaped, saves nothing, needs the CSRF token, framable by the console only", async () => {
      const portal = await server.core.portals.create(accountId, {
        name: "Preview portal",
        network_id: networkId,
      });
      const edit = await client.get(`/console/portals/${portal.id}/edit`);
      assert.match(
        edit.text,
        /<iframe class="portal-preview" name="portal-preview"[^>]* sandbox="allow-same-origin" src="\/console\/portals\/\d+\/preview">/,
      );
      assert.match(edit.text, /formtarget="portal-preview" formnovalidate/);
      assert.equal(edit.headers.get("x-frame-options"), "DENY", "the console itself stays unframable");

      const stored = await client.get(`/console/portals/${portal.id}/preview`);
      assert.equal(stored.status, 200);
      assert.match(stored.text, /<h1>Preview portal<\/h1>/);

      const { uam_secret: _s, ...rest } = FULL;
      const res = await client.post(`/console/portals/${portal.id}/preview`, {
        ...rest,
        network_id: String(networkId),
        title: '<script>alert("x")</script>',
        welcome_text: "<b>bold</b>",
        color_primary: "#00aa11",
        language: "es",
      });
      assert.equal(res.status, 200);
      assert.match(res.text, /<h1>&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;<\/h1>/);
      assert.doesNotMatch(res.text, /<script>alert/);
      assert.doesNotMatch(res.text, /<b>bold/);
      assert.match(res.text, /colors\.css\?p=00aa11&amp;b=fafafa/);
      assert.match(res.text, /<html lang="es">/);
      assert.equal(res.headers.get("x-frame-options"), "SAMEORIGIN");
      const csp = res.headers.get("content-security-policy") ?? "";
      assert.match(csp, /frame-ancestors 'self'/);
      assert.match(csp, /script-src 'none'/);
      assert.match(csp, /form-action 'none'/);
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.equal((await server.core.portals.get(accountId, portal.id)).title, "", "nothing was saved");

      // Bad values preview as the defaults; the new-portal preview works without an id.
      const fresh = await client.post("/console/portals/preview", { name: "Fresh", color_primary: "nope" });
      assert.equal(fresh.status, 200);
      assert.match(fresh.text, /<h1>Fresh<\/h1>/);
      assert.match(fresh.text, /colors\.css\?p=1b5e9e/);

      const forged = await client.post(
        `/console/portals/${portal.id}/preview`,
        { title: "x" },
        { csrf: null },
      );
      assert.equal(forged.status, 403);
      assert.equal(forged.headers.get("x-frame-options"), "DENY");
    });
  });
}

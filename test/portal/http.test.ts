// The guest pages over plain HTTP: hostile gateway parameters (addresses, ports, MACs, URLs,
// markup), security headers, CSRF, attempt limits with a friendly page, the page's weight and
// contents (no account data), and the protocol encoders checked against the vendors' formulas.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { MemoryCounterStore } from "../../src/http/rate-limit.ts";
import { contrast, textOn } from "../../src/portal/colors.ts";
import {
  coovaChapResponse,
  coovaPapPassword,
  mikrotikChapPassword,
  octalBytes,
  safeHttpUrl,
} from "../../src/portal/gateway.ts";
import { paragraphs } from "../../src/portal/html.ts";
import { chooseLanguage, fromAcceptLanguage } from "../../src/portal/i18n.ts";
import { ConsoleClient } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const CHALLENGE = "0123456789abcdef0123456789abcdef";
const md5Hex = (text: string) => createHash("md5").update(text).digest("hex");

describe("captive portal pages over HTTP", () => {
  let server: TestServer;
  let coova: number;
  let mikrotik: number;
  let accountId: number;

  before(async () => {
    server = await startTestServer({
      counters: new MemoryCounterStore(),
      portal: { attemptsPerAddress: 1000, attemptsPerDevice: 2, windowMs: 60_000 },
    });
    const account = await server.core.accounts.create("secret-holdings");
    accountId = account.id;
    const network = await server.core.networks.create(accountId, { name: "hq-network", nas_ip: "192.0.2.9" });
    coova = (
      await server.core.portals.create(accountId, {
        name: "Lobby",
        network_id: network.network.id,
        vendor: "coovachilli",
        uam_secret: "s3cret",
        title: "<script>alert(1)</script> Lobby",
        terms: 'No <b>HTML</b> "here" javascript:alert(1)',
        color_primary: "#ffff00",
      })
    ).id;
    mikrotik = (
      await server.core.portals.create(accountId, {
        name: "Bar",
        network_id: network.network.id,
        vendor: "mikrotik",
      })
    ).id;
  });
  after(() => server?.stop());

  /** A CoovaChilli redirect's query, signed as the gateway signs it (&md=, src/redir.c). */
  const coovaQuery = (extra: Record<string, string> = {}, portal = coova) => {
    const query = new URLSearchParams({
      res: "notyet",
      uamip: "10.1.0.1",
      uamport: "3990",
      challenge: CHALLENGE,
      mac: "AA-BB-CC-DD-EE-01",
      userurl: "http://example.com/",
      ...extra,
    }).toString();
    return `${query}&md=${md5Hex(`${server.url}/portal/${portal}?${query}s3cret`).toUpperCase()}`;
  };

  test("the page: security headers, escaped operator text, no account data, light", async () => {
    const response = await fetch(`${server.url}/portal/${coova}?${coovaQuery()}`);
    assert.equal(response.status, 200);
    const csp = response.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    assert.match(response.headers.get("set-cookie") ?? "", /wisp_portal_csrf=.*HttpOnly/);
    const text = await response.text();
    assert.doesNotMatch(text, /<script>alert|<b>HTML/);
    assert.match(text, /&lt;script&gt;alert\(1\)&lt;\/script&gt; Lobby/);
    assert.doesNotMatch(text, /href="javascript/);
    assert.doesNotMatch(text, /secret-holdings|hq-network|192\.0\.2\.9|s3cret/);
    assert.doesNotMatch(text, /<script(?! src="\/portal\/static\/)/, "no inline script");
    // Everything the page loads comes from /portal/static; the whole is far under 100 KB.
    let total = text.length;
    for (const [, href] of text.matchAll(/(?:href|src)="(\/portal\/static\/[^"]+)"/g)) {
      const asset = await fetch(`${server.url}${href!.replace(/&amp;/g, "&")}`);
      assert.equal(asset.status, 200, href);
      assert.equal(asset.headers.get("x-content-type-options"), "nosniff");
      assert.match(asset.headers.get("cache-control") ?? "", /max-age/);
      total += (await asset.arrayBuffer()).byteLength;
    }
    assert.ok(total < 100_000, `${total} bytes`);
    assert.doesNotMatch(text, /https?:\/\/(?!example\.com)/, "no third-party resources");
    const colors = await (await fetch(`${server.url}/portal/static/colors.css?p=ffff00&b=f4f6f8`)).text();
    assert.match(colors, /--primary-text:#000000/, "yellow gets dark text");
  });

  test("hostile gateway parameters are refused or dropped, never reflected raw", async () => {
    for (const bad of <Record<string, string>[]>[
      { uamip: "evil.example.com" },
      { uamip: "10.1.0.1/24" },
      { uamport: "0" },
      { uamport: "70000" },
      { uamport: "39a" },
      { challenge: "zz" },
      { res: "<script>" },
    ]) {
      const response = await fetch(`${server.url}/portal/${coova}?${coovaQuery(bad)}`);
      assert.equal(response.status, 400, JSON.stringify(bad));
      assert.match(await response.text(), /must be opened by the Wi-Fi network/);
    }
    for (const link of ["javascript:alert(1)", "data:text/html,x", "//evil.example/login", "ftp://x/"]) {
      const q = new URLSearchParams({ "link-login-only": link, mac: "aa:bb:cc:dd:ee:ff" });
      assert.equal((await fetch(`${server.url}/portal/${mikrotik}?${q}`)).status, 400, link);
    }
    const odd = new URLSearchParams({ "link-login-only": "http://10.5.50.1/login", "chap-id": "\\9999" });
    assert.equal((await fetch(`${server.url}/portal/${mikrotik}?${odd}`)).status, 400, "bad chap-id");
    // Markup in any parameter is escaped where the page carries it.
    const markup = coovaQuery({ mac: '"><script>alert(1)</script>', userurl: "javascript:alert(1)" });
    const page = await (await fetch(`${server.url}/portal/${coova}?${markup}`)).text();
    assert.doesNotMatch(page, /"><script>/);
    assert.equal(safeHttpUrl("javascript:alert(1)"), null);
    assert.equal(safeHttpUrl("http://user:pw@example.com/"), null);
    assert.equal(safeHttpUrl("https://example.com/a b"), null);
    assert.equal(safeHttpUrl("https://example.com/ok?x=1"), "https://example.com/ok?x=1");
  });

  test("click-through and registration: terms required, bad and hostile fields refused, nothing created", async () => {
    const network = await server.core.networks.create(accountId, { name: "guest-net", nas_ip: "192.0.2.10" });
    const group = await server.core.groups.create(accountId, { name: "registered" });
    const guests = (
      await server.core.portals.create(accountId, {
        name: "Guests",
        network_id: network.network.id,
        vendor: "coovachilli",
        uam_secret: "s3cret",
        methods: ["clickthrough", "registration"],
        guest_group_id: group.id,
      })
    ).id;
    const client = new ConsoleClient(server.url);
    const first = await client.get(`/portal/${guests}?${coovaQuery({}, guests)}`);
    assert.match(first.text, /type="checkbox" id="terms-click" name="terms" value="yes" required/);
    assert.match(first.text, /<label for="reg-email">/);
    let device = 0;
    // A new device each time: the per-device limit of this suite is 2.
    const post = (form: Record<string, string>) =>
      client.post(`/portal/${guests}`, {
        ...form,
        gw: coovaQuery({ mac: `AA-BB-CC-DD-F0-${String(++device).padStart(2, "0")}` }, guests),
      });
    const counts = async () => ({
      vouchers: (await server.core.vouchers.list(accountId, {}, { page: 1, limit: 1 })).total,
      users: (await server.core.users.list(accountId, {}, { page: 1, limit: 1 })).total,
    });
    const before = await counts();

    const noTerms = await post({ method: "clickthrough" });
    assert.equal(noTerms.status, 400);
    assert.match(noTerms.text, /accept the terms of use to connect/);
    const good = { method: "registration", name: "Ana", email: "ana@example.org", terms: "yes" };
    const refusals: [Record<string, string>, RegExp][] = [
      [{ ...good, terms: "" }, /accept the terms/],
      [{ ...good, terms: "no" }, /accept the terms/],
      [{ ...good, email: "not-an-email" }, /valid email address/],
      [{ ...good, email: "a@b" }, /valid email address/],
      [{ ...good, email: '"><script>alert(1)</script>@x.org' }, /valid email address/],
      [{ ...good, email: `${"a".repeat(250)}@example.org` }, /valid email address/],
      [{ ...good, name: "" }, /enter your name/],
      [{ ...good, name: "<script>alert(1)</script>" }, /enter your name/],
      [{ ...good, name: "bell\u0007" }, /enter your name/],
      [{ ...good, phone: "call me" }, /valid phone number/],
    ];
    for (const [form, message] of refusals) {
      const answer = await post(form);
      assert.equal(answer.status, 400, JSON.stringify(form));
      assert.match(answer.text, message, JSON.stringify(form));
      assert.doesNotMatch(answer.text, /<script>alert/, "nothing reflected unescaped");
    }
    const elsewhere = await client.post(`/portal/${mikrotik}`, {
      ...good,
      gw: "link-login-only=http%3A%2F%2F10.5.50.1%2Flogin&mac=AA%3ABB%3ACC%3ADD%3AF1%3A01",
    });
    assert.equal(elsewhere.status, 401, "registration is not enabled on that portal");
    assert.deepEqual(await counts(), before, "no voucher and no user created by refused forms");

    // The same email twice: the same answer (a hand-off), one user, which is not revealed.
    const once = await post({ ...good, email: "Guest@Example.org" });
    const twice = await post({ ...good, email: "guest@example.org", name: "Someone else" });
    assert.equal(once.status, 200);
    assert.equal(twice.status, 200);
    assert.match(twice.text, /id="handoff-link"/);
    assert.equal((await counts()).users, before.users + 1);
    const clicked = await post({ method: "clickthrough", terms: "yes" });
    assert.equal(clicked.status, 200);
    assert.equal((await counts()).vouchers, before.vouchers + 1);
  });

  test("unknown or malformed portal ids: a friendly 404 page", async () => {
    for (const path of ["/portal/999999", "/portal/abc", "/portal/0", "/portal/static/x.js"]) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 404, path);
      assert.match(await response.text(), /no sign-in page at this address|Page not found/);
    }
  });

  test("sign-in POST: CSRF token required; attempts limited per device with a friendly page", async () => {
    const client = new ConsoleClient(server.url);
    await client.get(`/portal/${coova}?${coovaQuery()}`);
    const gw = coovaQuery();
    const noToken = await client.post(
      `/portal/${coova}`,
      { method: "voucher", code: "ABCD2345", gw },
      { csrf: null },
    );
    assert.equal(noToken.status, 403);
    assert.match(noToken.text, /out of date/);
    const forged = await client.post(
      `/portal/${coova}`,
      { method: "voucher", code: "X", gw },
      { csrf: "A".repeat(43) },
    );
    assert.equal(forged.status, 403);

    const voucher = await server.core.vouchers.create(accountId, { validity: 600 });
    const wrong = await client.post(`/portal/${coova}`, { method: "voucher", code: "NOPE2345", gw });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /not valid/);
    const right = await client.post(`/portal/${coova}`, { method: "voucher", code: voucher.code, gw });
    assert.equal(right.status, 200);
    const refresh = /http-equiv="refresh" content="0;url=([^"]+)"/
      .exec(right.text)?.[1]
      ?.replace(/&amp;/g, "&");
    assert.ok(refresh, right.text);
    const logon = new URL(refresh);
    assert.equal(logon.origin, "http://10.1.0.1:3990");
    assert.equal(logon.pathname, "/logon");
    assert.equal(logon.searchParams.get("username"), voucher.code);
    assert.equal(
      logon.searchParams.get("response"),
      coovaChapResponse(voucher.code, Buffer.from(CHALLENGE, "hex"), "s3cret"),
    );
    assert.equal(
      (await server.core.vouchers.get(accountId, voucher.id)).status,
      "unused",
      "the pre-check writes nothing",
    );

    const limited = await client.post(`/portal/${coova}`, { method: "voucher", code: "NOPE2345", gw });
    assert.equal(limited.status, 429);
    assert.match(limited.text, /Too many attempts/);
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
    // Another device behind the same address is not held back.
    const other = await client.post(`/portal/${coova}`, {
      method: "voucher",
      code: "NOPE2345",
      gw: coovaQuery({ mac: "AA-BB-CC-DD-EE-02" }),
    });
    assert.equal(other.status, 401);
  });

  test("CoovaChilli's &md= checksum: required with a UAM secret, over the exact query; lang goes after it", async () => {
    const signed = coovaQuery();
    const ok = await fetch(`${server.url}/portal/${coova}?${signed}`);
    assert.equal(ok.status, 200);
    const page = await ok.text();
    // The language links keep the signed query byte for byte and add lang after the checksum.
    const spanish = /href="([^"]+lang=es)"/.exec(page)?.[1]?.replace(/&amp;/g, "&");
    assert.ok(spanish?.includes(signed), spanish);
    const switched = await fetch(`${server.url}${spanish}`);
    assert.equal(switched.status, 200);
    assert.match(await switched.text(), /lang="es"/);

    const unsigned = signed.slice(0, signed.lastIndexOf("&md="));
    const tampered = signed.replace("uamip=10.1.0.1", "uamip=10.66.6.6");
    const wrongSecret = `${unsigned}&md=${md5Hex(`${server.url}/portal/${coova}?${unsigned}other`).toUpperCase()}`;
    const appended = `${unsigned}&uamport=1&md=${signed.slice(signed.lastIndexOf("&md=") + 4)}`;
    for (const [name, query] of [
      ["no checksum", unsigned],
      ["a changed gateway address", tampered],
      ["signed with another secret", wrongSecret],
      ["a parameter slipped in", appended],
    ]) {
      const response = await fetch(`${server.url}/portal/${coova}?${query}`);
      assert.equal(response.status, 400, name);
      assert.match(await response.text(), /must be opened by the Wi-Fi network/, name);
    }
    // The sign-in POST checks the same checksum: a forged gateway in the form goes nowhere.
    const client = new ConsoleClient(server.url);
    await client.get(`/portal/${coova}?${signed}`);
    const forged = await client.post(`/portal/${coova}`, {
      method: "voucher",
      code: "ABCD2345",
      gw: tampered,
    });
    assert.equal(forged.status, 400);
  });

  test("CoovaChilli PAP hand-off; generic extra fields, fixed and passed through from the gateway", async () => {
    const network = await server.core.networks.create(accountId, { name: "pap-net", nas_ip: "192.0.2.11" });
    const pap = await server.core.portals.create(accountId, {
      name: "PAP lobby",
      network_id: network.network.id,
      vendor: "coovachilli",
      uam_secret: "s3cret",
      uam_auth: "pap",
    });
    assert.equal(pap.uam_auth, "pap");
    const voucher = await server.core.vouchers.create(accountId, { validity: 600 });
    const client = new ConsoleClient(server.url);
    const gw = coovaQuery({ mac: "AA-BB-CC-DD-E0-01" }, pap.id);
    await client.get(`/portal/${pap.id}?${gw}`);
    const right = await client.post(`/portal/${pap.id}`, { method: "voucher", code: voucher.code, gw });
    assert.equal(right.status, 200);
    const refresh = /content="0;url=([^"]+)"/.exec(right.text)?.[1]?.replace(/&amp;/g, "&") ?? "";
    const logon = new URL(refresh);
    assert.equal(logon.searchParams.get("response"), null);
    assert.equal(
      logon.searchParams.get("password"),
      coovaPapPassword(voucher.code, Buffer.from(CHALLENGE, "hex"), "s3cret"),
    );

    const pfsense = await server.core.portals.create(accountId, {
      name: "pfSense zone",
      network_id: network.network.id,
      vendor: "generic",
      generic_login_param: "portal_action",
      generic_username_field: "auth_user",
      generic_password_field: "auth_pass",
      generic_redirect_field: "redirurl",
      generic_extra_fields: "accept=Continue&zone=$zone",
    });
    const query = new URLSearchParams({
      portal_action: "http://10.9.0.1:8002/index.php?zone=guests",
      zone: "guests",
      redirurl: "http://example.com/",
      mac: "aa:bb:cc:dd:e0:02",
    });
    await client.get(`/portal/${pfsense.id}?${query}`);
    const handed = await client.post(`/portal/${pfsense.id}`, {
      method: "voucher",
      code: voucher.code,
      gw: query.toString(),
    });
    assert.equal(handed.status, 200);
    const fields = Object.fromEntries(
      [...handed.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    assert.equal(fields.auth_user, voucher.code);
    assert.equal(fields.accept, "Continue");
    assert.equal(fields.zone, "guests");
    assert.equal(fields.redirurl, "http://example.com/");

    for (const bad of ["accept", "=x", "a b=1", "zone=$", "zone=$bad name", Array(9).fill("a=1").join("&")]) {
      await assert.rejects(
        server.core.portals.update(accountId, pfsense.id, { generic_extra_fields: bad }),
        /generic_extra_fields must be empty or up to 8/,
        bad,
      );
    }
    await assert.rejects(
      server.core.portals.update(accountId, pfsense.id, { uam_auth: "mschap" }),
      /uam_auth must be one of chap, pap/,
    );
  });

  test("encoders follow the vendors' formulas; helpers", () => {
    const challenge = Buffer.from(CHALLENGE, "hex");
    const md5 = (...p: (Buffer | string)[]) => p.reduce((h, x) => h.update(x), createHash("md5")).digest();
    // doc/hotspotlogin.cgi: md5_hex("\0", password, md5(challenge, uamsecret))
    assert.equal(
      coovaChapResponse("pw", challenge, "s"),
      md5(Buffer.from([0]), "pw", md5(challenge, "s")).toString("hex"),
    );
    const key = md5(challenge, "s");
    const pap = Buffer.from(coovaPapPassword("a-long-password-over-16", challenge, "s"), "hex");
    assert.equal(Buffer.from(pap.map((b, i) => b ^ key[i % 16]!)).toString(), "a-long-password-over-16");
    assert.deepEqual(octalBytes("\\371"), Buffer.from([0o371]));
    assert.equal(octalBytes("\\999"), null);
    assert.equal(
      mikrotikChapPassword("pw", Buffer.from([7]), challenge),
      md5(Buffer.from([7]), "pw", challenge).toString("hex"),
    );
    assert.equal(fromAcceptLanguage("de-DE,fr;q=0.8,es;q=0.9"), "es");
    assert.equal(fromAcceptLanguage("de"), null);
    assert.equal(chooseLanguage("fr", "es", "en"), "fr");
    assert.equal(chooseLanguage("xx", "auto", "fr-CA"), "fr");
    assert.equal(chooseLanguage(undefined, "es", "fr"), "es");
    for (const color of ["#ffff00", "#1b5e9e", "#777777", "#000000", "#ffffff", "#ff0000"]) {
      assert.ok(contrast(color, textOn(color)) >= 4.5, color);
    }
    assert.equal(
      paragraphs("a <b>\nb\n\nsee https://x.example/t. ok").value,
      '<p>a &lt;b&gt;<br>b</p><p>see <a href="https://x.example/t" rel="noopener noreferrer nofollow" target="_blank">https://x.example/t</a>. ok</p>',
    );
  });
});

test("PORTAL_ATTEMPTS_PER_ADDRESS and PORTAL_ATTEMPTS_PER_DEVICE: defaults 30 and 10, validated, applied", async () => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.portalAttemptsPerAddress, defaults.portalAttemptsPerDevice], [30, 10]);
  for (const bad of ["0", "-1", "x", "2.5", "1000001"]) {
    assert.throws(() => loadConfig({ PORTAL_ATTEMPTS_PER_ADDRESS: bad }), ConfigError, bad);
    assert.throws(() => loadConfig({ PORTAL_ATTEMPTS_PER_DEVICE: bad }), ConfigError, bad);
  }
  const server = await startTestServer({ env: { PORTAL_ATTEMPTS_PER_ADDRESS: "2" } });
  try {
    const account = await server.account("default");
    const network = await server.core.networks.create(account.id, { name: "n", nas_ip: "192.0.2.77" });
    const portal = await server.core.portals.create(account.id, {
      name: "P",
      network_id: network.network.id,
    });
    const client = new ConsoleClient(server.url);
    const statuses: number[] = [];
    for (const device of ["01", "02", "03"]) {
      // A new device each time: only the per-address limit can stop the third.
      const gw = new URLSearchParams({ login_url: "http://10.0.0.1/login", mac: `aa:bb:cc:00:00:${device}` });
      await client.get(`/portal/${portal.id}?${gw}`);
      const post = await client.post(`/portal/${portal.id}`, {
        method: "voucher",
        code: "NOPE2345",
        gw: `${gw}`,
      });
      statuses.push(post.status);
    }
    assert.deepEqual(statuses, [401, 401, 429]);
  } finally {
    await server.stop();
  }
});

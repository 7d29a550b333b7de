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
  refusedGatewayHost,
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
    // Not http(s), or a gateway the portal does not allow (an attacker's collector, loopback).
    for (const link of [
      "javascript:alert(1)",
      "data:text/html,x",
      "//evil.example/login",
      "ftp://x/",
      "https://evil.example/collect",
      "http://198.51.100.1/login",
      "http://[::1]/login",
    ]) {
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

  /** The link a MikroTik router's redirect page sends a guest to (login.html variables). */
  const mikrotikQuery = (linkLoginOnly: string, extra: Record<string, string> = {}) =>
    new URLSearchParams({
      "link-login-only": linkLoginOnly,
      "link-orig": "http://example.com/",
      "chap-id": "\\371",
      "chap-challenge": "\\357\\015\\330\\001\\002\\003\\004\\005\\006\\007\\010\\011\\012\\013\\014\\015",
      mac: "AA:BB:CC:DD:A1:01",
      ...extra,
    }).toString();

  /** The hidden fields of a hand-off form, by name. */
  const handoffFields = (text: string) =>
    Object.fromEntries(
      [...text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );

  test("the gateway allow-list: an attacker's login address is refused on the page and on the sign-in", async () => {
    const refusedHosts = [
      "https://evil.example/collect",
      "http://203.0.113.5/login",
      "http://8.8.8.8/login",
      "http://127.0.0.1/login",
      "http://0x7f.1/login",
      "http://[::1]/login",
      "http://[::ffff:203.0.113.5]/login",
      "http://[2001:db8::1]/login",
      "http://100.63.255.255/login",
      "http://100.128.0.1/login",
      "http://172.32.0.1/login",
      "http://hotspot.lan/login",
      "http://10.5.50.1.evil.example/login",
      "http://10.5.50.1@evil.example/login",
    ];
    const voucher = await server.core.vouchers.create(accountId, { validity: 600 });
    for (const [index, link] of refusedHosts.entries()) {
      const query = mikrotikQuery(link, { mac: `AA:BB:CC:DD:A2:${String(index).padStart(2, "0")}` });
      const client = new ConsoleClient(server.url);
      const page = await client.get(`/portal/${mikrotik}?${query}`);
      assert.equal(page.status, 400, link);
      assert.match(page.text, /must be opened by the Wi-Fi network/, link);
      assert.doesNotMatch(page.headers.get("content-security-policy") ?? "", /evil|203\.0|127\.0|hotspot/);
      // The sign-in, with a valid token and a valid code: refused the same way, no hand-off.
      await client.get(`/portal/${mikrotik}?${mikrotikQuery("http://10.5.50.1/login")}`);
      const signIn = await client.post(`/portal/${mikrotik}`, {
        method: "voucher",
        code: voucher.code,
        gw: query,
      });
      assert.equal(signIn.status, 400, link);
      assert.match(signIn.text, /must be opened by the Wi-Fi network/, link);
      assert.doesNotMatch(signIn.text, /id="handoff"|evil/, link);
      // The attacker's CHAP challenge never produced a hash.
      const chapId = Buffer.from([0o371]);
      const challenge = octalBytes(new URLSearchParams(query).get("chap-challenge"));
      assert.ok(challenge);
      assert.ok(!signIn.text.includes(mikrotikChapPassword(voucher.code, chapId, challenge)), link);
      assert.doesNotMatch(signIn.headers.get("content-security-policy") ?? "", /evil|203\.0|127\.0|hotspot/);
    }
    for (const link of [
      "http://10.5.50.1/login",
      "http://192.168.88.1:8080/login",
      "http://172.31.255.1/login",
      "http://100.64.0.1/login",
      "https://169.254.10.1/login",
      "http://[fe80::1]/login",
      "http://[fd12:3456::1]/login",
    ]) {
      const response = await fetch(`${server.url}/portal/${mikrotik}?${mikrotikQuery(link)}`);
      assert.equal(response.status, 200, link);
    }
    // The generic vendor's login URL parameter, and a CoovaChilli uamip signed with the UAM secret
    // (the allow-list holds even then).
    const generic = await server.core.portals.create(accountId, {
      name: "Generic",
      network_id: (await server.core.networks.list(accountId, {}, { page: 1, limit: 1 })).data[0]!.id,
    });
    for (const [url, status] of [
      ["https://evil.example/collect", 400],
      ["http://10.9.0.1:8002/index.php", 200],
    ] as const) {
      const response = await fetch(`${server.url}/portal/${generic.id}?login_url=${encodeURIComponent(url)}`);
      assert.equal(response.status, status, url);
    }
    // What the log names for the operator when a link is refused for its gateway alone.
    const guestView = await server.core.portals.forGuests(mikrotik);
    assert.ok(guestView);
    const named = (link: string) => refusedGatewayHost(guestView, new URLSearchParams(mikrotikQuery(link)));
    assert.equal(named("https://Evil.example:8443/collect"), "evil.example");
    assert.equal(named("http://hotspot.lan/login"), "hotspot.lan");
    assert.equal(named("http://10.5.50.1/login"), null);
    assert.equal(named("javascript:alert(1)"), null);
    const publicUam = await fetch(`${server.url}/portal/${coova}?${coovaQuery({ uamip: "203.0.113.7" })}`);
    assert.equal(publicUam.status, 400);
    assert.match(await publicUam.text(), /must be opened by the Wi-Fi network/);
  });

  test("the gateway allow-list: a listed host name is allowed, and a list replaces the default ranges", async () => {
    const network = await server.core.networks.create(accountId, { name: "dns-net", nas_ip: "192.0.2.12" });
    const portal = await server.core.portals.create(accountId, {
      name: "Router by name",
      network_id: network.network.id,
      vendor: "mikrotik",
      allowed_gateways: ["HotSpot.LAN", "203.0.113.0/28", "Café.lan"],
    });
    assert.deepEqual(portal.allowed_gateways, ["hotspot.lan", "203.0.113.0/28", "xn--caf-dma.lan"]);
    const voucher = await server.core.vouchers.create(accountId, { validity: 600 });
    const client = new ConsoleClient(server.url);
    const query = mikrotikQuery("http://hotspot.lan/login", { mac: "AA:BB:CC:DD:A3:01" });
    assert.equal((await client.get(`/portal/${portal.id}?${query}`)).status, 200);
    const handed = await client.post(`/portal/${portal.id}`, {
      method: "voucher",
      code: voucher.code,
      gw: query,
    });
    assert.equal(handed.status, 200);
    assert.match(handed.text, /<form id="handoff" method="post" action="http:\/\/hotspot\.lan\/login">/);
    assert.match(
      handed.headers.get("content-security-policy") ?? "",
      /form-action 'self' http:\/\/hotspot\.lan/,
    );
    const challenge = octalBytes(new URLSearchParams(query).get("chap-challenge"))!;
    assert.equal(
      handoffFields(handed.text).password,
      mikrotikChapPassword(voucher.code, Buffer.from([0o371]), challenge),
    );
    for (const [link, status] of [
      ["http://HOTSPOT.lan./login", 200],
      ["http://café.lan/login", 200],
      ["http://203.0.113.14/login", 200],
      ["http://203.0.113.16/login", 400],
      ["http://10.5.50.1/login", 400],
      ["http://other.lan/login", 400],
      ["http://hotspot.lan.evil.example/login", 400],
    ] as const) {
      const response = await fetch(`${server.url}/portal/${portal.id}?${mikrotikQuery(link)}`);
      assert.equal(response.status, status, link);
    }
    // Back to the default: the name is no longer allowed, a private address is.
    await server.core.portals.update(accountId, portal.id, { allowed_gateways: [] });
    assert.equal((await fetch(`${server.url}/portal/${portal.id}?${query}`)).status, 400);
    const privateLink = mikrotikQuery("http://10.5.50.1/login");
    assert.equal((await fetch(`${server.url}/portal/${portal.id}?${privateLink}`)).status, 200);
  });

  test("operator text cannot spell the page's slots: the CSRF token and the query go only where they belong", async () => {
    const slots = [
      "WispCsrfSlotQ7x",
      "WispGatewaySlotQ7x&",
      "WispGatewaySlotQ7x",
      "<wisp-slot csrf>",
      "<wisp-slot gateway&>",
      "<wisp-slot gateway>",
    ];
    const network = await server.core.networks.create(accountId, { name: "slot-net", nas_ip: "192.0.2.13" });
    const portal = await server.core.portals.create(accountId, {
      name: "Slots",
      network_id: network.network.id,
      title: `T ${slots.slice(0, 3).join(" ")}`,
      welcome_text: slots.join(" "),
      terms: slots.join("\n\n"),
    });
    const escaped = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    // Twice: the first page builds the cached template, the second is filled from it.
    for (const mac of ["AA:BB:CC:DD:A4:01", "AA:BB:CC:DD:A4:02"]) {
      const gw = new URLSearchParams({ login_url: "http://10.0.0.1/login?marker=QueryMarker42", mac });
      const client = new ConsoleClient(server.url);
      const page = await client.get(`/portal/${portal.id}?${gw}`);
      assert.equal(page.status, 200);
      const token = client.cookies.get("wisp_portal_csrf");
      assert.ok(token);
      const between = (open: string, close: string) => {
        const start = page.text.indexOf(open);
        assert.ok(start >= 0, open);
        return page.text.slice(start, page.text.indexOf(close, start));
      };
      const operatorParts = [
        between("<title>", "</title>"),
        between("<h1>", "</h1>"),
        between('<div class="welcome">', "</div>"),
        between('<div class="terms">', "</div>"),
      ];
      for (const part of operatorParts) {
        assert.ok(!part.includes(token), `no CSRF token in ${part}`);
        assert.doesNotMatch(part, /QueryMarker42|login_url/, part);
      }
      for (const slot of slots) {
        assert.ok(operatorParts[2]!.includes(escaped(slot)), `welcome shows ${slot} as written`);
        assert.ok(operatorParts[3]!.includes(escaped(slot)), `terms show ${slot} as written`);
      }
      assert.ok(operatorParts[1]!.includes(escaped(`T ${slots.slice(0, 3).join(" ")}`)));
      // The token is in the forms' hidden field only, the query in theirs and the language links.
      assert.equal(page.text.split(token).length - 1, page.text.split('name="_csrf"').length - 1);
      assert.equal(page.text.split("QueryMarker42").length - 1, 1 + 3, "one form, three language links");
    }
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

test("attempt limits count IPv6 by /64: 200 addresses of one /64 share one limit, and so do registrations", async () => {
  // A window no test run straddles (fixed windows start at multiples of windowMs since the epoch).
  const server = await startTestServer({
    env: { TRUSTED_PROXIES: "127.0.0.1,::1" },
    portal: { attemptsPerAddress: 30, attemptsPerDevice: 1000, windowMs: 2 ** 40 },
  });
  try {
    const account = await server.account("default");
    const network = await server.core.networks.create(account.id, { name: "v6", nas_ip: "192.0.2.78" });
    const group = await server.core.groups.create(account.id, { name: "v6-guests" });
    const portal = await server.core.portals.create(account.id, {
      name: "P",
      network_id: network.network.id,
      methods: ["voucher", "registration"],
      guest_group_id: group.id,
    });
    const gw = new URLSearchParams({ login_url: "http://10.0.0.1/login" }).toString();
    const client = new ConsoleClient(server.url);
    await client.get(`/portal/${portal.id}?${gw}`);
    const from = (ip: string, fields: Record<string, string>) =>
      client.post(`/portal/${portal.id}`, { ...fields, gw }, { headers: { "x-forwarded-for": ip } });
    const tally = (statuses: number[]) => {
      const counts: Record<number, number> = {};
      for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
      return counts;
    };

    const codes: number[] = [];
    for (let i = 1; i <= 200; i++) {
      codes.push(
        (
          await from(`2001:db8:5:1:${i.toString(16)}::${i.toString(16)}`, {
            method: "voucher",
            code: "NOPE2345",
          })
        ).status,
      );
    }
    assert.deepEqual(tally(codes), { 401: 30, 429: 170 });
    assert.equal(
      (await from("2001:db8:5:2::1", { method: "voucher", code: "NOPE2345" })).status,
      401,
      "another /64",
    );
    assert.equal(
      (await from("::ffff:198.51.100.7", { method: "voucher", code: "NOPE2345" })).status,
      401,
      "an IPv4 client",
    );

    const registrations: number[] = [];
    for (let i = 1; i <= 45; i++) {
      const answer = await from(`2001:db8:5:3::${i.toString(16)}`, {
        method: "registration",
        name: `Guest ${i}`,
        email: `guest${i}@example.org`,
        terms: "yes",
      });
      registrations.push(answer.status);
    }
    assert.deepEqual(tally(registrations), { 200: 30, 429: 15 });
    const users = await server.core.users.list(account.id, {}, { page: 1, limit: 1 });
    assert.equal(users.total, 30, "no user registered past the limit");
  } finally {
    await server.stop();
  }
});

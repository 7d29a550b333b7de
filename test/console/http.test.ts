// The console over plain HTTP, as a browser without JavaScript uses it: first-run setup, session
// cookies and their flags, CSRF tokens, the login rate limit, security headers, account isolation,
// escaping, and what the network page reads (recent authentications).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "admin@example.com";
const PASSWORD = "a long enough password";

function cookieLine(setCookies: string[], name: string): string {
  const line = setCookies.find((c) => c.startsWith(`${name}=`));
  assert.ok(line, `a ${name} cookie is set: ${JSON.stringify(setCookies)}`);
  return line;
}

function assertSecurityHeaders(headers: Headers): void {
  const csp = headers.get("content-security-policy") ?? "";
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(headers.get("x-content-type-options"), "nosniff");
  assert.equal(headers.get("referrer-policy"), "same-origin");
  assert.equal(headers.get("x-frame-options"), "DENY");
}

for (const { dialect, skip } of await dialects()) {
  describe(`console over HTTP on ${dialect}`, { skip }, () => {
    let server: TestServer;
    /** Believes X-Forwarded-* from 127.0.0.1, so tests can be "from" other addresses and over HTTPS. */
    let proxied: TestServer;

    before(async () => {
      server = await startTestServer({ dialect, env: { PUBLIC_URL: "https://wifi.example.net" } });
      // Its login limits count on a clock held a minute into a 15-minute window: ten slow scrypt
      // checks on a loaded machine never straddle the window's end.
      const stillAt = Math.floor(Date.now() / 900_000) * 900_000 + 60_000;
      proxied = await startTestServer({
        dialect,
        env: { TRUSTED_PROXIES: "127.0.0.1" },
        clock: () => stillAt,
      });
      const account = await proxied.account("default");
      await proxied.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    });
    after(async () => {
      await server?.stop();
      await proxied?.stop();
    });

    test("first run: every page leads to setup, which takes the one-time code once", async () => {
      const client = new ConsoleClient(server.url);
      for (const path of ["/console", "/console/users", "/console/login"]) {
        const res = await client.get(path);
        assert.equal(res.status, 303, path);
        assert.equal(res.location, "/console/setup", path);
      }
      const form = await client.get("/console/setup");
      assert.equal(form.status, 200);
      assertSecurityHeaders(form.headers);
      const csrfCookie = cookieLine(form.setCookies, "wisp_csrf");
      assert.match(csrfCookie, /HttpOnly/);
      assert.match(csrfCookie, /SameSite=Strict/);
      assert.match(csrfCookie, /Path=\/console/);
      assert.equal(
        client.csrf,
        client.cookies.get("wisp_csrf"),
        "double submit: the form carries the cookie's value",
      );

      const code = await server.core.admins.issueSetupCode();
      assert.ok(code, "the server holds a setup code while no console user exists");
      const fields = { code: "ZZZZ-ZZZZ", email: EMAIL, password: PASSWORD, password_confirm: PASSWORD };
      const wrong = await client.post("/console/setup", fields);
      assert.equal(wrong.status, 400);
      assert.match(wrong.text, /id="e-code">Setup code does not match/);
      assert.match(wrong.text, new RegExp(`value="${EMAIL}"`), "what was typed is kept");

      const short = await client.post("/console/setup", {
        ...fields,
        code,
        password: "short",
        password_confirm: "short",
      });
      assert.equal(short.status, 400);
      assert.match(short.text, /id="e-password">Password must be 12-200 characters/);

      assert.equal((await client.post("/console/setup", { ...fields, code }, { csrf: null })).status, 403);

      const done = await client.post("/console/setup", {
        ...fields,
        code: code.toLowerCase().replace("-", ""),
      });
      assert.equal(done.status, 303);
      assert.equal(done.location, "/console");
      assert.ok(client.cookies.get("wisp_session"), "the first user is logged in");
      const home = await client.get("/console");
      assert.equal(home.status, 200);
      assert.match(home.text, /admin@example\.com · default/);
      // One audit row, naming the first admin (test/audit/console-walk.test.ts's CHECKED_ELSEWHERE).
      const [first] = await server.core.admins.list();
      const audited = await server.core.database.db.selectFrom("audit_log").selectAll().execute();
      assert.deepEqual(
        audited.map((r) => [r.actor_type, r.actor_id, r.actor_name, r.actor_role, r.resource, r.action]),
        [["admin", String(first!.id), EMAIL, "owner", "admin", "create"]],
      );
      assert.doesNotMatch(JSON.stringify(audited), new RegExp(PASSWORD), "no password in the row");

      assert.equal(await server.core.admins.issueSetupCode(), null, "the code is used up");
      const again = await new ConsoleClient(server.url).get("/console/setup");
      assert.equal(again.status, 303);
      assert.equal(again.location, "/console/login");
      const [admin] = await server.core.admins.list();
      assert.equal(admin?.email, EMAIL);
      assert.equal(admin?.account, "default");
    });

    test("session cookie: HttpOnly, SameSite=Lax, path /console, Secure as PUBLIC_URL is https", async () => {
      const client = new ConsoleClient(server.url);
      const res = await client.login(EMAIL, PASSWORD, { "x-forwarded-proto": "https" });
      assert.equal(res.status, 303);
      const line = cookieLine(res.setCookies, "wisp_session");
      assert.match(line, /^wisp_session=[A-Za-z0-9_-]{43};/);
      assert.match(line, /HttpOnly/);
      assert.match(line, /SameSite=Lax/);
      assert.match(line, /Path=\/console/);
      // Over plain HTTP here, but PUBLIC_URL is https (test/console/tls.test.ts has the rest).
      assert.match(line, /; Secure/);
    });

    test("session cookie is Secure when a trusted proxy says the request came over HTTPS", async () => {
      const client = new ConsoleClient(proxied.url);
      const res = await client.login(EMAIL, PASSWORD, { "x-forwarded-proto": "https" });
      assert.equal(res.status, 303);
      assert.match(cookieLine(res.setCookies, "wisp_session"), /; Secure/);
      const plain = await new ConsoleClient(proxied.url).login(EMAIL, PASSWORD);
      assert.doesNotMatch(cookieLine(plain.setCookies, "wisp_session"), /Secure/);
    });

    test("pages need a session; login returns to the page asked for, never to another site", async () => {
      const anonymous = await new ConsoleClient(server.url).get("/console/users?search=x");
      assert.equal(anonymous.status, 303);
      assert.equal(anonymous.location, "/console/login?next=%2Fconsole%2Fusers%3Fsearch%3Dx");
      const client = new ConsoleClient(server.url);
      await client.get("/console/login?next=%2Fconsole%2Fkeys");
      const res = await client.post("/console/login", {
        email: EMAIL,
        password: PASSWORD,
        next: "/console/keys",
      });
      assert.equal(res.location, "/console/keys");
      for (const next of [
        "//evil.example/",
        "https://evil.example/",
        "/console//evil.example",
        "/api/users",
      ]) {
        const other = new ConsoleClient(server.url);
        await other.get("/console/login");
        const answer = await other.post("/console/login", { email: EMAIL, password: PASSWORD, next });
        assert.equal(answer.location, "/console", next);
      }
      const bad = await new ConsoleClient(server.url).get("/console", {
        cookie: `wisp_session=${"A".repeat(43)}`,
      });
      assert.equal(bad.status, 303, "an unknown session token is no session");
    });

    test("every console answer carries the security headers; pages are not cached", async () => {
      const client = new ConsoleClient(server.url);
      await client.login(EMAIL, PASSWORD);
      for (const path of [
        "/console/login",
        "/console",
        "/console/keys",
        "/console/no-such-page",
        "/console/users/999999",
      ]) {
        const res = await client.get(path);
        assertSecurityHeaders(res.headers);
        if (res.status === 200) assert.equal(res.headers.get("cache-control"), "no-store", path);
      }
      const missing = await client.get("/console/no-such-page");
      assert.equal(missing.status, 404);
      assert.match(missing.headers.get("content-type") ?? "", /text\/html/);
      const css = await client.get(
        (/href="(\/console\/static\/console\.css\?v=[0-9a-f]+)"/.exec((await client.get("/console")).text) ??
          [])[1]!,
      );
      assert.equal(css.status, 200);
      assert.match(css.headers.get("content-type") ?? "", /text\/css/);
      assertSecurityHeaders(css.headers);
      const api = await fetch(`${server.url}/healthz`);
      assert.equal(api.headers.get("content-security-policy"), null, "the API is left as it is");
    });

    test("CSRF: a POST without the session's token is refused with 403 and changes nothing", async () => {
      const client = new ConsoleClient(server.url);
      await client.login(EMAIL, PASSWORD);
      const page = await client.get("/console/keys");
      assert.match(page.text, /name="_csrf" value="[A-Za-z0-9_-]{43}"/);
      const other = new ConsoleClient(server.url);
      await other.login(EMAIL, PASSWORD);
      const before = (await server.core.keys.list()).length;
      const missing = await client.post("/console/keys", { name: "forged" }, { csrf: null });
      assert.equal(missing.status, 403);
      assert.match(missing.text, /security token did not match/);
      assert.equal((await client.post("/console/keys", { name: "forged" }, { csrf: "" })).status, 403);
      assert.equal(
        (await client.post("/console/keys", { name: "forged" }, { csrf: other.csrf })).status,
        403,
      );
      const preLogin = client.cookies.get("wisp_csrf") ?? "";
      assert.equal((await client.post("/console/keys", { name: "forged" }, { csrf: preLogin })).status, 403);
      assert.equal((await client.post("/console/logout", {}, { csrf: null })).status, 403);
      assert.equal((await server.core.keys.list()).length, before, "no key was made");
      const login = new ConsoleClient(server.url);
      assert.equal(
        (await login.post("/console/login", { email: EMAIL, password: PASSWORD }, { csrf: null })).status,
        403,
      );
      const made = await client.post("/console/keys", { name: "real", access: "read" });
      assert.equal(made.status, 303);
      assert.match((await client.get(made.location!)).text, /wisp_[0-9A-Za-z]{40}/);
    });

    test("logout ends the session on the server, not only in the browser", async () => {
      const client = new ConsoleClient(server.url);
      await client.login(EMAIL, PASSWORD);
      const token = client.cookies.get("wisp_session")!;
      await client.get("/console");
      const out = await client.post("/console/logout");
      assert.equal(out.status, 303);
      assert.equal(out.location, "/console/login?notice=logged-out");
      assert.match(cookieLine(out.setCookies, "wisp_session"), /Max-Age=0/);
      const reused = await new ConsoleClient(server.url).get("/console", { cookie: `wisp_session=${token}` });
      assert.equal(reused.status, 303);
    });

    test("login is rate-limited per email and address: 10 failures in 15 minutes, then 429", async () => {
      const from = { "x-forwarded-for": "203.0.113.77" };
      const client = new ConsoleClient(proxied.url, from);
      await client.get("/console/login");
      for (let i = 0; i < 10; i++) {
        const res = await client.post("/console/login", { email: EMAIL, password: `wrong ${i}` });
        assert.equal(res.status, 401, `attempt ${i + 1}`);
        assert.match(res.text, /Wrong email or password/);
      }
      const blocked = await client.post("/console/login", { email: EMAIL, password: PASSWORD });
      assert.equal(blocked.status, 429);
      const retry = Number(blocked.headers.get("retry-after"));
      assert.equal(retry, 840, "Retry-After: the rest of the clock's window");
      assert.match(blocked.text, /Too many failed attempts/);
      assert.equal(blocked.setCookies.length, 0, "no session, even with the right password");
      const elsewhere = new ConsoleClient(proxied.url, { "x-forwarded-for": "203.0.113.78" });
      assert.equal((await elsewhere.login(EMAIL, PASSWORD)).status, 303, "other addresses are not affected");
    });

    test("an account's console users see only that account", async () => {
      const other = await server.account("tenant-b");
      await server.core.admins.create(other, { email: "b@example.com", password: PASSWORD });
      const defaultId = (await server.account("default")).id;
      const theirs = await server.core.users.create(defaultId, { username: "default-only" });
      const [keyOfDefault] = (await server.core.keys.list(defaultId)).filter((k) => k.revoked === null);
      const client = new ConsoleClient(server.url);
      await client.login("b@example.com", PASSWORD);
      assert.equal((await client.get(`/console/users/${theirs.id}`)).status, 404);
      assert.doesNotMatch((await client.get("/console/users")).text, /default-only/);
      assert.ok(keyOfDefault);
      assert.equal((await client.get(`/console/keys/${keyOfDefault.id}/revoke`)).status, 404);
      assert.equal((await client.post(`/console/keys/${keyOfDefault.id}/revoke`)).status, 404);
      assert.equal(
        (await server.core.keys.list(defaultId)).find((k) => k.id === keyOfDefault.id)?.revoked,
        null,
      );
    });

    test("forms show each service error next to its field, and all output is escaped", async () => {
      const client = new ConsoleClient(server.url);
      await client.login(EMAIL, PASSWORD);
      await client.get("/console/users/new");
      const bad = await client.post("/console/users", { username: "no spaces allowed", email: "nope" });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /id="e-username">Username may only contain/);
      assert.match(bad.text, /id="e-email">Email must be an email address/);
      const made = await client.post("/console/users", {
        username: "mallory",
        fullname: '<script>alert("x")</script>',
      });
      assert.equal(made.status, 303);
      const page = await client.get(made.location!.replace(/\?.*/, ""));
      assert.ok(!page.text.includes("<script>alert"), "no markup from data");
      assert.match(page.text, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
      const dup = await client.post("/console/users", { username: "MALLORY" });
      assert.equal(dup.status, 400);
      assert.match(dup.text, /id="e-username">Username a user named/);
      await client.get("/console/keys");
      const key = await client.post("/console/keys", {
        name: "k",
        access: "custom",
        allow_ips: "not-an-ip",
        rate_limit: "x",
      });
      assert.equal(key.status, 400);
      assert.match(key.text, /Permissions: permissions must name at least one grant/);
    });

    test("a network's WPA-Enterprise method: chosen in the form, shown, validated", async () => {
      const client = new ConsoleClient(server.url);
      await client.login(EMAIL, PASSWORD);
      const form = await client.get("/console/networks/new");
      assert.match(form.text, /<option value="peap" selected>/, "PEAP preselected");
      const made = await client.post("/console/networks", {
        name: "Campus",
        nas_ip: "198.51.100.77",
        eap_method: "ttls",
      });
      assert.equal(made.status, 303);
      const id = Number(/^\/console\/networks\/(\d+)/.exec(made.location ?? "")?.[1]);
      const stored = () =>
        server.core.database.db
          .selectFrom("nas")
          .select("eap_method")
          .where("id", "=", id)
          .executeTakeFirstOrThrow();
      assert.equal((await stored()).eap_method, "TTLS");
      assert.match(
        (await client.get(`/console/networks/${id}`)).text,
        /WPA-Enterprise method<\/dt><dd>EAP-TTLS</,
      );
      assert.match((await client.get(`/console/networks/${id}/edit`)).text, /<option value="ttls" selected>/);
      const bad = await client.post(`/console/networks/${id}`, {
        name: "Campus",
        nas_ip: "198.51.100.77",
        eap_method: "md5",
      });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /id="e-eap_method">WPA-Enterprise method must be one of peap, ttls, tls/);
      assert.equal((await stored()).eap_method, "TTLS", "nothing written");
      const changed = await client.post(`/console/networks/${id}`, {
        name: "Campus",
        nas_ip: "198.51.100.77",
        eap_method: "tls",
      });
      assert.equal(changed.status, 303);
      assert.equal((await stored()).eap_method, "TLS");
    });

    test("the network page shows RADIUS settings and the network's recent authentications", async () => {
      const accountId = (await server.account("default")).id;
      const { network } = await server.core.networks.create(accountId, {
        name: "Cafe",
        nas_ip: "198.51.100.0/24",
      });
      const { network: elsewhere } = await server.core.networks.create(accountId, {
        name: "Shop",
        nas_ip: "198.51.100.200/32",
      });
      const at = (s: string) => (dialect === "sqlite" ? s : new Date(`${s.replace(" ", "T")}Z`));
      const row = (networkId: number, username: string, accepted: boolean, time: string) => ({
        username,
        pass: "",
        reply: accepted ? "Access-Accept" : "Access-Reject",
        calledstationid: "",
        callingstationid: "",
        authdate: at(time),
        account_id: accountId,
        reason: accepted ? null : "wrong password",
        network_id: networkId,
        client_mac: "aa:bb:cc:00:11:22",
        ap_mac: "de:ad:be:ef:00:01",
        ssid: "CafeGuest",
      });
      await server.core.database.db
        .insertInto("radpostauth")
        .values([
          row(network.id, "guest-one", true, "2025-05-01 10:00:00"),
          row(network.id, "guest-two", false, "2025-05-01 10:05:00"),
          row(elsewhere.id, "shop-guest", true, "2025-05-01 10:06:00"),
        ])
        .execute();
      const client = new ConsoleClient(server.url);
      await client.login(EMAIL, PASSWORD);
      const page = await client.get(`/console/networks/${network.id}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /<code>wifi\.example\.net<\/code>/, "the server address is PUBLIC_URL's host");
      assert.match(page.text, /guest-two[\s\S]*rejected[\s\S]*wrong password[\s\S]*guest-one[\s\S]*accepted/);
      assert.match(page.text, /2025-05-01 10:05 UTC/);
      assert.match(page.text, /aa:bb:cc:00:11:22[\s\S]*de:ad:be:ef:00:01[\s\S]*CafeGuest/);
      assert.doesNotMatch(page.text, /shop-guest/, "only this network's authentications");
    });
  });
}

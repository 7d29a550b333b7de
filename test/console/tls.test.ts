// The console behind TLS: with an https PUBLIC_URL every cookie is Secure and HSTS is sent, even
// though this process itself is reached over plain HTTP (TLS ends at a proxy in front of it). With
// an http PUBLIC_URL neither, unless a trusted proxy says the request came over HTTPS (then the
// cookies are Secure, still without HSTS).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient, type PageResponse } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "tls@example.com";
const PASSWORD = "a long enough password";

function cookieLine(res: PageResponse, name: string): string {
  const line = res.setCookies.find((c) => c.startsWith(`${name}=`));
  assert.ok(line, `a ${name} cookie is set: ${JSON.stringify(res.setCookies)}`);
  return line;
}

const secure = (line: string) => line.split(";").some((part) => part.trim() === "Secure");

async function serverWith(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer({ env });
  await server.core.admins.create(await server.account("default"), { email: EMAIL, password: PASSWORD });
  return server;
}

describe("console cookies and HSTS by PUBLIC_URL", () => {
  let https: TestServer;
  let http: TestServer;
  let proxied: TestServer;

  before(async () => {
    [https, http, proxied] = await Promise.all([
      serverWith({ PUBLIC_URL: "https://wifi.example.net" }),
      serverWith({}),
      serverWith({ TRUSTED_PROXIES: "127.0.0.1" }),
    ]);
  });
  after(async () => {
    await Promise.all([https?.stop(), http?.stop(), proxied?.stop()]);
  });

  test("https PUBLIC_URL over plain HTTP: every cookie Secure, HSTS on every console answer", async () => {
    const client = new ConsoleClient(https.url);
    const form = await client.get("/console/login");
    assert.equal(form.status, 200);
    assert.ok(secure(cookieLine(form, "wisp_csrf")), "the pre-login CSRF cookie");
    assert.equal(form.headers.get("strict-transport-security"), "max-age=31536000");

    const login = await client.login(EMAIL, PASSWORD);
    assert.equal(login.status, 303);
    assert.ok(secure(cookieLine(login, "wisp_session")), "the session cookie");
    assert.equal(login.headers.get("strict-transport-security"), "max-age=31536000");

    for (const path of ["/console", "/console/no-such-page", "/console/static/console.css"]) {
      const res = await client.get(path);
      assert.equal(res.headers.get("strict-transport-security"), "max-age=31536000", path);
    }
    const logout = await client.post("/console/logout");
    assert.equal(logout.status, 303);
    const cleared = cookieLine(logout, "wisp_session");
    assert.match(cleared, /Max-Age=0/);
    assert.ok(secure(cleared), "the cookie that ends the session");
  });

  test("http PUBLIC_URL: no Secure and no HSTS; X-Forwarded-Proto from an untrusted address is ignored", async () => {
    const client = new ConsoleClient(http.url);
    const form = await client.get("/console/login", { "x-forwarded-proto": "https" });
    assert.equal(secure(cookieLine(form, "wisp_csrf")), false);
    assert.equal(form.headers.get("strict-transport-security"), null);
    const login = await client.login(EMAIL, PASSWORD, { "x-forwarded-proto": "https" });
    assert.equal(login.status, 303);
    assert.equal(secure(cookieLine(login, "wisp_session")), false);
    assert.equal(login.headers.get("strict-transport-security"), null);
  });

  test("http PUBLIC_URL behind a trusted proxy saying https: Secure cookies, still no HSTS", async () => {
    const client = new ConsoleClient(proxied.url);
    const login = await client.login(EMAIL, PASSWORD, { "x-forwarded-proto": "https" });
    assert.equal(login.status, 303);
    assert.ok(secure(cookieLine(login, "wisp_session")));
    assert.equal(login.headers.get("strict-transport-security"), null);
  });
});

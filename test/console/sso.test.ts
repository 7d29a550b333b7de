// Console single sign-on (issue 26 point 4) against the real oidc-provider and the test's SAML IdP.
// Over HTTP: the login page's single sign-on form, which names no provider: an email finds its
// account's providers and those listing its domain (one starts at once, several are buttons, none
// is refused), never another account's; a provider's button (its CSRF token), the IdP's login, back through the portal
// door's callback to the console's finish page, a session; the console user matched by verified
// email, created only for the provider's admin domains, never one of another account; the
// refusals (no console user, unverified email, another browser, a replayed finish, a provider
// without console login, a forged CSRF token) with their page and log reason; password login
// turned off from a single sign-on session (password sessions end, passwords refused, the last
// provider kept); log-out ends the session. Then chromium does the whole log-in with each IdP.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { withAdminTables } from "../../src/core/admins/tables.ts";
import { browserUnavailable, launchBrowser } from "../support/browser.ts";
import { type IdpLab, startIdpLab } from "../support/idp-lab.ts";
import { Jar, stepsToCallback } from "../support/oidc-op.ts";

const PASSWORD = "console sso password 123";

describe("console single sign-on", () => {
  let lab: IdpLab;
  let account: AccountRow;
  let other: AccountRow;

  before(async () => {
    lab = await startIdpLab();
    account = await lab.server.account("default");
    other = await lab.server.account("sso-other");
    await lab.server.core.admins.create(account, { email: "alice@uni.example", password: PASSWORD });
    await lab.server.core.admins.create(other, { email: "mallory@uni.example", password: PASSWORD });
  });
  after(async () => {
    await lab?.stop();
  });

  const url = (path: string) => `${lab.server.url}${path}`;
  const host = () => new URL(lab.server.url).host;

  /** The login page's CSRF token (and its cookie, in the jar). */
  async function loginPage(jar: Jar) {
    const page = await (await jar.fetch(url("/console/login"))).text();
    return { page, csrf: /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? "" };
  }

  /** Posts a login page form: single sign-on's email form, or a provider's button. */
  async function post(jar: Jar, path: string, fields: Record<string, string>, csrf?: string) {
    const token = csrf ?? (await loginPage(jar)).csrf;
    return jar.fetch(url(path), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: token, ...fields }),
    });
  }

  /** Presses a provider's button: the page that goes on to the IdP, and the IdP's address. */
  async function start(jar: Jar, providerId: number, csrf?: string, email = "alice@uni.example") {
    const response = await post(jar, `/console/sso/${providerId}`, { email }, csrf);
    const text = await response.text();
    const idpUrl = /<a id="sso-link" class="button" href="([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, "&");
    return { status: response.status, text, idpUrl: idpUrl ?? "" };
  }

  /** OIDC all the way to our finish page's address (not followed). */
  async function throughOp(jar: Jar, providerId: number, login: string) {
    const started = await start(jar, providerId);
    assert.equal(started.status, 200, started.text.slice(0, 300));
    const callback = await stepsToCallback(
      jar,
      started.idpUrl,
      login,
      url(`/portal/idp/${providerId}/callback`),
    );
    const back = await jar.fetch(callback);
    assert.equal(back.status, 303, await back.text());
    const finish = back.headers.get("location") ?? "";
    assert.match(finish, new RegExp(`^/console/sso/${providerId}/finish/[A-Za-z0-9_-]{43}$`));
    return finish;
  }

  async function finishPage(jar: Jar, finish: string) {
    const response = await jar.fetch(url(finish));
    return {
      status: response.status,
      location: response.headers.get("location"),
      text: await response.text(),
    };
  }

  const consoleProvider = (input: Record<string, unknown> = {}) =>
    lab.oidcProvider({ display_name: "Uni login", console_login: true, ...input });

  const admins = async () =>
    (await lab.server.core.admins.list()).map((a) => `${a.account}:${a.email}`).sort();

  test("the login page names no provider: an email finds its own account's and its domain's", async () => {
    assert.doesNotMatch((await loginPage(new Jar())).page, /sso-continue/, "no provider, no form");
    const uni = await consoleProvider();
    const others = await lab.server.core.idp.create(other.id, {
      name: "other-op",
      kind: "oidc",
      display_name: "Other login",
      issuer: lab.op.issuer,
      client_id: lab.op.clientId,
      client_secret: lab.op.clientSecret,
      console_login: true,
      admin_domains: ["other.example"],
    });
    const { page } = await loginPage(new Jar());
    assert.match(page, /id="sso-continue"/);
    assert.doesNotMatch(page, /Uni login|Other login/);
    const going = async (email: string) => {
      const response = await post(new Jar(), "/console/sso", { email });
      const text = await response.text();
      return `${response.status} ${/<h1>([^<]*)<\/h1>/.exec(text)?.[1]}`;
    };
    assert.equal(await going("Alice@Uni.Example"), "200 Logging in through Uni login");
    // mallory is a console user of the other account; carol's domain is its provider's admin domain.
    assert.equal(await going("mallory@uni.example"), "200 Logging in through Other login");
    assert.equal(await going("carol@other.example"), "200 Logging in through Other login");
    assert.equal(await going("nobody@nowhere.example"), "403 Log in");
    const none = await post(new Jar(), "/console/sso", { email: "nobody@nowhere.example" });
    assert.match(await none.text(), /No single sign-on is set up for this email address/);
    // Another account's provider by its id, with alice's email: refused, and its name not shown.
    const foreign = await start(new Jar(), others.id);
    assert.equal(foreign.status, 403);
    assert.doesNotMatch(foreign.text, /Other login/);
    // Two providers for alice's account: both offered as buttons carrying the email.
    const city = await lab.samlProvider({ display_name: "City SSO", console_login: true });
    const jar = new Jar();
    const chooser = await (await post(jar, "/console/sso", { email: "alice@uni.example" })).text();
    for (const id of [uni.id, city.id]) assert.match(chooser, new RegExp(`id="sso-${id}"`));
    assert.doesNotMatch(chooser, /Other login/);
    assert.match(chooser, /name="email" value="alice@uni.example"/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(chooser)?.[1];
    const started = await start(jar, city.id, csrf);
    assert.equal(started.status, 200, started.text.slice(0, 300));
    assert.match(started.text, /Logging in through City SSO/);
    await lab.server.core.idp.update(lab.accountId, city.id, { console_login: false });
    await lab.server.core.idp.update(other.id, others.id, { console_login: false });
  });

  test("an existing console user logs in through OIDC; log-out ends the session", async () => {
    const provider = await consoleProvider();
    lab.op.accounts.set("alice", { email: "Alice@Uni.Example", email_verified: true, name: "Alice" });
    const jar = new Jar();
    const finish = await throughOp(jar, provider.id, "alice");
    const done = await finishPage(jar, finish);
    assert.equal(done.status, 303, done.text.slice(0, 300));
    assert.equal(done.location, "/console");
    assert.equal(jar.cookie(host(), "wisp_sso"), undefined, "the sign-in's cookie is cleared");
    const home = await jar.fetch(url("/console"));
    assert.equal(home.status, 200);
    const text = await home.text();
    assert.match(text, /alice@uni\.example · default/);
    // A finish token works once.
    assert.equal((await finishPage(jar, finish)).status, 410);

    const csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? "";
    const out = await jar.fetch(url("/console/logout"), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    assert.equal(out.status, 303);
    const after = await jar.fetch(url("/console"));
    assert.equal(after.status, 303);
    assert.match(after.headers.get("location") ?? "", /^\/console\/login/);
    const sessions = await withAdminTables(lab.server.core.database.db)
      .selectFrom("console_sessions")
      .select("provider_id")
      .where("account_id", "=", account.id)
      .execute();
    assert.deepEqual(sessions, [], "the session row is gone");
  });

  test("no console user: refused unless the domain is an admin domain; another account's user never", async () => {
    const strict = await consoleProvider();
    lab.op.accounts.set("bob", { email: "bob@uni.example", email_verified: true });
    let jar = new Jar();
    let done = await finishPage(jar, await throughOp(jar, strict.id, "bob"));
    assert.equal(done.status, 403);
    assert.match(done.text, /There is no console user of this account with your email address/);
    // mallory is a console user of another account: the provider of this account does not let them in.
    lab.op.accounts.set("mallory", { email: "mallory@uni.example", email_verified: true });
    const creating = await consoleProvider({ admin_domains: ["uni.example"] });
    jar = new Jar();
    done = await finishPage(jar, await throughOp(jar, creating.id, "mallory"));
    assert.equal(done.status, 403);
    assert.deepEqual(await admins(), ["default:alice@uni.example", "sso-other:mallory@uni.example"]);
    // An unverified address is no proof.
    lab.op.accounts.set("eve", { email: "eve@uni.example", email_verified: false });
    jar = new Jar();
    done = await finishPage(jar, await throughOp(jar, creating.id, "eve"));
    assert.equal(done.status, 403);
    assert.match(done.text, /no verified email address/);
    // An admin domain: bob gets a console user of this account on first sign-in.
    jar = new Jar();
    done = await finishPage(jar, await throughOp(jar, creating.id, "bob"));
    assert.equal(done.status, 303, done.text.slice(0, 300));
    assert.deepEqual(await admins(), [
      "default:alice@uni.example",
      "default:bob@uni.example",
      "sso-other:mallory@uni.example",
    ]);
    // With no usable password.
    const password = await lab.server.core.admins.login("bob@uni.example", "").catch(() => null);
    assert.equal(password, null);
  });

  test("refused: another browser, a provider without console login, a forged CSRF token", async () => {
    const provider = await consoleProvider();
    const jar = new Jar();
    const finish = await throughOp(jar, provider.id, "alice");
    const elsewhere = await finishPage(new Jar(), finish);
    assert.equal(elsewhere.status, 403);
    assert.match(elsewhere.text, /started in another browser/);
    const guestOnly = await lab.oidcProvider();
    const notConsole = await start(new Jar(), guestOnly.id);
    assert.equal(notConsole.status, 403);
    assert.match(notConsole.text, /does not log in to the console/);
    const forged = await start(new Jar(), provider.id, "forged-token");
    assert.equal(forged.status, 403);
    assert.match(forged.text, /security token did not match/);
    // Disabled between the IdP and the finish page.
    const jar2 = new Jar();
    const pending = await throughOp(jar2, provider.id, "alice");
    await lab.server.core.idp.update(lab.accountId, provider.id, { enabled: false });
    const off = await finishPage(jar2, pending);
    assert.equal(off.status, 403);
  });

  test("password login off from an SSO session: passwords refused, password sessions end, last provider kept", async () => {
    const provider = await consoleProvider({ display_name: "Campus" });
    const password = new Jar();
    const { csrf } = await loginPage(password);
    const loggedIn = await password.fetch(url("/console/login"), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        _csrf: csrf,
        email: "alice@uni.example",
        password: PASSWORD,
        next: "/console",
      }),
    });
    assert.equal(loggedIn.status, 303);
    const sso = new Jar();
    assert.equal((await finishPage(sso, await throughOp(sso, provider.id, "alice"))).status, 303);
    const list = await (await sso.fetch(url("/console/identity-providers"))).text();
    assert.match(list, /You logged in through Campus: single sign-on works/);
    const token = /name="_csrf" value="([^"]+)"/.exec(list)?.[1] ?? "";
    const off = await sso.fetch(url("/console/identity-providers/password-login"), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: token, password_login: "off" }),
    });
    assert.equal(off.status, 303);
    assert.equal(await lab.server.core.consoleSso.passwordLogin(account.id), false);
    // The password session ended; the SSO one goes on.
    assert.equal((await password.fetch(url("/console"))).status, 303);
    assert.equal((await sso.fetch(url("/console"))).status, 200);
    // A right password is refused with a sentence that points to single sign-on.
    const again = new Jar();
    const form = await loginPage(again);
    const refused = await again.fetch(url("/console/login"), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        _csrf: form.csrf,
        email: "alice@uni.example",
        password: PASSWORD,
        next: "/console",
      }),
    });
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /Password login is turned off for your account/);
    // Every other console provider off: this one is the last way in, and stays.
    for (const p of await lab.server.core.idp.list(lab.accountId))
      if (p.id !== provider.id && p.console_login)
        await lab.server.core.idp.update(lab.accountId, p.id, { console_login: false });
    await assert.rejects(
      lab.server.core.idp.update(lab.accountId, provider.id, { enabled: false }),
      /last way into the console/,
    );
    await lab.server.core.consoleSso.setPasswordLoginFor(account.id, true);
  });

  test("SAML: an existing console user logs in through the test IdP", async () => {
    const provider = await lab.samlProvider({ display_name: "City SSO", console_login: true });
    lab.saml.accounts.set("alice-saml", { email: ["alice@uni.example"] });
    const jar = new Jar();
    const started = await start(jar, provider.id);
    const request = lab.saml.parseRedirect(started.idpUrl);
    const response = lab.saml.response({
      request,
      nameId: "alice-saml",
      attributes: { email: ["alice@uni.example"] },
    });
    const acs = await jar.fetch(url(`/portal/idp/${provider.id}/acs`), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: response, RelayState: request.relayState }),
    });
    assert.equal(acs.status, 303);
    const done = await finishPage(jar, acs.headers.get("location") ?? "");
    assert.equal(done.status, 303, done.text.slice(0, 300));
    assert.match(await (await jar.fetch(url("/console"))).text(), /alice@uni\.example · default/);
  });

  describe("in chromium", { skip: browserUnavailable() ?? false }, () => {
    test("log in through the real OpenID Provider and the SAML IdP, then log out", async () => {
      const oidc = await consoleProvider({ display_name: "Uni OIDC" });
      const saml = await lab.samlProvider({ display_name: "City SAML", console_login: true });
      lab.saml.accounts.set("alice-browser", { email: ["alice@uni.example"] });
      const browser = await launchBrowser();
      try {
        const { page } = browser;
        const choose = async (id: number) => {
          await page.goto(url("/console/login"));
          await page.fill("#sso-email", "alice@uni.example");
          await page.click("#sso-continue");
          await page.click(`#sso-${id}`);
        };
        await choose(oidc.id);
        await page.waitForURL(new RegExp(`^${lab.op.issuer}/interaction/`));
        await page.fill('input[name="login"]', "alice");
        await page.fill('input[name="password"]', "any");
        await page.click('button[type="submit"]');
        await page.waitForSelector('input[name="prompt"][value="consent"]', { state: "attached" });
        await page.click('button[type="submit"]');
        await page.waitForURL(url("/console"));
        assert.match((await page.textContent(".who")) ?? "", /alice@uni\.example/);
        await page.click('.who button[type="submit"]');
        await page.waitForURL(/\/console\/login\?notice=logged-out$/);

        await choose(saml.id);
        await page.waitForURL(new RegExp(`^${lab.saml.url}/sso`));
        await page.fill("#user", "alice-browser");
        await page.click("#signin");
        await page.waitForURL(url("/console"));
        assert.match((await page.textContent(".who")) ?? "", /alice@uni\.example/);
        await browser.screenshot("console-sso-saml");
      } finally {
        await browser.close();
      }
    });
  });
});

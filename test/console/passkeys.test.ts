// Passkeys at the console's sign-in (issue 29 point 2) in Chromium, with the DevTools protocol's
// virtual authenticator (WebAuthn.addVirtualAuthenticator: CTAP2, internal, resident keys, user
// verification): one registered on the security page, then used after the password (second factor)
// and alone (a discoverable credential, no password); a passkey of another admin, offered in answer
// to this admin's challenge, is refused. PUBLIC_URL is http://localhost:<port> (the RP ID is its host;
// browsers take no IP address as an RP ID, and localhost is a secure context).
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import type { CDPSession } from "playwright-core";
import { browserUnavailable, launchBrowser, type TestBrowser } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const PASSWORD = "passkey password 12345";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on("error", reject);
  });
}

describe("passkeys in a browser", { skip: browserUnavailable() ?? false }, () => {
  let server: TestServer;
  let browser: TestBrowser;
  let cdp: CDPSession;
  let base = "";

  before(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    server = await startTestServer({ env: { PORT: String(port), PUBLIC_URL: base } });
    const account = await server.account("default");
    for (const email of ["ana@example.com", "ben@example.com"])
      await server.core.admins.create(account, { email, password: PASSWORD });
    browser = await launchBrowser();
    cdp = await browser.context.newCDPSession(browser.page);
    await cdp.send("WebAuthn.enable");
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const p = () => browser.page;
  const path = () => new URL(p().url()).pathname;

  async function password(email: string) {
    await p().goto(`${base}/console/login`);
    await p().fill("#f-email", email);
    await p().fill("#f-password", PASSWORD);
    await p().click("form[action='/console/login'] button[type=submit]");
  }

  async function logOut() {
    await p().click("text=Log out");
    assert.equal(path(), "/console/login");
  }

  async function register(name: string) {
    await p().goto(`${base}/console/security`);
    await p().fill("#passkeys #f-name", name);
    await p().click("#add-passkey");
    await p().waitForURL((url) => url.pathname !== "/console/security" || url.search.includes("notice"));
  }

  test("a passkey is registered on the security page, with recovery codes as the first factor", async () => {
    await password("ana@example.com");
    assert.equal(path(), "/console");
    await register("Ana's laptop");
    assert.equal(path(), "/console/security/recovery-codes");
    assert.equal(((await p().textContent("#recovery-codes")) ?? "").trim().split("\n").length, 10);
    await p().goto(`${base}/console/security`);
    assert.match((await p().textContent("#passkeys")) ?? "", /never/);
    assert.equal(await p().inputValue("#passkeys input[name=name]"), "Ana's laptop");
    await logOut();
  });

  test("the passkey is the second factor after the password", async () => {
    await password("ana@example.com");
    assert.equal(path(), "/console/login/second-factor");
    await p().click("#use-passkey");
    await p().waitForURL((url) => url.pathname === "/console");
    assert.match((await p().textContent("header")) ?? "", /ana@example\.com/);
    await logOut();
  });

  test("the passkey alone signs in (discoverable credential, user verified)", async () => {
    await p().goto(`${base}/console/login`);
    await p().click("#login-passkey");
    await p().waitForURL((url) => url.pathname === "/console");
    assert.match((await p().textContent("header")) ?? "", /ana@example\.com/);
    await logOut();
  });

  test("another admin's passkey is refused as this admin's second factor", async () => {
    const [ana] = (await server.core.admins.list()).filter((a) => a.email === "ana@example.com");
    const anaKey = (
      await server.core.admins.factors.status({
        accountId: ana!.account_id,
        adminId: ana!.id,
        email: ana!.email,
      })
    ).passkeys[0]!.credential_id;
    await password("ben@example.com");
    await register("Ben's key");
    await logOut();
    await password("ben@example.com");
    assert.equal(path(), "/console/login/second-factor");
    // Ana's credential offered to Ben's challenge: what a page or a script could send.
    await p().evaluate(async (credentialId) => {
      const element = document.getElementById("webauthn-options")!;
      const options = JSON.parse(element.textContent!);
      options.allowCredentials = [{ id: credentialId, type: "public-key", transports: ["internal"] }];
      const global = window as unknown as {
        SimpleWebAuthnBrowser: { startAuthentication(o: unknown): Promise<unknown> };
      };
      const answer = await global.SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: options });
      const form = document.querySelector<HTMLFormElement>("form[data-webauthn]")!;
      (form.elements.namedItem("credential") as HTMLInputElement).value = JSON.stringify(answer);
      form.submit();
    }, anaKey);
    await p().waitForSelector("#second-factor-error");
    assert.match((await p().textContent("#second-factor-error")) ?? "", /belongs to another console user/);
    assert.equal(path(), "/console/login/second-factor/passkey");
    await p().goto(`${base}/console`);
    assert.equal(path(), "/console/login", "no session");
  });

  // The passkey routes of test/audit/console-walk.test.ts's CHECKED_ELSEWHERE: each change one row naming
  // the admin who made it.
  test("registering, renaming and removing a passkey: one audit row each, naming the admin", async () => {
    await password("ben@example.com");
    await p().click("#use-passkey");
    await p().waitForURL((url) => url.pathname === "/console");
    await p().goto(`${base}/console/security`);
    await p().fill("#passkeys input[name=name]", "Ben's old key");
    await p().click("#passkeys form.row-form button[type=submit]");
    await p().waitForURL((url) => url.search.includes("notice"));
    await p().click("#passkeys form[action$='/remove'] button[type=submit]");
    await p().waitForURL((url) => url.search.includes("notice"));
    assert.match((await p().textContent("#passkeys")) ?? "", /No passkeys yet/);
    await logOut();
    const rows = await server.core.database.db
      .selectFrom("audit_log")
      .selectAll()
      .where("resource", "=", "passkey")
      .orderBy("id")
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.actor_type, r.actor_name, r.action]),
      [
        ["admin", "ana@example.com", "create"],
        ["admin", "ben@example.com", "create"],
        ["admin", "ben@example.com", "update"],
        ["admin", "ben@example.com", "delete"],
      ],
    );
    for (const row of rows) {
      assert.notEqual(row.actor_role, "", "the admin's role");
      assert.match(row.address ?? "", /^(127\.0\.0\.1|::1)$/);
    }
    assert.equal(JSON.parse(rows[2]!.after!).name, "Ben's old key");
    assert.equal(rows[1]!.resource_id, rows[3]!.resource_id, "the same passkey");
  });
});

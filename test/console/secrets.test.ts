// Secrets made in the console (API keys, webhook signing secrets, network shared secrets) follow
// Post/Redirect/Get, over plain HTTP: the POST answers 303 to a page that shows the secret once;
// reloading that page shows it no more and makes nothing new; a GET never makes or rotates one; the
// pending secret is bound to the session, is never in a URL or cookie, is stored sealed, and expires.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { ConsoleClient, type PageResponse } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "secrets@example.com";
const PASSWORD = "a long enough password";

function secretOf(page: PageResponse): string | undefined {
  return /id="secret-value"[^>]*>([^<]+)</.exec(page.text)?.[1]?.trim();
}

for (const { dialect, skip } of await dialects()) {
  describe(`console secrets shown once (Post/Redirect/Get) on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let client: ConsoleClient;
    let accountId = 0;

    before(async () => {
      server = await startTestServer({ dialect });
      const account = await server.account("default");
      accountId = account.id;
      await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
      client = new ConsoleClient(server.url);
      assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
    });
    after(async () => {
      await server?.stop();
    });

    const keyCount = async () => (await server.core.keys.list(accountId)).length;
    const storedSecret = async (table: "nas" | "webhook_endpoints", id: number) => {
      const { rows } = await sql<{
        secret: string;
      }>`select secret from ${sql.table(table)} where id = ${id}`.execute(server.core.database.db);
      return rows[0]?.secret;
    };

    /**
     * The POST answered 303 to a console page; that page shows the secret once (not cached), and
     * again it redirects to `gone`, whose page says the secret was shown once.
     */
    async function showsOnce(made: PageResponse, gone: RegExp): Promise<string> {
      assert.equal(made.status, 303, made.text);
      const target = made.location ?? "";
      assert.match(target, /^\/console\//);
      assert.equal(made.setCookies.length, 0, "no cookie carries the secret");
      const shown = await client.get(target);
      assert.equal(shown.status, 200);
      assert.equal(shown.headers.get("cache-control"), "no-store");
      const secret = secretOf(shown);
      assert.ok(secret, "the page the redirect leads to shows the secret");
      assert.ok(!target.includes(secret), "never in the URL");
      assert.equal(shown.setCookies.length, 0);
      const again = await client.get(target);
      assert.ok(!again.text.includes(secret), "a reload does not show the secret again");
      assert.equal(again.status, 303);
      assert.match(again.location ?? "", gone);
      const notice = await client.get(again.location!);
      assert.match(notice.text, /shown only once/);
      assert.ok(!notice.text.includes(secret));
      return secret;
    }

    test("an API key: 303, shown once; reloading makes no second key", async () => {
      await client.get("/console/keys");
      const before = await keyCount();
      const made = await client.post("/console/keys", { name: "prg", access: "read" });
      const key = await showsOnce(made, /^\/console\/keys\?notice=key-shown$/);
      assert.match(key, /^wisp_[0-9A-Za-z]{40}$/);
      for (let i = 0; i < 3; i++) await client.get(made.location!);
      assert.equal(await keyCount(), before + 1, "exactly one key was made");
      const status = (await server.call("GET", "/api/users", { key })).status;
      assert.equal(status, 200, "the key shown is the key made");
    });

    test("a webhook endpoint and its rotation: 303, shown once; reloading rotates nothing", async () => {
      await client.get("/console/webhooks");
      const made = await client.post("/console/webhooks", {
        url: "https://hooks.example.com/w",
        events: "all",
      });
      const hookId = Number(/^\/console\/webhooks\/(\d+)\//.exec(made.location ?? "")?.[1]);
      const first = await showsOnce(
        made,
        new RegExp(`^/console/webhooks/${hookId}\\?notice=webhook-secret-shown$`),
      );
      assert.match(first, /^whsec_/);
      const sealed = await storedSecret("webhook_endpoints", hookId);
      assert.ok(sealed && !sealed.includes(first.slice(6)), "stored sealed, as before");

      await client.get(`/console/webhooks/${hookId}/rotate`);
      const rotated = await client.post(`/console/webhooks/${hookId}/rotate`);
      const second = await showsOnce(
        rotated,
        new RegExp(`^/console/webhooks/${hookId}\\?notice=webhook-secret-shown$`),
      );
      assert.match(second, /^whsec_/);
      assert.notEqual(second, first);
      const afterRotation = await storedSecret("webhook_endpoints", hookId);
      assert.notEqual(afterRotation, sealed);
      for (let i = 0; i < 3; i++) await client.get(rotated.location!);
      assert.equal(await storedSecret("webhook_endpoints", hookId), afterRotation, "no second rotation");
    });

    test("a network made with a chosen secret, then rotated: 303, shown once; reloading rotates nothing", async () => {
      await client.get("/console/networks/new");
      const chosen = "a-chosen-shared-secret-42";
      const made = await client.post("/console/networks", {
        name: "PRG",
        nas_ip: "198.51.100.7",
        secret: chosen,
      });
      const networkId = Number(/^\/console\/networks\/(\d+)\//.exec(made.location ?? "")?.[1]);
      const gone = new RegExp(`^/console/networks/${networkId}\\?notice=network-secret-shown$`);
      assert.equal(await showsOnce(made, gone), chosen);

      await client.get(`/console/networks/${networkId}/rotate`);
      const rotated = await client.post(`/console/networks/${networkId}/rotate`);
      const secret = await showsOnce(rotated, gone);
      assert.notEqual(secret, chosen);
      assert.equal(await storedSecret("nas", networkId), secret, "the secret shown is the one in use");
      for (let i = 0; i < 3; i++) await client.get(rotated.location!);
      assert.equal(await storedSecret("nas", networkId), secret, "no second rotation");
    });

    test("a GET never makes a key or rotates a secret", async () => {
      const hook = (await server.core.webhooks.create(accountId, { url: "https://hooks.example.com/g" }))
        .webhook;
      const { network } = await server.core.networks.create(accountId, {
        name: "GET",
        nas_ip: "198.51.100.8",
      });
      const keys = await keyCount();
      const hookSecret = await storedSecret("webhook_endpoints", hook.id);
      const nasSecret = await storedSecret("nas", network.id);
      for (const path of [
        "/console/keys",
        "/console/keys?name=x&access=full",
        "/console/webhooks",
        `/console/webhooks/${hook.id}/rotate`,
        `/console/webhooks/${hook.id}/secret`,
        "/console/networks/new",
        `/console/networks/${network.id}/rotate`,
        `/console/networks/${network.id}/secret`,
      ]) {
        const page = await client.get(path);
        assert.equal(secretOf(page), undefined, path);
      }
      assert.equal(await keyCount(), keys);
      assert.equal(await storedSecret("webhook_endpoints", hook.id), hookSecret);
      assert.equal(await storedSecret("nas", network.id), nasSecret);
    });

    test("the pending secret belongs to the session that made it, stored sealed, and expires", async () => {
      await client.get("/console/keys");
      const made = await client.post("/console/keys", { name: "bound", access: "read" });
      assert.equal(made.status, 303);
      const other = new ConsoleClient(server.url);
      await other.login(EMAIL, PASSWORD);
      const elsewhere = await other.get(made.location!);
      assert.equal(secretOf(elsewhere), undefined, "another session of the same user does not see it");
      const { rows } = await sql<{ secret: string }>`select secret from console_pending_secrets`.execute(
        server.core.database.db,
      );
      assert.equal(rows.length, 1, "still pending for its own session");
      assert.ok(!/wisp_/.test(rows[0]!.secret), "sealed, not in clear");
      const shown = await client.get(made.location!);
      assert.match(secretOf(shown) ?? "", /^wisp_/);

      // Not shown within a few minutes: gone (the clock is moved by ageing the row).
      await client.get("/console/keys");
      const late = await client.post("/console/keys", { name: "late", access: "read" });
      await sql`update console_pending_secrets set expires = '2000-01-01T00:00:00Z'`.execute(
        server.core.database.db,
      );
      const expired = await client.get(late.location!);
      assert.equal(expired.status, 303);
      assert.equal(expired.location, "/console/keys?notice=key-shown");
      const left = await sql`select id from console_pending_secrets`.execute(server.core.database.db);
      assert.equal(left.rows.length, 0, "taken out even when expired");
    });

    test("logging out drops the session's pending secrets", async () => {
      const client2 = new ConsoleClient(server.url);
      await client2.login(EMAIL, PASSWORD);
      await client2.get("/console/keys");
      const made = await client2.post("/console/keys", { name: "logout", access: "read" });
      assert.equal(made.status, 303);
      await client2.post("/console/logout");
      const { rows } = await sql`select id from console_pending_secrets`.execute(server.core.database.db);
      assert.equal(rows.length, 0);
    });
  });
}

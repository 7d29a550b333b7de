// The console's directory pages over plain HTTP, against an LDAP address nothing listens on: create
// from the form as the new page fills it, the bind password never shown back on any page, a bad
// mapping refused next to its field, "Sync now" showing the failed sync and the server down, edit
// keeping the password, delete.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "directories@example.com";
const PASSWORD = "a long enough password";
const BIND_PASSWORD = "Bind-Pa55word-never-shown";

/** The fields a page's form would post: inputs with their values, checked boxes, textareas, selected options. */
function formFields(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`action="${action}"`);
  assert.ok(start >= 0, `a form posting to ${action}`);
  const form = html.slice(start, html.indexOf("</form>", start));
  const fields: Record<string, string> = {};
  const decode = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
  for (const [tag] of form.matchAll(/<input [^>]*>/g)) {
    const name = /name="([^"]+)"/.exec(tag)?.[1];
    if (!name || name === "_csrf") continue;
    if (/type="checkbox"/.test(tag) && !/ checked/.test(tag)) continue;
    fields[name] = decode(/value="([^"]*)"/.exec(tag)?.[1] ?? "");
  }
  for (const [, name, text] of form.matchAll(/<textarea [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/textarea>/g))
    fields[name!] = decode(text!);
  for (const [, name, options] of form.matchAll(/<select [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const chosen =
      /<option value="([^"]*)" selected/.exec(options!) ?? /<option value="([^"]*)"/.exec(options!);
    fields[name!] = decode(chosen?.[1] ?? "");
  }
  return fields;
}

/** A loopback port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("console directory pages", () => {
  let server: TestServer;
  let client: ConsoleClient;
  let accountId = 0;
  let url = "";

  before(async () => {
    server = await startTestServer({ dialect: "sqlite" });
    const account = await server.account("default");
    accountId = account.id;
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    await server.core.groups.create(accountId, { name: "staff" });
    url = `ldap://127.0.0.1:${await closedPort()}`;
    client = new ConsoleClient(server.url);
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
  });
  after(() => server?.stop());

  const pages: string[] = [];
  const seen = <T extends { text: string }>(page: T): T => {
    pages.push(page.text);
    return page;
  };

  test("create, refuse a bad mapping, sync against a server that is down, edit, delete", async () => {
    const blank = seen(await client.get("/console/directories/new"));
    assert.equal(blank.status, 200);
    const fields = {
      ...formFields(blank.text, "/console/directories"),
      name: "corp",
      servers: url,
      bind_dn: "cn=admin,dc=example,dc=org",
      bind_password: BIND_PASSWORD,
      user_base: "ou=people,dc=example,dc=org",
      breaker_failures: "1",
      connect_timeout_ms: "500",
      group_mappings: "cn=staff,ou=groups,dc=example,dc=org",
    };
    const bad = seen(await client.post("/console/directories", fields));
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Group mappings line 1 must be &quot;directory group -&gt; Wisp group&quot;/);
    assert.equal((await server.core.directories.list(accountId)).length, 0);

    const made = await client.post("/console/directories", {
      ...fields,
      group_mappings: "cn=staff,ou=groups,dc=example,dc=org -> staff",
    });
    assert.equal(made.status, 303, made.text);
    const [directory] = await server.core.directories.list(accountId);
    assert.ok(directory?.bind_password_set);
    assert.deepEqual(directory.group_mappings, [
      { directory_group: "cn=staff,ou=groups,dc=example,dc=org", group: "staff" },
    ]);
    const page = seen(await client.get(made.location!));
    assert.match(page.text, /Set. Leave empty to keep it/);
    assert.match(page.text, /Last sync: never/);

    const synced = seen(await client.post(`/console/directories/${directory.id}/sync`, {}));
    assert.equal(synced.status, 200);
    assert.match(synced.text, /Sync failed: directory unavailable: ldap:\/\/127\.0\.0\.1:\d+: /);
    assert.match(synced.text, /Status <span class="badge bad">down<\/span>/);
    const list = seen(await client.get("/console/directories"));
    assert.match(list.text, /<span class="badge bad">down<\/span>/);
    assert.match(list.text, /failed: directory unavailable/);

    // Saving the edit form as shown keeps the password (its field comes back empty).
    const shown = formFields(page.text, `/console/directories/${directory.id}`);
    assert.equal(shown.bind_password, "");
    const edited = await client.post(`/console/directories/${directory.id}`, {
      ...shown,
      sync_interval: "60",
    });
    assert.equal(edited.status, 303, edited.text);
    const stored = await server.core.directories.get(accountId, directory.id);
    assert.equal(stored.sync_interval, 60);
    assert.ok(stored.bind_password_set);
    const row = await server.core.directories.row(accountId, directory.id);
    assert.equal(server.core.directories.runtime.bindPassword(row), BIND_PASSWORD);
    seen(await client.get(`/console/directories/${directory.id}`));

    for (const text of pages) assert.ok(!text.includes(BIND_PASSWORD), "the bind password is never shown");

    const deleted = await client.post(`/console/directories/${directory.id}/delete`, {});
    assert.equal(deleted.status, 303);
    assert.equal((await server.core.directories.list(accountId)).length, 0);
  });
});

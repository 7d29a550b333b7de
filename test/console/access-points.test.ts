// The console's access points: the list (sorted, searched), each AP's page with its sessions now,
// its authentications and failures per hour as a chart, and its top SSIDs; linked from the
// overview; built from real RADIUS accounting and authentication; another account's AP is a 404.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { accountingSender, loginSender } from "../support/accounting.ts";
import { ConsoleClient } from "../support/browser.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "console-Aps-3";

describe("console: access points", () => {
  let server: TestServer;
  let client: ConsoleClient;

  before(async () => {
    const [authPort, acctPort] = [await freeUdpPort(), await freeUdpPort()];
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(authPort),
        RADIUS_ACCT_PORT: String(acctPort),
        WORKER: "0",
      },
    });
    const account = await server.account("default");
    await server.core.networks.create(account.id, { name: "Lobby <i>", nas_ip: "127.0.0.1", secret: SECRET });
    await server.core.users.create(account.id, { username: "ana", password: "ana password 1" });
    const send = accountingSender(acctPort, SECRET);
    await send({ user: "ana", session: "a-1", mac: "02-00-00-00-05-01" }, "Start");
    const login = loginSender(authPort, SECRET);
    const station: [string, string] = ["Called-Station-Id", "02-00-00-00-00-01:<b>lab</b>"];
    await login("ana", "ana password 1", [station]);
    await login("ana", "nope", [station]);
    await login("ana", "nope again", [station]);
    const other = await server.account("elsewhere");
    await server.core.admins.create(account, { email: "ops@example.org", password: "ops password 123" });
    await server.core.networks.create(other.id, { name: "Other", nas_ip: "192.0.2.44" });
    client = new ConsoleClient(server.url);
    assert.equal((await client.login("ops@example.org", "ops password 123")).status, 303);
  });
  after(() => server?.stop());

  test("the overview links to the list and to each busy access point", async () => {
    const home = await client.get("/console");
    assert.match(home.text, /href="\/console\/access-points"/);
    assert.match(home.text, /href="\/console\/access-points\/02:00:00:00:00:01"/);
  });

  test("the list shows each AP's SSIDs, network, sessions and authentications, escaped", async () => {
    const page = await client.get("/console/access-points?sort=-failures_24h");
    assert.equal(page.status, 200);
    const row =
      /<tr><td><a href="\/console\/access-points\/02:00:00:00:00:01">[\s\S]*?<\/tr>/.exec(page.text)?.[0] ??
      "";
    assert.match(row, /&lt;b&gt;lab&lt;\/b&gt;/);
    assert.match(row, /Lobby &lt;i&gt;/);
    assert.match(row, /<td>1<\/td><td>3<\/td><td>2<\/td>/, "1 session now, 3 authentications, 2 failures");
    assert.doesNotMatch(page.text, /<b>lab/);
    const searched = await client.get("/console/access-points?search=ff:ff");
    assert.match(searched.text, /No access point has been seen matching that search/);
    const odd = await client.get("/console/access-points?sort=drop%20table&page=99");
    assert.equal(odd.status, 200, "an unknown order falls back to the default");
  });

  test("an AP's page: sessions now, the hourly chart of authentications and failures, top SSIDs", async () => {
    const page = await client.get("/console/access-points/02-00-00-00-00-01");
    assert.equal(page.status, 200);
    assert.match(page.text, /<strong>1<\/strong> sessions now/);
    assert.match(page.text, /<strong>2<\/strong> failures, 24 h/);
    assert.match(page.text, /<svg class="chart"/);
    assert.match(page.text, /class="bar-rejected"[^>]*><title>[^<]*2/);
    assert.match(page.text, /<td>&lt;b&gt;lab&lt;\/b&gt;<\/td><td>3<\/td>/);
    assert.equal((await client.get("/console/access-points/02:00:00:00:00:99")).status, 404);
    assert.equal((await client.get("/console/access-points/not-a-mac")).status, 404);
  });
});

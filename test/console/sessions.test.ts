// The console's "Online now" page over HTTP: counts per network and access point, the open
// sessions, the live part the page's script refreshes, the Disconnect button (CSRF-checked, the
// DAS's answer shown), and the network form's CoA and accounting fields.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { bytes } from "../../src/console/format.ts";
import type { Network } from "../../src/core/networks/service.ts";
import { DasClient } from "../../src/radius/das-client.ts";
import { accountingSender } from "../support/accounting.ts";
import { ConsoleClient } from "../support/browser.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "console-Sessions-9";
const EMAIL = "online@example.com";
const PASSWORD = "online password 123";

describe("console: Online now", () => {
  let server: TestServer;
  let das: TestDas;
  let client: ConsoleClient;
  let network: Network;
  let accountId: number;

  before(async () => {
    const acctPort = await freeUdpPort();
    server = await startTestServer({
      env: { RADIUS_HOST: "127.0.0.1", RADIUS_ACCT_PORT: String(acctPort), WORKER: "0" },
    });
    das = await startTestDas(SECRET);
    server.core.sessions.das = new DasClient({ timeoutMs: 200, retries: 0 });
    const account = await server.account("default");
    accountId = account.id;
    ({ network } = await server.core.networks.create(account.id, {
      name: "Lobby <b>",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      coa_enabled: true,
      coa_port: das.port,
    }));
    const send = accountingSender(acctPort, SECRET);
    await send({ user: "guest<script>", session: "cs-1", mac: "02-00-00-00-04-01" }, "Start");
    // Started 3 days, 2 hours and 30 minutes ago; 1792018 bytes in and 8448544 out since.
    const started = Math.floor(Date.now() / 1000) - (3 * 86_400 + 2 * 3_600 + 30 * 60);
    const walker = { user: "walker", session: "cs-2", mac: "02-00-00-00-04-02" };
    await send(walker, "Start", [["Event-Timestamp", started]]);
    await send(walker, "Interim-Update", [
      ["Event-Timestamp", started + 600],
      ["Acct-Session-Time", 600],
      ["Acct-Input-Octets", 1792018],
      ["Acct-Output-Octets", 8448544],
    ]);
    await send({ user: "gone", session: "cs-3", mac: "02-00-00-00-04-03" }, "Stop");
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    client = new ConsoleClient(server.url);
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
  });
  after(async () => {
    await das?.close();
    await server?.stop();
  });

  test("the page counts and lists the open sessions, escaped; the live part answers alone", async () => {
    const page = await client.get("/console/sessions");
    assert.equal(page.status, 200);
    assert.match(page.text, /<strong>2<\/strong> online/);
    assert.match(page.text, /Lobby &lt;b&gt;/);
    assert.match(page.text, /guest&lt;script&gt;/);
    assert.doesNotMatch(page.text, /guest<script>/);
    assert.doesNotMatch(page.text, />gone</, "closed sessions are not online");
    assert.match(page.text, /<td>Lobby &lt;b&gt;<\/td><td><code>02:00:00:00:00:01<\/code><\/td><td>2<\/td>/);
    assert.match(page.text, /data-live="\/console\/sessions\/live"/);
    // Data in human units (exact bytes in the title), and how long the session has been online.
    const walker = /<tr>\s*<td>walker<\/td>[\s\S]*?<\/tr>/.exec(page.text)?.[0] ?? "";
    assert.match(walker, /<td>3 days 2 hours<\/td>/);
    assert.match(walker, /<td title="1,792,018 \/ 8,448,544 bytes">1\.7 MB \/ 8\.1 MB<\/td>/);
    assert.doesNotMatch(page.text, /1792018/);
    const live = await client.get("/console/sessions/live");
    assert.equal(live.status, 200);
    assert.doesNotMatch(live.text, /<html/);
    assert.match(live.text, /<strong>2<\/strong> online/);
  });

  test("Disconnect needs the CSRF token, then shows the access point's answer", async () => {
    const id = (
      await server.core.sessions.list(accountId, { status: "active" }, { page: 1, limit: 10 }, "username")
    ).data[0]!.id;
    await client.get("/console/sessions");
    const forged = await client.post(`/console/sessions/${id}/disconnect`, {}, { csrf: "nope" });
    assert.equal(forged.status, 403);
    assert.equal(das.requests.length, 0);
    const sent = await client.post(`/console/sessions/${id}/disconnect`);
    assert.equal(sent.status, 303);
    assert.equal(sent.location, "/console/sessions?notice=session-disconnected");
    assert.equal(das.requests.length, 1);
    const after = await client.get(sent.location!);
    assert.match(after.text, /acknowledged the disconnect/);
    das.behaviour = { answer: "nak", errorCause: "Session-Context-Not-Found" };
    await client.post(`/console/sessions/${id}/disconnect`);
    const refused = await client.get("/console/sessions");
    assert.match(refused.text, /nak \(Session-Context-Not-Found\)/);
  });

  test("a session's last CoA outcome shows on the live page, with its fallback", async () => {
    await server.core.database.db
      .updateTable("radacct")
      .set({
        coa_result: "nak",
        coa_cause: "Unsupported-Attribute",
        coa_at: "2026-11-27T08:00:00Z",
        coa_fallback_result: "ack",
      })
      .where("acctsessionid", "=", "cs-2")
      .execute();
    const live = await client.get("/console/sessions/live");
    const walker = /<tr>\s*<td>walker<\/td>[\s\S]*?<\/tr>/.exec(live.text)?.[0] ?? "";
    assert.match(
      walker,
      /<span title="2026-11-27T08:00:00Z">nak \(Unsupported-Attribute\), then disconnect: ack<\/span>/,
    );
  });

  test("the network form edits the CoA switch and port, the interim interval and the stale time", async () => {
    await client.get(`/console/networks/${network.id}/edit`);
    const fields = {
      name: "Lobby",
      nas_ip: "127.0.0.1",
      nas_identifier: "",
      description: "",
      coa_port: "3800",
      interim_interval: "300",
      stale_after: "0",
    };
    const saved = await client.post(`/console/networks/${network.id}`, { ...fields, coa_enabled: "1" });
    assert.equal(saved.status, 303);
    const stored = await server.core.networks.get(accountId, network.id);
    assert.deepEqual([stored.coa_enabled, stored.coa_port, stored.interim_interval], [true, 3800, 300]);
    await client.get(`/console/networks/${network.id}/edit`);
    const bad = await client.post(`/console/networks/${network.id}`, { ...fields, interim_interval: "10" });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /must be 0 \(none sent\) or whole seconds from 60 to 86400/);
    await client.get(`/console/networks/${network.id}/edit`);
    const badPort = await client.post(`/console/networks/${network.id}`, { ...fields, coa_port: "70000" });
    assert.match(badPort.text, /must be a UDP port from 1 to 65535/);
  });
});

test("sizes in human units: bytes, then one decimal under ten of a unit, whole above", () => {
  const shown = [0, 1, 1023, 1024, 1792018, 8448544, 10 * 2 ** 20, 1023.9 * 2 ** 20, 5 * 2 ** 40].map(bytes);
  assert.deepEqual(shown, [
    "0 bytes",
    "1 byte",
    "1,023 bytes",
    "1.0 KB",
    "1.7 MB",
    "8.1 MB",
    "10 MB",
    "1.0 GB",
    "5.0 TB",
  ]);
});

// Device names in the reports and the console (issue 24, point 5): a device let in by MAB, its
// session from accounting; the sessions API and view and report 110 name the device (this
// account's, never another's with the same MAC); the console's device page lists both.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import { accountingSender } from "../support/accounting.ts";
import { ConsoleClient } from "../support/browser.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "names-Secret-5";
const EMAIL = "names@example.com";
const PASSWORD = "a long enough password";

describe("device names in sessions, report 110 and the console", () => {
  let server: TestServer;
  let ports: { auth: number; acct: number };
  let key: string;
  let deviceId: number;
  let client: ConsoleClient;

  before(async () => {
    ports = { auth: await freeUdpPort(), acct: await freeUdpPort() };
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: String(ports.auth),
        RADIUS_ACCT_PORT: String(ports.acct),
        WORKER: "0",
      },
    });
    const account = await server.account("default");
    key = await server.key(account, { rateLimit: 10_000 });
    await server.core.networks.create(account.id, {
      name: "lab",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      mab_mode: "devices",
    });
    deviceId = (
      await server.core.devices.create(account.id, { mac: "00-16-3E-AA-00-01", name: "Lobby printer" })
    ).id;
    const other = await server.account("other");
    await server.core.devices.create(other.id, { mac: "00:16:3e:aa:00:02", name: "not ours" });
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    client = new ConsoleClient(server.url);
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);

    // The printer logs in by MAC, then its session starts; an unknown device's session too.
    const mab = await sendRadius({
      ...accessRequestPap("00163eaa0001", "00163eaa0001", [["Calling-Station-Id", "00-16-3E-AA-00-01"]]),
      host: "127.0.0.1",
      port: ports.auth,
      secret: SECRET,
    });
    assert.equal(mab.type, "Access-Accept");
    const send = accountingSender(ports.acct, SECRET);
    await send({ user: "00163eaa0001", session: "printer-1", mac: "00-16-3E-AA-00-01" }, "Start");
    await send({ user: "someone", session: "other-1", mac: "00-16-3E-AA-00-02" }, "Start");
    await server.core.aaa.drain();
  });
  after(() => server?.stop());

  test("the sessions API names the device, and only this account's", async () => {
    const res = await server.call("GET", "/api/sessions?status=active", { key });
    assert.equal(res.status, 200, res.text);
    const names = Object.fromEntries(
      res.body.data.map((s: { acct_session_id: string; device_name: string | null }) => [
        s.acct_session_id,
        s.device_name,
      ]),
    );
    assert.deepEqual(names, { "printer-1": "Lobby printer", "other-1": null });
  });

  test("report 110 names the device, with method MAB", async () => {
    const res = await server.call("GET", "/api/reports/110?earliest=-1h", { key });
    assert.equal(res.status, 200, res.text);
    const row = res.body.data.find((r: { username: string }) => r.username === "00163eaa0001");
    assert.equal(row.device_name, "Lobby printer");
    assert.equal(row.method, "MAB");
    assert.equal(row.result, "Access-Accept");
  });

  test("the console's sessions view and device page", async () => {
    const sessions = await client.get("/console/sessions");
    assert.match(
      sessions.text,
      /<span class="device-name">Lobby printer<\/span> <code>00:16:3e:aa:00:01<\/code>/,
    );
    assert.doesNotMatch(sessions.text, /not ours/);
    const page = await client.get(`/console/devices/${deviceId}`);
    assert.match(page.text, /<td>MAB<\/td>/);
    assert.match(page.text, /<td>00163eaa0001<\/td><td>[^<]+<\/td><td>online<\/td>/);
  });
});

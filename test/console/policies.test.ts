// The console's policy page over plain HTTP: add with errors next to the fields, the list in order
// with move up/down and warnings, the explain form, the edit page.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "policies@example.com";
const PASSWORD = "a long enough password";

describe("console policy pages", () => {
  let server: TestServer;
  let client: ConsoleClient;
  let network = 0;

  before(async () => {
    server = await startTestServer({ dialect: "sqlite" });
    const account = await server.account("default");
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    network = (await server.core.networks.create(account.id, { name: "hq", nas_ip: "127.0.0.7" })).network.id;
    client = new ConsoleClient(server.url);
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
  });
  after(() => server?.stop());

  test("add, refuse a bad VLAN next to its field, reorder, explain, edit", async () => {
    await client.get("/console/policies");
    const form = (over: Record<string, string>) => ({ name: "", action: "accept", ...over });
    const bad = await client.post("/console/policies", form({ name: "bad", vlan: "5000" }));
    assert.equal(bad.status, 400);
    assert.match(bad.text, /VLAN must be an integer from 1 to 4094/);
    for (const [name, extra] of [
      ["guests", { ssids: "Guest*", vlan: "30" }],
      ["night", { times: "22:00-06:00", action: "reject", reason: "closed at night" }],
    ] as const) {
      const made = await client.post("/console/policies", form({ name, ...extra }));
      assert.equal(made.status, 303, made.text);
    }
    const night = (await server.core.policies.list(1)).data.find((p) => p.name === "night")!;
    assert.equal((await client.post(`/console/policies/${night.id}/move`, { direction: "up" })).status, 303);
    const page = await client.get("/console/policies");
    assert.ok(page.text.indexOf(">night<") < page.text.indexOf(">guests<"), "night listed first");
    assert.match(page.text, /reject: closed at night/);
    const explained = await client.post("/console/policies/explain", {
      network_id: String(network),
      ssid: "Guest-1",
      time: "2024-01-01T12:00:00Z",
    });
    assert.equal(explained.status, 200, explained.text);
    assert.match(explained.text, /night: no, times: needs \[22:00-06:00\], the request has 12:00/);
    assert.match(explained.text, /guests: matched/);
    assert.match(explained.text, /Tunnel-Private-Group-Id:1/);
    const edit = await client.post(
      `/console/policies/${night.id}`,
      form({ name: "night", times: "23:00-05:00", action: "reject", reason: "closed" }),
    );
    assert.equal(edit.status, 303, edit.text);
    assert.deepEqual((await server.core.policies.get(1, night.id)).conditions, { times: ["23:00-05:00"] });
  });
});

// "My devices" (issue 24, point 4) over HTTP against a real server with its worker: a Wisp user
// signs in on the portal's page, lists, names, adds (up to the group's Wisp-Max-Devices) and
// removes their own devices; removing one sends a Disconnect-Request to its open session through
// the existing RFC 5176 path (a test DAS answers). Bad input and other users' devices are refused.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { accountingSender, eventually } from "../support/accounting.ts";
import { ConsoleClient } from "../support/browser.ts";
import { startTestDas, type TestDas } from "../support/das.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "my-devices-Secret-4";

describe("my devices", () => {
  let server: TestServer;
  let das: TestDas;
  let accountId: number;
  let portalId: number;
  let acctPort: number;
  let path: string;
  let guest: ConsoleClient;

  before(async () => {
    acctPort = await freeUdpPort();
    das = await startTestDas(SECRET);
    server = await startTestServer({
      env: {
        RADIUS_HOST: "127.0.0.1",
        RADIUS_AUTH_PORT: "0",
        RADIUS_ACCT_PORT: String(acctPort),
        WORKER: "1",
      },
    });
    const { DasClient } = await import("../../src/radius/das-client.ts");
    server.core.sessions.das = new DasClient({ timeoutMs: 200, retries: 1 });
    accountId = (await server.account("default")).id;
    const { network } = await server.core.networks.create(accountId, {
      name: "office",
      nas_ip: "127.0.0.1",
      secret: SECRET,
      coa_enabled: true,
      coa_port: das.port,
    });
    portalId = (await server.core.portals.create(accountId, { name: "Office", network_id: network.id })).id;
    path = `/portal/${portalId}/devices`;
    const staff = await server.core.groups.create(accountId, { name: "staff" });
    await server.core.attributes.addToGroup(accountId, staff.id, {
      table: "radgroupcheck",
      attribute: "Wisp-Max-Devices",
      operator: ":=",
      value: "2",
    });
    const dora = await server.core.users.create(accountId, { username: "dora", password: "Explorer-7" });
    await server.core.groups.addMember(accountId, staff.id, { userid: dora.id });
    await server.core.users.create(accountId, { username: "eve", password: "Eve-pass-1" });
    guest = new ConsoleClient(server.url);
  });
  after(async () => {
    await das?.close();
    await server?.stop();
  });

  test("sign in: a wrong password and a missing CSRF token are refused; then the empty list with the limit", async () => {
    const first = await guest.get(path);
    assert.equal(first.status, 200);
    assert.match(first.text, /Sign in to manage your devices/);
    const wrong = await guest.post(`${path}/login`, { username: "dora", password: "nope" });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /username or password is not right/);
    const noToken = await guest.post(
      `${path}/login`,
      { username: "dora", password: "Explorer-7" },
      { csrf: null },
    );
    assert.equal(noToken.status, 403);
    const ok = await guest.post(`${path}/login`, { username: "dora", password: "Explorer-7" });
    assert.equal(ok.status, 303);
    assert.match(
      ok.setCookies.join("\n"),
      new RegExp(`wisp_my_devices=[^;]+; Path=${path}; Max-Age=1800; HttpOnly; SameSite=Strict`),
    );
    const list = await guest.get(path);
    assert.match(list.text, /<p id="device-count">0 of 2 devices<\/p>/);
  });

  test("add: a bad MAC, then two devices; a taken MAC and a third one are refused", async () => {
    await guest.get(path);
    const bad = await guest.post(`${path}/add`, { mac: "01:00:5e:00:00:01", name: "tv" });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /not a device address/);
    assert.match(bad.text, /value="01:00:5e:00:00:01"/, "what was typed stays");
    assert.equal((await guest.post(`${path}/add`, { mac: "00-16-3E-00-00-01", name: "phone" })).status, 303);
    await server.core.devices.create(accountId, { mac: "00:16:3e:00:00:09", name: "someone else's" });
    await guest.get(path);
    const taken = await guest.post(`${path}/add`, { mac: "00163e000009" });
    assert.equal(taken.status, 409);
    assert.match(taken.text, /already registered/);
    assert.equal((await guest.post(`${path}/add`, { mac: "00:16:3e:00:00:02", name: "laptop" })).status, 303);
    const full = await guest.get(path);
    assert.match(full.text, /2 of 2 devices/);
    assert.doesNotMatch(full.text, /Add a device/, "no add form at the limit");
    const third = await guest.post(`${path}/add`, { mac: "00:16:3e:00:00:03" });
    assert.equal(third.status, 409);
    assert.match(third.text, /as many devices as you may add/);
    const owned = await server.core.devices.list(
      accountId,
      { search: "00:16:3e:00:00:0" },
      { page: 1, limit: 10 },
    );
    const dora = (await server.core.users.list(accountId, { search: "dora" }, { page: 1, limit: 1 }))
      .data[0]!;
    assert.deepEqual(
      owned.data.filter((d) => d.user_id === dora.id).map((d) => [d.mac, d.name, d.kind]),
      [
        ["00:16:3e:00:00:01", "phone", "registered"],
        ["00:16:3e:00:00:02", "laptop", "registered"],
      ],
    );
  });

  test("rename; another user's device cannot be renamed or removed", async () => {
    const mine = await server.core.devices.getByMac(accountId, "00:16:3e:00:00:01");
    const theirs = await server.core.devices.getByMac(accountId, "00:16:3e:00:00:09");
    await guest.get(path);
    assert.equal(
      (await guest.post(`${path}/rename`, { device: String(mine.id), name: "Dora's phone" })).status,
      303,
    );
    assert.equal((await server.core.devices.get(accountId, mine.id)).name, "Dora's phone");
    await guest.get(path);
    assert.equal((await guest.post(`${path}/remove`, { device: String(theirs.id) })).status, 404);
    await guest.get(path);
    assert.equal(
      (await guest.post(`${path}/rename`, { device: String(theirs.id), name: "mine now" })).status,
      404,
    );
    assert.equal((await server.core.devices.get(accountId, theirs.id)).name, "someone else's");
  });

  test("remove: the device is forgotten and its open session gets a Disconnect-Request", async () => {
    const send = accountingSender(acctPort, SECRET);
    await send({ user: "dora", session: "dora-phone-1", mac: "00-16-3E-00-00-01" }, "Start");
    const mine = await server.core.devices.getByMac(accountId, "00:16:3e:00:00:01");
    await guest.get(path);
    assert.equal((await guest.post(`${path}/remove`, { device: String(mine.id) })).status, 303);
    const request = await eventually(async () =>
      das.requests.find((r) => r.attribute("Acct-Session-Id") === "dora-phone-1"),
    );
    assert.equal(request.attribute("Calling-Station-Id"), "00-16-3E-00-00-01");
    assert.equal(request.packet.type, "Disconnect-Request");
    await assert.rejects(server.core.devices.get(accountId, mine.id), /not found/);
    const list = await guest.get(path);
    assert.match(list.text, /1 of 2 devices/);
  });

  test("revoking a device through the API (disable) disconnects its open session too", async () => {
    const send = accountingSender(acctPort, SECRET);
    await send({ user: "dora", session: "dora-laptop-1", mac: "00:16:3e:00:00:02" }, "Start");
    const laptop = await server.core.devices.getByMac(accountId, "00:16:3e:00:00:02");
    const key = await server.key("default", { permissions: "devices:write" });
    const res = await server.call("PUT", `/api/devices/${laptop.id}`, { key, body: { status: "disabled" } });
    assert.equal(res.status, 200);
    const request = await eventually(async () =>
      das.requests.find((r) => r.attribute("Acct-Session-Id") === "dora-laptop-1"),
    );
    assert.equal(request.packet.type, "Disconnect-Request");
  });

  test("the session cookie: tampered, another account's portal, signed out", async () => {
    const token = guest.cookies.get("wisp_my_devices")!;
    const tampered = new ConsoleClient(server.url);
    tampered.cookies.set("wisp_my_devices", `${token.slice(0, -4)}AAAA`);
    assert.match((await tampered.get(path)).text, /Sign in to manage your devices/);
    const other = await server.account("other");
    const { network } = await server.core.networks.create(other.id, {
      name: "theirs",
      nas_ip: "10.9.0.0/24",
    });
    const theirPortal = await server.core.portals.create(other.id, {
      name: "Theirs",
      network_id: network.id,
    });
    const elsewhere = new ConsoleClient(server.url);
    elsewhere.cookies.set("wisp_my_devices", token);
    const page = await elsewhere.get(`/portal/${theirPortal.id}/devices`);
    assert.match(page.text, /Sign in to manage your devices/, "a token is bound to its account");
    await guest.get(path);
    await guest.post(`${path}/logout`, {});
    assert.match((await guest.get(path)).text, /Sign in to manage your devices/);
    const refused = await guest.post(`${path}/add`, { mac: "00:16:3e:00:00:05" });
    assert.equal(refused.status, 401);
  });

  test("the same look and languages as the guest pages", async () => {
    const fr = await guest.get(`${path}?lang=fr`);
    assert.match(fr.text, /<html lang="fr">/);
    assert.match(fr.text, /Connectez-vous pour gérer vos appareils/);
    assert.match(fr.text, /\/portal\/static\/portal\.css/);
    const es = await guest.get(path, { "accept-language": "es" });
    assert.match(es.text, /Inicie sesión para gestionar sus dispositivos/);
    assert.equal((await guest.get("/portal/999999/devices")).status, 404);
  });
});

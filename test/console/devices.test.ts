// The console's device pages over plain HTTP: list, add with errors next to fields, the device page
// with its sessions and authentications, revoke, forget, CSV import (all or nothing, refused rows
// listed) and export.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "devices@example.com";
const PASSWORD = "a long enough password";

async function upload(client: ConsoleClient, path: string, csv: string | null) {
  const body = new FormData();
  body.set("_csrf", client.csrf);
  if (csv !== null) body.set("file", new Blob([csv], { type: "text/csv" }), "devices.csv");
  const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  const res = await fetch(`${client.base}${path}`, {
    method: "POST",
    body,
    headers: { cookie },
    redirect: "manual",
  });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

for (const { dialect, skip } of await dialects()) {
  describe(`console device pages on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let client: ConsoleClient;
    let accountId = 0;

    before(async () => {
      server = await startTestServer({ dialect });
      const account = await server.account("default");
      accountId = account.id;
      await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
      await server.core.users.create(accountId, { username: "alice", password: "pw" });
      client = new ConsoleClient(server.url);
      assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
    });
    after(() => server?.stop());

    test("add: errors next to the fields, then a device owned by a user", async () => {
      await client.get("/console/devices/new");
      const bad = await client.post("/console/devices", { mac: "zz", name: "x", username: "nobody" });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /no user &quot;nobody&quot; in this account|no user "nobody" in this account/);
      const bad2 = await client.post("/console/devices", { mac: "zz", name: "x" });
      assert.equal(bad2.status, 400);
      assert.match(bad2.text, /MAC address must be a MAC address/);
      const made = await client.post("/console/devices", {
        mac: "AA-BB-CC-11-22-33",
        name: "Alice's TV",
        username: "alice",
      });
      assert.equal(made.status, 303, made.text);
      const id = Number(/\/console\/devices\/(\d+)/.exec(made.location ?? "")?.[1]);
      const page = await client.get(`/console/devices/${id}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /aa:bb:cc:11:22:33/);
      assert.match(page.text, /name="username" type="text" value="alice"/);
      const dup = await client.post("/console/devices", { mac: "aabbcc112233" });
      assert.equal(dup.status, 400);
      assert.match(dup.text, /already exists/);
    });

    test("the device page shows its sessions and authentications", async () => {
      const device = (
        await server.core.devices.list(accountId, { search: "aa:bb:cc:11:22:33" }, { page: 1, limit: 1 })
      ).data[0]!;
      await server.core.database.db
        .insertInto("radpostauth")
        .values({
          account_id: accountId,
          username: "AABBCC112233",
          pass: "",
          reply: "Access-Accept",
          authdate: dialect === "sqlite" ? "2026-03-01 10:00:00" : new Date("2026-03-01T10:00:00Z"),
          client_mac: device.mac,
          method: "MAB",
          calledstationid: "",
          callingstationid: "",
          class: null,
          reason: null,
        })
        .execute();
      await server.core.database.db
        .insertInto("radacct")
        .values({
          acctsessionid: "s1",
          acctuniqueid: "u1",
          username: "alice",
          realm: "",
          nasipaddress: "10.0.0.1",
          nasportid: null,
          nasporttype: null,
          acctstarttime: dialect === "sqlite" ? 1772359200 : new Date("2026-03-01T10:00:00Z"),
          acctupdatetime: null,
          acctstoptime: null,
          acctinterval: null,
          acctsessiontime: 0,
          acctauthentic: null,
          connectinfo_start: null,
          connectinfo_stop: null,
          acctinputoctets: 1234,
          acctoutputoctets: 5678,
          calledstationid: "",
          callingstationid: "AA-BB-CC-11-22-33",
          acctterminatecause: "",
          servicetype: null,
          framedprotocol: null,
          framedipaddress: dialect === "sqlite" ? "" : null,
          framedipv6address: dialect === "sqlite" ? "" : null,
          framedipv6prefix: dialect === "sqlite" ? "" : null,
          framedinterfaceid: "",
          delegatedipv6prefix: dialect === "sqlite" ? "" : null,
          class: null,
          account_id: accountId,
          client_mac: device.mac,
        })
        .execute();
      const page = await client.get(`/console/devices/${device.id}`);
      assert.match(page.text, /<td>MAB<\/td>/);
      assert.match(page.text, /1234 \/ 5678/);
      assert.match(page.text, /online/);
    });

    test("revoke from the list, then forget after a confirmation page", async () => {
      const device = (await server.core.devices.list(accountId, {}, { page: 1, limit: 1 })).data[0]!;
      const list = await client.get("/console/devices");
      assert.match(list.text, /Revoke/);
      const revoked = await client.post(`/console/devices/${device.id}/status`, {
        status: "disabled",
        back: "list",
      });
      assert.equal(revoked.status, 303);
      assert.equal((await server.core.devices.get(accountId, device.id)).status, "disabled");
      const confirm = await client.get(`/console/devices/${device.id}/delete`);
      assert.match(confirm.text, /Forget/);
      const gone = await client.post(`/console/devices/${device.id}/delete`, {});
      assert.equal(gone.status, 303);
      assert.equal((await server.core.devices.list(accountId, {}, { page: 1, limit: 5 })).total, 0);
    });

    test("import: refused rows listed and nothing imported; a good file imports; export downloads CSV", async () => {
      await client.get("/console/devices/import");
      const refused = await upload(
        client,
        "/console/devices/import",
        "mac,name\n02:00:00:00:00:01,a\nnope,b\n02:00:00:00:00:01,c\n",
      );
      assert.equal(refused.status, 400);
      assert.match(refused.text, /Nothing was imported: 2 rows were refused/);
      assert.match(refused.text, /Line 3: mac must be a MAC address/);
      assert.match(refused.text, /Line 4: MAC 02:00:00:00:00:01 repeats line 2/);
      assert.equal((await server.core.devices.list(accountId, {}, { page: 1, limit: 5 })).total, 0);
      await client.get("/console/devices/import");
      const none = await upload(client, "/console/devices/import", null);
      assert.equal(none.status, 400);
      await client.get("/console/devices/import");
      const good = await upload(
        client,
        "/console/devices/import",
        "mac,name,username\n02:00:00:00:00:01,a,alice\n02-00-00-00-00-02,b,\n",
      );
      assert.equal(good.status, 303, good.text);
      assert.equal((await server.core.devices.list(accountId, {}, { page: 1, limit: 5 })).total, 2);
      const exported = await fetch(`${server.url}/console/devices/export`, {
        headers: { cookie: [...client.cookies].map(([n, v]) => `${n}=${v}`).join("; ") },
      });
      assert.equal(exported.status, 200);
      assert.match(exported.headers.get("content-disposition") ?? "", /attachment; filename="devices.csv"/);
      assert.equal(
        await exported.text(),
        "mac,name,description,status,username,voucher,group,expires\r\n02:00:00:00:00:01,a,,enabled,alice,,,\r\n02:00:00:00:00:02,b,,enabled,,,,\r\n",
      );
    });
  });
}

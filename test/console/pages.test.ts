// Every console page renders in under 300 ms with a few thousand users (and groups, networks,
// voucher batches and authentications beside them), measured over HTTP after one warm-up request.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const USERS = 3000;
const BUDGET_MS = 300;
const EMAIL = "pages@example.com";
const PASSWORD = "pages password 123";

for (const { dialect, skip } of await dialects()) {
  describe(`console page times on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let client: ConsoleClient;
    const ids = { user: 0, network: 0, batch: 0, portal: 0, group: 0 };

    before(async () => {
      server = await startTestServer({ dialect });
      const account = await server.account("default");
      const { db } = server.core.database;
      const now = `${new Date().toISOString().slice(0, 19)}Z`;
      for (let start = 0; start < USERS; start += 500) {
        const rows = Array.from({ length: Math.min(500, USERS - start) }, (_, i) => ({
          account_id: account.id,
          username: `user${String(start + i).padStart(5, "0")}`,
          email: `user${start + i}@example.com`,
          fullname: `User Number ${start + i}`,
          status: (start + i) % 10 === 0 ? "disabled" : "enabled",
          created: now,
          updated: now,
        }));
        await db.insertInto("users").values(rows).execute();
      }
      const user = await server.core.users.create(account.id, { username: "measured", password: "pw-12345" });
      ids.user = user.id;
      for (let g = 0; g < 30; g++) {
        const group = await server.core.groups.create(account.id, { name: `group${g}` });
        ids.group = group.id;
        if (g < 5) await server.core.groups.addMember(account.id, group.id, { userid: user.id });
      }
      for (let a = 0; a < 10; a++) {
        await server.core.attributes.addToUser(account.id, {
          userid: user.id,
          table: "radreply",
          attribute: "Reply-Message",
          operator: "+=",
          value: `hello ${a}`,
        });
      }
      for (let n = 0; n < 20; n++) {
        const { network } = await server.core.networks.create(account.id, {
          name: `Site ${n}`,
          nas_ip: `10.9.${n}.0/24`,
        });
        ids.network = network.id;
        ids.portal = (
          await server.core.portals.create(account.id, { name: `Portal ${n}`, network_id: network.id })
        ).id;
      }
      const authdate = (i: number) => {
        const date = new Date(Date.now() - i * 60_000);
        return dialect === "sqlite" ? date.toISOString().slice(0, 19).replace("T", " ") : date;
      };
      await db
        .insertInto("radpostauth")
        .values(
          Array.from({ length: 500 }, (_, i) => ({
            username: `user${i}`,
            pass: "",
            reply: i % 3 ? "Access-Accept" : "Access-Reject",
            authdate: authdate(i),
            account_id: account.id,
            network_id: ids.network,
            client_mac: "aa:bb:cc:dd:ee:ff",
            ap_mac: "11:22:33:44:55:66",
            ssid: "Guest",
          })),
        )
        .execute();
      for (let b = 0; b < 5; b++) {
        ids.batch = (
          await server.core.vouchers.createBatch(account.id, { quantity: 400, validity: 86_400 })
        ).batch_id;
      }
      await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
      client = new ConsoleClient(server.url);
      assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
    });
    after(() => server?.stop());

    test(`each page answers in under ${BUDGET_MS} ms`, async () => {
      const pages = [
        "/console",
        "/console/users",
        `/console/users?page=${Math.floor(USERS / 50)}`,
        "/console/users?search=number%2012&status=enabled",
        `/console/users/${ids.user}`,
        "/console/users/new",
        "/console/groups",
        "/console/networks",
        `/console/networks/${ids.network}`,
        `/console/networks/${ids.network}/edit`,
        "/console/portals",
        `/console/portals/${ids.portal}/edit`,
        "/console/keys",
        "/console/vouchers",
        "/console/vouchers?search=A",
        `/console/vouchers/batches/${ids.batch}`,
        `/console/vouchers/batches/${ids.batch}/print`,
        `/console/vouchers/batches/${ids.batch}/csv`,
      ];
      const times: string[] = [];
      for (const path of pages) {
        assert.equal((await client.get(path)).status, 200, path);
        // The fastest of three: the page's own time, not a moment when other test processes had
        // both cores (one try took 638 ms on a loaded 2-core machine for a page that answers in about 25 ms).
        let ms = Number.POSITIVE_INFINITY;
        for (let attempt = 0; attempt < 3; attempt++) {
          const started = performance.now();
          const res = await client.get(path);
          ms = Math.min(ms, performance.now() - started);
          assert.equal(res.status, 200, path);
        }
        times.push(`${path} ${ms.toFixed(1)} ms`);
        assert.ok(ms < BUDGET_MS, `${path} took ${ms.toFixed(1)} ms`);
      }
      console.log(`page times on ${dialect}:\n  ${times.join("\n  ")}`);
    });
  });
}

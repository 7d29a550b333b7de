// The console's plan pages over plain HTTP: create with units and periods (a quota without its
// period refused next to the field), edit, the plan select on users, groups and voucher batches,
// delete refused with the counts while a user names the plan; the vendor and time zone of a network.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConsoleClient } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const EMAIL = "plans@example.com";
const PASSWORD = "a long enough password";

describe("console plan pages", () => {
  let server: TestServer;
  let client: ConsoleClient;
  let accountId = 0;

  before(async () => {
    server = await startTestServer({ dialect: "sqlite" });
    const account = await server.account("default");
    accountId = account.id;
    await server.core.admins.create(account, { email: EMAIL, password: PASSWORD });
    client = new ConsoleClient(server.url);
    assert.equal((await client.login(EMAIL, PASSWORD)).status, 303);
  });
  after(() => server?.stop());

  const gold = {
    name: "gold",
    description: "",
    download_kbps: "2048",
    upload_kbps: "512",
    data_quota: "5",
    data_quota_unit: "GB",
    data_period: "month",
    time_quota: "",
    time_quota_unit: "hours",
    time_period: "",
    validity: "30",
    validity_unit: "days",
    devices: "2",
    role: "gold-role",
  };

  test("create, refuse a quota without its period, list the figures, edit", async () => {
    assert.equal((await client.get("/console/plans")).status, 200);
    const bad = await client.post("/console/plans", { ...gold, name: "bad", data_period: "" });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Period is required with data_quota/);
    assert.equal((await server.core.plans.list(accountId, { page: 1, limit: 10 })).total, 0);

    const made = await client.post("/console/plans", gold);
    assert.equal(made.status, 303, made.text);
    const [plan] = (await server.core.plans.list(accountId, { page: 1, limit: 10 })).data;
    assert.equal(plan?.data_quota, 5_000_000_000);
    assert.equal(plan?.data_period, "month");
    assert.equal(plan?.validity, 30 * 86_400);
    assert.equal(plan?.time_quota, null);
    const list = await client.get("/console/plans");
    assert.match(list.text, /2048 kbit\/s/);
    assert.match(list.text, /5 GB per month/);
    assert.match(list.text, /30 days/);

    const edited = await client.post(`/console/plans/${plan!.id}`, {
      ...gold,
      download_kbps: "4096",
      time_quota: "90",
      time_quota_unit: "minutes",
      time_period: "day",
    });
    assert.equal(edited.status, 303, edited.text);
    const stored = await server.core.plans.get(accountId, plan!.id);
    assert.equal(stored.download_kbps, 4096);
    assert.equal(stored.time_quota, 5400);
    const page = await client.get(`/console/plans/${plan!.id}`);
    assert.match(page.text, /name="download_kbps" type="text" value="4096"/);
    assert.match(page.text, /name="time_quota" value="90"/);
  });

  test("the plan select saves plan_id on a user, a group and a batch; delete is refused with the counts", async () => {
    const plan = await server.core.plans.find(accountId, "gold");
    const user = await server.core.users.create(accountId, { username: "alice", password: "alice password" });
    const page = await client.get(`/console/users/${user.id}`);
    assert.match(page.text, new RegExp(`<option value="${plan.id}">gold</option>`));
    const saved = await client.post(`/console/users/${user.id}`, {
      username: "alice",
      plan_id: String(plan.id),
    });
    assert.equal(saved.status, 303, saved.text);
    assert.equal((await server.core.users.get(accountId, user.id)).plan_id, plan.id);
    const again = await client.get(`/console/users/${user.id}`);
    assert.match(again.text, new RegExp(`<option value="${plan.id}" selected>gold</option>`));
    const unknown = await client.post(`/console/users/${user.id}`, { username: "alice", plan_id: "999" });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /Plan is not one of this account&#39;s plans/);
    assert.equal((await server.core.users.get(accountId, user.id)).plan_id, plan.id);

    await client.get("/console/groups");
    const group = await client.post("/console/groups", { name: "staff", plan_id: String(plan.id) });
    assert.equal(group.status, 303, group.text);
    const staff = (await server.core.groups.list(accountId, "staff", { page: 1, limit: 5 })).data[0];
    assert.equal(staff?.plan_id, plan.id);

    await client.get("/console/vouchers");
    const batch = await client.post("/console/vouchers/batches", {
      quantity: "2",
      validity: "1",
      validity_unit: "days",
      usage_limit: "1",
      plan_id: String(plan.id),
    });
    assert.equal(batch.status, 303, batch.text);
    const batchPage = await client.get(batch.location!);
    assert.match(batchPage.text, new RegExp(`<option value="${plan.id}" selected>gold</option>`));

    const refused = await client.post(`/console/plans/${plan.id}/delete`, {});
    assert.equal(refused.status, 409);
    assert.match(refused.text, /in use by 1 user\(s\), 1 group\(s\) and 1 voucher batch\(es\)/);
    assert.ok(await server.core.plans.exists(accountId, plan.id));

    await client.post(`/console/users/${user.id}`, { username: "alice", plan_id: "" });
    await client.post(`/console/groups/${staff!.id}/plan`, { plan_id: "" });
    const batchId = /batches\/(\d+)/.exec(batch.location!)![1];
    await client.post(`/console/vouchers/batches/${batchId}/plan`, { plan_id: "" });
    const deleted = await client.post(`/console/plans/${plan.id}/delete`, {});
    assert.equal(deleted.status, 303, deleted.text);
    assert.equal(await server.core.plans.exists(accountId, plan.id), false);
  });

  test("the vendor select and time zone of a network are saved", async () => {
    const { network } = await server.core.networks.create(accountId, { name: "hq", nas_ip: "127.0.0.9" });
    const form = await client.get(`/console/networks/${network.id}/edit`);
    assert.match(form.text, /<option value="generic" selected>generic<\/option>/);
    assert.match(form.text, /<option value="meraki">meraki<\/option>/);
    const fields = { name: "hq", nas_ip: "127.0.0.9", coa_port: "3799", coa_rate: "20" };
    const bad = await client.post(`/console/networks/${network.id}`, { ...fields, vendor: "nokia" });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /Gateway vendor must be one of generic, mikrotik/);
    const saved = await client.post(`/console/networks/${network.id}`, {
      ...fields,
      vendor: "mikrotik",
      time_zone: "Europe/Paris",
    });
    assert.equal(saved.status, 303, saved.text);
    const stored = await server.core.networks.get(accountId, network.id);
    assert.equal(stored.vendor, "mikrotik");
    assert.equal(stored.time_zone, "Europe/Paris");
    const shown = await client.get(`/console/networks/${network.id}`);
    assert.match(shown.text, /<dt>Gateway vendor<\/dt><dd>mikrotik<\/dd>/);
  });
});

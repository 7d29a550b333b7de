// /api/plans end to end, and plan_id on users, groups and voucher batches: a real server on SQLite
// and PostgreSQL. CRUD, bad input answered in the error shape with nothing written, another
// account's plans answering 404, a plan in use refused on delete with its counts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

for (const { dialect, skip } of await dialects()) {
  describe(`plans API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;

    before(async () => {
      server = await startTestServer({ dialect });
      key = await server.key("default", { rateLimit: 100_000 });
      otherKey = await server.key("other", { rateLimit: 100_000 });
    });
    after(() => server?.stop());

    const call = (method: string, path: string, body?: unknown, k = key) =>
      server.call(method, path, body === undefined ? { key: k } : { key: k, body });

    test("create, get, list, update, delete", async () => {
      const created = await call("POST", "/api/plans", {
        name: "Basic",
        description: "5 Mbit/s, 2 GB a day",
        download_kbps: 5000,
        upload_kbps: 1000,
        data_quota: 2_000_000_000,
        data_period: "day",
        devices: 2,
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.headers.get("location"), `/api/plans/${created.body.id}`);
      assert.deepEqual(
        { ...created.body, id: 0, created: "", updated: "" },
        {
          id: 0,
          name: "Basic",
          description: "5 Mbit/s, 2 GB a day",
          download_kbps: 5000,
          upload_kbps: 1000,
          data_quota: 2_000_000_000,
          data_period: "day",
          time_quota: null,
          time_period: null,
          validity: null,
          devices: 2,
          role: "",
          created: "",
          updated: "",
        },
      );
      const id = created.body.id;
      assert.deepEqual((await call("GET", `/api/plans/${id}`)).body, created.body);
      const list = await call("GET", "/api/plans?sort=-name");
      assert.equal(list.status, 200);
      assert.equal(list.body.total, 1);
      const updated = await call("PATCH", `/api/plans/${id}`, {
        download_kbps: null,
        time_quota: 7200,
        time_period: "month",
      });
      assert.equal(updated.status, 200, updated.text);
      assert.equal(updated.body.download_kbps, null);
      assert.equal(updated.body.time_quota, 7200);
      assert.equal(updated.body.upload_kbps, 1000, "fields not given are kept");
      assert.equal((await call("DELETE", `/api/plans/${id}`)).status, 204);
      assert.equal((await call("GET", `/api/plans/${id}`)).status, 404);
    });

    test("bad input: a clear 400 each, nothing written", async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ name: "neg", download_kbps: -1 }, /download_kbps/],
        [{ name: "fast", upload_kbps: 100_000_001 }, /upload_kbps/],
        [{ name: "huge", data_quota: 2 ** 53, data_period: "day" }, /data_quota/],
        [{ name: "period", time_quota: 60, time_period: "week" }, /time_period/],
        [{ name: "lonely", data_quota: 1000 }, /data_period is required/],
        [{ name: "orphan", time_period: "day" }, /time_quota is required/],
        [{ name: "frac", devices: 1.5 }, /devices/],
        [{ name: "" }, /name/],
        [{ name: "role", role: "has space" }, /role/],
        [{ name: "extra", speed: 3 }, /speed/],
      ];
      for (const [body, message] of cases) {
        const res = await call("POST", "/api/plans", body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(typeof res.body.message, "string");
        assert.match(JSON.stringify(res.body), message, JSON.stringify(body));
      }
      assert.equal((await call("GET", "/api/plans")).body.total, 0);
      const plan = await call("POST", "/api/plans", { name: "Kept", data_quota: 10, data_period: "month" });
      // Clearing the period alone would leave a quota without one: refused, the plan unchanged.
      const half = await call("PATCH", `/api/plans/${plan.body.id}`, { data_period: null });
      assert.equal(half.status, 400);
      assert.equal((await call("GET", `/api/plans/${plan.body.id}`)).body.data_period, "month");
      assert.equal((await call("POST", "/api/plans", { name: "Kept" })).status, 409);
    });

    test("plan_id on users, groups and batches; another account's plan is 404; delete refused in use", async () => {
      const plan = (await call("POST", "/api/plans", { name: "Assigned", devices: 1 })).body;
      const foreign = (await call("POST", "/api/plans", { name: "Theirs" }, otherKey)).body;
      assert.equal((await call("GET", `/api/plans/${foreign.id}`)).status, 404);
      assert.equal((await call("PATCH", `/api/plans/${foreign.id}`, { devices: 3 })).status, 404);
      assert.equal((await call("DELETE", `/api/plans/${foreign.id}`)).status, 404);

      const user = await call("POST", "/api/users", {
        username: "planned",
        password: "pw",
        plan_id: plan.id,
      });
      assert.equal(user.status, 201, user.text);
      assert.equal(user.body.plan_id, plan.id);
      assert.equal((await call("GET", `/api/users/${user.body.id}`)).body.plan_id, plan.id);
      const listed = (await call("GET", "/api/users?search=planned")).body.data[0];
      assert.equal(listed.plan_id, plan.id);
      const stranger = await call("POST", "/api/users", {
        username: "x-plan",
        password: "pw",
        plan_id: foreign.id,
      });
      assert.equal(stranger.status, 404);
      assert.equal((await call("GET", "/api/users?search=x-plan")).body.total, 0, "nothing written");
      assert.equal((await call("PATCH", `/api/users/${user.body.id}`, { plan_id: foreign.id })).status, 404);

      const group = await call("POST", "/api/groups", { name: "planned-group", plan_id: plan.id });
      assert.equal(group.status, 201, group.text);
      assert.equal(group.body.plan_id, plan.id);
      assert.equal(
        (await call("PATCH", `/api/groups/${group.body.id}`, { plan_id: foreign.id })).status,
        404,
      );

      const batch = await call("POST", "/api/vouchers/batch", {
        quantity: 2,
        validity: 3600,
        plan_id: plan.id,
      });
      assert.equal(batch.status, 201, batch.text);
      assert.equal(batch.body.plan_id, plan.id);
      const foreignBatch = await call("POST", "/api/vouchers/batch", {
        quantity: 2,
        validity: 3600,
        plan_id: foreign.id,
      });
      assert.equal(foreignBatch.status, 404);

      const refused = await call("DELETE", `/api/plans/${plan.id}`);
      assert.equal(refused.status, 409);
      assert.match(refused.body.message, /1 user\(s\), 1 group\(s\) and 1 voucher batch\(es\)/);
      // Unassigned everywhere, it goes.
      assert.equal((await call("PATCH", `/api/users/${user.body.id}`, { plan_id: null })).body.plan_id, null);
      assert.equal((await call("PATCH", `/api/groups/${group.body.id}`, { plan_id: null })).status, 200);
      const cleared = await call("PATCH", `/api/vouchers/batch/${batch.body.batch_id}`, { plan_id: null });
      assert.deepEqual(cleared.body, { batch_id: batch.body.batch_id, plan_id: null });
      assert.equal((await call("DELETE", `/api/plans/${plan.id}`)).status, 204);
    });

    test("permissions: plans:read cannot write", async () => {
      const reader = await server.key("default", { permissions: "plans:read", rateLimit: 100_000 });
      assert.equal((await call("GET", "/api/plans", undefined, reader)).status, 200);
      assert.equal((await call("POST", "/api/plans", { name: "nope" }, reader)).status, 403);
    });
  });
}

// audit.* webhooks (issue 29 point 3): an audit row becomes an event in the same transaction only
// for an account with an endpoint naming an audit kind (opt-in: "all" predates them and does not
// include them), with the row's masked fields as its data.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MASK } from "../../src/core/audit/mask.ts";
import { subscribes } from "../../src/core/webhooks/rules.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

test("audit kinds go only to endpoints that name them", () => {
  assert.equal(subscribes(["*"], "audit.created"), false);
  assert.equal(subscribes(["*"], "user.created"), true);
  assert.equal(subscribes(["audit.created"], "audit.created"), true);
  assert.equal(subscribes(["audit.created"], "audit.deleted"), false);
});

for (const { dialect, skip } of await dialects()) {
  describe(`audit.* events on ${dialect}`, { skip }, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ dialect });
    });
    after(() => server?.stop());

    const auditEvents = (accountId: number) =>
      server.core.database.db
        .selectFrom("events")
        .selectAll()
        .where("account_id", "=", accountId)
        .where("kind", "like", "audit.%")
        .orderBy("id")
        .execute();

    test("an endpoint naming audit kinds gets one event per change; an 'all' endpoint's account none", async () => {
      const subscribed = await server.account("default");
      const other = await server.core.accounts.create(`other-${dialect}`);
      await server.core.webhooks.create(subscribed.id, {
        url: "https://hooks.example.com/audit",
        events: ["audit.created", "audit.deleted"],
      });
      await server.core.webhooks.create(other.id, { url: "https://hooks.example.com/all", events: "all" });
      const key = await server.key(subscribed, { permissions: "full" });
      const startSubscribed = (await auditEvents(subscribed.id)).length;

      const made = await server.call("POST", "/api/users", {
        key,
        body: { username: "hooked", password: "hunter2" },
      });
      assert.equal(made.status, 201, made.text);
      const gone = await server.call("DELETE", `/api/users/${made.body.id}`, { key });
      assert.ok(gone.status < 300, gone.text);
      const otherKey = await server.key(other, { permissions: "full" });
      const quiet = await server.call("POST", "/api/users", { key: otherKey, body: { username: "quiet" } });
      assert.equal(quiet.status, 201, quiet.text);

      const events = (await auditEvents(subscribed.id)).slice(startSubscribed);
      assert.deepEqual(
        events.map((e) => e.kind),
        ["audit.created", "audit.deleted"],
      );
      const data = JSON.parse(events[0]!.data);
      assert.equal(data.resource, "user");
      assert.equal(data.action, "create");
      assert.equal(data.actor_type, "api_key");
      assert.equal(data.after.password, MASK);
      assert.doesNotMatch(events[0]!.data, /hunter2/);
      assert.deepEqual(await auditEvents(other.id), [], "'all' does not include audit kinds");
    });
  });
}

// The audit log through the console (issue 29 point 3): a change made by a signed-in admin is one row
// naming the admin, their role and address; the /console/audit page filters by actor, resource,
// action and dates, pages, exports CSV, refuses bad dates with a 400 page, and is open to the roles
// holding audit:read (owner, admin, read-only) only. Plus the rows of network settings added since
// (vendor, time zone, CoA fallback and rate), before and after.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { runAs } from "../../src/core/audit/context.ts";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const PASSWORD = "audit console password";

for (const { dialect, skip } of await dialects()) {
  describe(`audit log in the console on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let account: AccountRow;
    let owner: ConsoleClient;
    const email = (role: string) => `${role}-${dialect}@example.com`;

    before(async () => {
      server = await startTestServer({ dialect });
      account = await server.account("default");
      for (const role of ["owner", "read_only", "help_desk", "admin"] as const)
        await server.core.admins.create(account, { email: email(role), password: PASSWORD, role });
      owner = new ConsoleClient(server.url);
      assert.equal((await owner.login(email("owner"), PASSWORD)).status, 303);
    });
    after(() => server?.stop());

    const rows = () => server.core.database.db.selectFrom("audit_log").selectAll().orderBy("id").execute();
    const idOf = async (who: string) =>
      (await server.core.admins.list(account.id)).find((a) => a.email === who)!.id;

    test("a console change is one row naming the admin, their role and address", async () => {
      const target = await idOf(email("help_desk"));
      const start = (await rows()).length;
      await owner.get("/console/team");
      const changed = await owner.post(`/console/team/${target}/role`, { role: "voucher_desk" });
      assert.equal(changed.status, 303, changed.text.slice(0, 300));
      const added = (await rows()).slice(start);
      assert.equal(added.length, 1, JSON.stringify(added));
      const row = added[0]!;
      assert.equal(row.actor_type, "admin");
      assert.equal(row.actor_id, String(await idOf(email("owner"))));
      assert.equal(row.actor_name, email("owner"));
      assert.equal(row.actor_role, "owner");
      assert.equal(row.address, "127.0.0.1");
      assert.equal(row.resource, "admin");
      assert.equal(row.resource_id, String(target));
      assert.equal(row.action, "update");
      assert.equal(JSON.parse(row.before!).role, "help_desk");
      assert.equal(JSON.parse(row.after!).role, "voucher_desk");
      // Back, for the role checks below.
      await owner.post(`/console/team/${target}/role`, { role: "help_desk" });
    });

    test("console forms by other roles: one row with their role; a refused form writes none", async () => {
      const cases: { role: string; path: string; fields: Record<string, string>; resource: string }[] = [
        { role: "admin", path: "/console/groups", fields: { name: `walk-${dialect}` }, resource: "group" },
        {
          role: "help_desk",
          path: "/console/users",
          fields: { username: `walker-${dialect}`, password: "a walking password" },
          resource: "user",
        },
        { role: "help_desk", path: "/console/groups", fields: { name: "refused" }, resource: "" },
      ];
      for (const c of cases) {
        const client = new ConsoleClient(server.url);
        assert.equal((await client.login(email(c.role), PASSWORD)).status, 303);
        await client.get("/console");
        const start = (await rows()).length;
        const answer = await client.post(c.path, c.fields);
        const added = (await rows()).slice(start);
        if (!c.resource) {
          assert.equal(answer.status, 403, `${c.role} ${c.path}`);
          assert.equal(added.length, 0, `${c.role} ${c.path}: refused, nothing written`);
          continue;
        }
        assert.equal(answer.status, 303, `${c.role} ${c.path}: ${answer.text.slice(0, 300)}`);
        assert.equal(added.length, 1, `${c.role} ${c.path}: ${added.map((r) => r.resource)}`);
        assert.deepEqual(
          [
            added[0]!.actor_type,
            added[0]!.actor_name,
            added[0]!.actor_role,
            added[0]!.resource,
            added[0]!.action,
          ],
          ["admin", email(c.role), c.role, c.resource, "create"],
        );
      }
      const user = (await rows()).find((r) => r.resource === "user" && r.actor_role === "help_desk")!;
      assert.doesNotMatch(`${user.after}`, /a walking password/);
    });

    test("network settings added since (vendor, time zone, CoA fallback and rate) are in the row", async () => {
      const { network } = await server.core.networks.create(account.id, {
        name: `site-${dialect}`,
        nas_ip: "",
      });
      const start = (await rows()).length;
      const actor = { type: "cli" as const, id: "ops", name: "ops", role: "", address: "local" };
      await runAs(actor, () =>
        server.core.networks.update(account.id, network.id, {
          vendor: "mikrotik",
          time_zone: "Europe/Paris",
          coa_fallback: "disconnect",
          coa_rate: 7,
        }),
      );
      const added = (await rows()).slice(start);
      assert.equal(added.length, 1);
      assert.equal(added[0]!.actor_type, "cli");
      const [was, now] = [JSON.parse(added[0]!.before!), JSON.parse(added[0]!.after!)];
      assert.deepEqual(
        [now.vendor, now.time_zone, now.coa_fallback, now.coa_rate],
        ["mikrotik", "Europe/Paris", "disconnect", 7],
      );
      assert.notEqual(was.vendor, "mikrotik");
      assert.equal(now.secret, "********", "the RADIUS secret is masked");
    });

    test("/console/audit: filters, pages, CSV export, bad dates", async () => {
      // 60 rows of one resource so that it takes two pages of 50.
      const now = `${new Date().toISOString().slice(0, 19)}Z`;
      await server.core.database.db
        .insertInto("audit_log")
        .values(
          Array.from({ length: 60 }, (_, i) => ({
            account_id: account.id,
            created: now,
            actor_type: "api_key",
            actor_id: "77",
            actor_name: "paging key",
            resource: "paged_thing",
            resource_id: String(i),
            action: "create",
            before: null,
            after: JSON.stringify({ n: i }),
          })),
        )
        .execute();
      const first = await owner.get("/console/audit?resource=paged_thing");
      assert.equal(first.status, 200);
      assert.match(first.text, /1–50 of 60/);
      assert.equal((first.text.match(/create paged_thing/g) ?? []).length, 50);
      assert.match(first.text, /href="\/console\/audit\?resource=paged_thing&amp;page=2"/);
      const second = await owner.get("/console/audit?resource=paged_thing&page=2");
      assert.match(second.text, /51–60 of 60/);

      const byActor = await owner.get(
        `/console/audit?actor=${encodeURIComponent(email("owner"))}&action=update`,
      );
      assert.match(byActor.text, /update admin/);
      assert.doesNotMatch(byActor.text, /paged_thing/);
      const today = now.slice(0, 10);
      const dated = await owner.get(`/console/audit?resource=paged_thing&from=${today}&to=${today}`);
      assert.match(dated.text, /1–50 of 60/, "a `to` day includes the whole day");
      const past = await owner.get("/console/audit?resource=paged_thing&from=2020-01-01&to=2020-01-31");
      assert.match(past.text, /No change matches/);

      const csv = await owner.get("/console/audit.csv?resource=paged_thing");
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get("content-type") ?? "", /^text\/csv/);
      assert.equal(csv.headers.get("x-total-count"), "60");
      const lines = csv.text.trim().split(/\r?\n/);
      assert.equal(lines.length, 61, "a header and all 60 rows (not one page)");
      assert.match(lines[0]!, /^id,time,actor_type,actor_id,actor_name/);
      assert.match(first.text, /href="\/console\/audit.csv\?resource=paged_thing"/);

      for (const bad of [
        "from=2025-13-40",
        "from=2025-02-01&to=2025-01-01",
        "from=2020-01-01&to=2025-01-01",
      ]) {
        const page = await owner.get(`/console/audit?${bad}`);
        assert.equal(page.status, 400, bad);
        assert.match(page.text, /role="alert"/, bad);
      }
    });

    test("owner, admin and read-only see the log; help desk is refused", async () => {
      for (const [role, status] of [
        ["read_only", 200],
        ["admin", 200],
        ["help_desk", 403],
      ] as const) {
        const client = new ConsoleClient(server.url);
        assert.equal((await client.login(email(role), PASSWORD)).status, 303);
        assert.equal((await client.get("/console/audit")).status, status, role);
        assert.equal((await client.get("/console/audit.csv")).status, status, role);
      }
    });
  });
}

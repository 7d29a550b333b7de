import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

type Member = { group_id: number; userid: number; username: string; priority: number };
type Item = {
  id: number;
  group_id: number;
  attribute: string;
  operator: string;
  value: string;
  table: string;
};

for (const { dialect, skip } of await dialects()) {
  describe(`groups API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let accountId: number;

    before(async () => {
      server = await startTestServer({ dialect });
      key = await server.key("default", { rateLimit: 100_000 });
      accountId = (await server.account("default")).id;
    });
    after(() => server?.stop());

    const db = () => server.core.database.db;
    const call = (method: string, path: string, body?: unknown, k = key) =>
      server.call(method, path, { key: k, body });
    const newGroup = async (name: string, description?: string, k = key) => {
      const res = await call("POST", "/api/groups", { name, description }, k);
      assert.equal(res.status, 201, res.text);
      return res.body as { id: number; name: string };
    };
    const newUser = async (username: string, k = key) => {
      const res = await call("POST", "/api/users", { username }, k);
      assert.equal(res.status, 201, res.text);
      return res.body as { id: number; username: string };
    };
    const join = (groupId: number, body: unknown, k = key) =>
      call("POST", `/api/groups/${groupId}/users`, body, k);
    const addItem = (groupId: number, body: unknown, k = key) =>
      call("POST", `/api/groups/${groupId}/attributes`, body, k);
    const radiusRows = async (groupname: string) => ({
      members: await db()
        .selectFrom("radusergroup")
        .select(["account_id", "username", "groupname", "priority"])
        .where("groupname", "=", groupname)
        .orderBy("id")
        .execute(),
      check: await db()
        .selectFrom("radgroupcheck")
        .select(["account_id", "groupname", "attribute", "op", "value"])
        .where("groupname", "=", groupname)
        .orderBy("id")
        .execute(),
      reply: await db()
        .selectFrom("radgroupreply")
        .select(["account_id", "groupname", "attribute", "op", "value"])
        .where("groupname", "=", groupname)
        .orderBy("id")
        .execute(),
    });

    test("create answers 201 with the group and a Location; description defaults to empty", async () => {
      const res = await call("POST", "/api/groups", { name: "staff", description: "Office staff" });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers.get("location"), `/api/groups/${res.body.id}`);
      assert.deepEqual(Object.keys(res.body).sort(), [
        "created",
        "description",
        "id",
        "name",
        "plan_id",
        "updated",
      ]);
      assert.equal(res.body.name, "staff");
      assert.equal(res.body.description, "Office staff");
      assert.match(res.body.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const got = await call("GET", `/api/groups/${res.body.id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, res.body);
      const bare = await call("POST", "/api/groups", { name: "guests" });
      assert.equal(bare.status, 201);
      assert.equal(bare.body.description, "");
      const row = await db()
        .selectFrom("groups")
        .select(["account_id", "name", "description"])
        .where("id", "=", res.body.id)
        .executeTakeFirst();
      assert.deepEqual(row, { account_id: accountId, name: "staff", description: "Office staff" });
    });

    test("names are unique per account ignoring case: 409, nothing written", async () => {
      const before = (await call("GET", "/api/groups?limit=1000")).body.total;
      const res = await call("POST", "/api/groups", { name: "STAFF" });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 409);
      assert.match(res.body.message, /already exists/);
      assert.equal((await call("GET", "/api/groups?limit=1000")).body.total, before);
    });

    test("bad bodies answer 400 naming the field, and write nothing", async () => {
      const cases: [unknown, string][] = [
        [{}, "name"],
        [{ name: "" }, "name"],
        [{ name: "has space" }, "name"],
        [{ name: "x".repeat(65) }, "name"],
        [{ name: "o'brien" }, "name"],
        [{ name: "a%b" }, "name"],
        [{ name: 42 }, "name"],
        [{ name: "valid", description: "a\u0000b" }, "description"],
        [{ name: "valid", description: "tab\there" }, "description"],
        [{ name: "valid", description: "x".repeat(256) }, "description"],
        [{ name: "valid", description: 1 }, "description"],
        [{ name: "valid", nmae: "typo" }, "nmae"],
        [{ name: "valid", id: 3 }, "id"],
        [[], "body"],
        [null, "body"],
      ];
      for (const [body, field] of cases) {
        const res = await call("POST", "/api/groups", body);
        assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.status} ${res.text}`);
        assert.ok(
          res.body.details?.some((d: { field: string }) => d.field === field),
          `${JSON.stringify(body)} should name ${field}: ${res.text}`,
        );
      }
      assert.equal((await call("GET", "/api/groups?search=valid")).body.total, 0);
      const longest = await call("POST", "/api/groups", {
        name: "x".repeat(64),
        description: "é".repeat(255),
      });
      assert.equal(longest.status, 201, longest.text);
    });

    test("list paginates with true totals; search is case-insensitive on name and description", async () => {
      for (let i = 0; i < 7; i++) await newGroup(`pg${i}`, i === 3 ? "Has 100% of_it" : "");
      const first = await call("GET", "/api/groups?search=pg&limit=3");
      assert.equal(first.status, 200);
      assert.deepEqual(Object.keys(first.body).sort(), ["data", "limit", "page", "total"]);
      assert.equal(first.body.total, 7);
      assert.deepEqual(
        first.body.data.map((g: { name: string }) => g.name),
        ["pg0", "pg1", "pg2"],
      );
      const third = await call("GET", "/api/groups?search=pg&limit=3&page=3");
      assert.deepEqual(
        third.body.data.map((g: { name: string }) => g.name),
        ["pg6"],
      );
      const past = await call("GET", "/api/groups?search=pg&limit=3&page=4");
      assert.deepEqual(past.body.data, []);
      assert.equal(past.body.total, 7);
      for (const search of ["PG3", "has 100", "100%", "OF_IT"]) {
        const res = await call("GET", `/api/groups?search=${encodeURIComponent(search)}`);
        assert.deepEqual(
          res.body.data.map((g: { name: string }) => g.name),
          ["pg3"],
          search,
        );
      }
      assert.equal((await call("GET", "/api/groups?search=%25")).body.total, 1);
      assert.equal((await call("GET", "/api/groups?search=_")).body.total, 1);
      assert.equal((await call("GET", "/api/groups?search=pg_")).body.total, 0);
      for (const query of [
        "page=0",
        "limit=1001",
        "limit=x",
        "sort=description",
        `search=${"s".repeat(101)}`,
      ]) {
        assert.equal((await call("GET", `/api/groups?${query}`)).status, 400, query);
      }
      const defaults = await call("GET", "/api/groups");
      assert.equal(defaults.body.limit, 50);
      assert.equal(defaults.body.page, 1);
    });

    test("bad ids answer 400, unknown ones 404", async () => {
      for (const id of ["abc", "0", "-1", "1.5", "99999999999999999999"]) {
        assert.equal((await call("GET", `/api/groups/${id}`)).status, 400, id);
        assert.equal((await call("DELETE", `/api/groups/${id}`)).status, 400, id);
        assert.equal((await call("GET", `/api/groups/${id}/users`)).status, 400, id);
        assert.equal((await call("GET", `/api/groups/${id}/attributes`)).status, 400, id);
      }
      const missing = await call("GET", "/api/groups/999999");
      assert.deepEqual(missing.body, { error: true, message: "group 999999 not found", code: 404 });
      assert.equal((await call("PUT", "/api/groups/999999", { description: "x" })).status, 404);
      assert.equal((await call("DELETE", "/api/groups/999999")).status, 404);
      assert.equal((await call("GET", "/api/groups/999999/users")).status, 404);
      assert.equal((await call("GET", "/api/groups/999999/attributes")).status, 404);
      assert.equal((await join(999999, { userid: 1 })).status, 404);
    });

    test("PUT is a partial update and PATCH its synonym", async () => {
      const g = await newGroup("editors", "first");
      const put = await call("PUT", `/api/groups/${g.id}`, { description: "second" });
      assert.equal(put.status, 200);
      assert.equal(put.body.name, "editors");
      assert.equal(put.body.description, "second");
      const patch = await call("PATCH", `/api/groups/${g.id}`, { name: "Editors" });
      assert.equal(patch.status, 200, "a group may change the case of its own name");
      assert.equal(patch.body.name, "Editors");
      assert.equal(patch.body.description, "second");
      const bad = await call("PUT", `/api/groups/${g.id}`, { name: "bad name", description: "changed" });
      assert.equal(bad.status, 400);
      assert.equal((await call("GET", `/api/groups/${g.id}`)).body.description, "second");
      const clash = await call("PUT", `/api/groups/${g.id}`, { name: "Staff" });
      assert.equal(clash.status, 409);
    });

    test("membership: 201 with default priority 1, stored in radusergroup; 409 when already a member", async () => {
      const g = await newGroup("wifi");
      const ada = await newUser("ada");
      const res = await join(g.id, { userid: ada.id });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body, { group_id: g.id, userid: ada.id, username: "ada", priority: 1 });
      assert.equal(res.headers.get("location"), `/api/groups/${g.id}/users/${ada.id}`);
      const got = await call("GET", res.headers.get("location")!);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, res.body);
      const again = await join(g.id, { userid: ada.id, priority: 5 });
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 409);
      assert.deepEqual((await radiusRows("wifi")).members, [
        { account_id: accountId, username: "ada", groupname: "wifi", priority: 1 },
      ]);
    });

    test("membership refusals: unknown user 404, bad priority or fields 400; nothing written", async () => {
      const g = await newGroup("lab");
      const ben = await newUser("ben");
      const missing = await join(g.id, { userid: 999999 });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.message, "user 999999 not found");
      const cases: [unknown, string][] = [
        [{}, "userid"],
        [{ userid: "1" }, "userid"],
        [{ userid: 0 }, "userid"],
        [{ userid: ben.id, priority: -1 }, "priority"],
        [{ userid: ben.id, priority: 1_000_001 }, "priority"],
        [{ userid: ben.id, priority: 1.5 }, "priority"],
        [{ userid: ben.id, priority: "2" }, "priority"],
        [{ userid: ben.id, username: "ben" }, "username"],
      ];
      for (const [body, field] of cases) {
        const res = await join(g.id, body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.ok(
          res.body.details?.some((d: { field: string }) => d.field === field),
          `${JSON.stringify(body)} should name ${field}: ${res.text}`,
        );
      }
      assert.deepEqual((await radiusRows("lab")).members, []);
      for (const priority of [0, 1_000_000]) {
        const other = await newUser(`ben${priority}`);
        assert.equal((await join(g.id, { userid: other.id, priority })).status, 201);
      }
    });

    test("members list by priority then username, paginated; remove answers 204 then 404", async () => {
      const g = await newGroup("ordered");
      const names = ["zed", "amy", "kai", "bea"];
      const priorities = [1, 2, 1, 0];
      const ids: Record<string, number> = {};
      for (const [i, name] of names.entries()) {
        ids[name] = (await newUser(name)).id;
        assert.equal((await join(g.id, { userid: ids[name], priority: priorities[i] })).status, 201);
      }
      const all = await call("GET", `/api/groups/${g.id}/users`);
      assert.equal(all.status, 200);
      assert.equal(all.body.total, 4);
      assert.deepEqual(
        all.body.data.map((m: Member) => [m.username, m.priority]),
        [
          ["bea", 0],
          ["kai", 1],
          ["zed", 1],
          ["amy", 2],
        ],
      );
      const second = await call("GET", `/api/groups/${g.id}/users?limit=3&page=2`);
      assert.deepEqual(
        second.body.data.map((m: Member) => m.username),
        ["amy"],
      );
      assert.equal(second.body.total, 4);
      const removed = await call("DELETE", `/api/groups/${g.id}/users/${ids.kai}`);
      assert.equal(removed.status, 204);
      assert.equal(removed.text, "");
      const again = await call("DELETE", `/api/groups/${g.id}/users/${ids.kai}`);
      assert.equal(again.status, 404);
      assert.equal(again.body.message, `user ${ids.kai} is not a member of group ${g.id}`);
      assert.equal((await call("GET", `/api/groups/${g.id}/users/${ids.kai}`)).status, 404);
      assert.equal((await call("GET", `/api/users/${ids.kai}`)).status, 200, "the user stays");
      assert.deepEqual(
        (await radiusRows("ordered")).members.map((m) => m.username),
        ["zed", "amy", "bea"],
      );
      assert.equal((await call("DELETE", `/api/groups/${g.id}/users/999999`)).status, 404);
      for (const bad of ["abc", "0"]) {
        assert.equal((await call("DELETE", `/api/groups/${g.id}/users/${bad}`)).status, 400);
      }
      // A renamed user stays a member under its new name; a deleted one leaves the group.
      assert.equal((await call("PUT", `/api/users/${ids.zed}`, { username: "zeta" })).status, 200);
      assert.equal((await call("DELETE", `/api/users/${ids.amy}`)).status, 204);
      const now = await call("GET", `/api/groups/${g.id}/users`);
      assert.deepEqual(
        now.body.data.map((m: Member) => m.username),
        ["bea", "zeta"],
      );
    });

    test("group attributes: both tables, stored with the groupname; list check then reply", async () => {
      const g = await newGroup("limited");
      const reply = await addItem(g.id, {
        attribute: "wispr-bandwidth-max-down",
        operator: ":=",
        value: "1024000",
        table: "radgroupreply",
      });
      assert.equal(reply.status, 201, reply.text);
      assert.deepEqual(reply.body, {
        id: reply.body.id,
        group_id: g.id,
        attribute: "WISPr-Bandwidth-Max-Down",
        operator: ":=",
        value: "1024000",
        table: "radgroupreply",
      });
      assert.equal(
        reply.headers.get("location"),
        `/api/groups/${g.id}/attributes/${reply.body.id}?table=radgroupreply`,
      );
      assert.deepEqual((await call("GET", reply.headers.get("location")!)).body, reply.body);
      const items: [string, string, string, string][] = [
        ["Simultaneous-Use", ":=", "1", "radgroupcheck"],
        ["Mikrotik-Rate-Limit", "=", "1M/2M", "radgroupreply"],
        ["ChilliSpot-Max-Total-Octets", ":=", "500000000", "radgroupreply"],
        ["Fall-Through", "=", "Yes", "radgroupreply"],
        ["NAS-Identifier", "==", "lobby", "radgroupcheck"],
        ["Cleartext-Password", ":=", "group-secret", "radgroupcheck"],
      ];
      for (const [attribute, operator, value, table] of items) {
        const res = await addItem(g.id, { attribute, operator, value, table });
        assert.equal(res.status, 201, `${attribute}: ${res.text}`);
      }
      const all = await call("GET", `/api/groups/${g.id}/attributes`);
      assert.equal(all.body.total, 7);
      assert.deepEqual(
        all.body.data.map((r: Item) => [r.table, r.attribute, r.value]),
        [
          ["radgroupcheck", "Simultaneous-Use", "1"],
          ["radgroupcheck", "NAS-Identifier", "lobby"],
          ["radgroupcheck", "Cleartext-Password", "********"],
          ["radgroupreply", "WISPr-Bandwidth-Max-Down", "1024000"],
          ["radgroupreply", "Mikrotik-Rate-Limit", "1M/2M"],
          ["radgroupreply", "ChilliSpot-Max-Total-Octets", "500000000"],
          ["radgroupreply", "Fall-Through", "Yes"],
        ],
      );
      assert.ok(!all.text.includes("group-secret"));
      const checks = await call("GET", `/api/groups/${g.id}/attributes?table=radgroupcheck&limit=2&page=2`);
      assert.equal(checks.body.total, 3);
      assert.deepEqual(
        checks.body.data.map((r: Item) => r.attribute),
        ["Cleartext-Password"],
      );
      const rows = await radiusRows("limited");
      assert.deepEqual(rows.check, [
        { account_id: accountId, groupname: "limited", attribute: "Simultaneous-Use", op: ":=", value: "1" },
        {
          account_id: accountId,
          groupname: "limited",
          attribute: "NAS-Identifier",
          op: "==",
          value: "lobby",
        },
        {
          account_id: accountId,
          groupname: "limited",
          attribute: "Cleartext-Password",
          op: ":=",
          value: "group-secret",
        },
      ]);
      assert.deepEqual(
        rows.reply.map((r) => [r.attribute, r.op.trim(), r.value]),
        [
          ["WISPr-Bandwidth-Max-Down", ":=", "1024000"],
          ["Mikrotik-Rate-Limit", "=", "1M/2M"],
          ["ChilliSpot-Max-Total-Octets", ":=", "500000000"],
          ["Fall-Through", "=", "Yes"],
        ],
      );
      const dup = await addItem(g.id, {
        attribute: "fall-through",
        operator: "=",
        value: "yes",
        table: "radgroupreply",
      });
      assert.equal(dup.status, 409, dup.text);
    });

    test("group attributes are checked by the same rules, and a refusal writes nothing", async () => {
      const g = await newGroup("strict");
      const base = { operator: ":=", table: "radgroupreply", value: "1" };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...base, attribute: "No-Such-Attribute" }, "attribute"],
        [{ ...base, attribute: "Session-Timeout", value: "soon" }, "value"],
        [{ ...base, attribute: "Framed-IP-Address", value: "1.2.3" }, "value"],
        [{ ...base, table: "radgroupcheck", attribute: "Expiration", value: "01/01/2030" }, "value"],
        [{ ...base, attribute: "Service-Type", value: "Nope" }, "value"],
        [{ ...base, attribute: "Session-Timeout", operator: "==" }, "operator"],
        [{ ...base, table: "radgroupcheck", attribute: "Session-Timeout", operator: "=" }, "operator"],
        [{ ...base, attribute: "Simultaneous-Use" }, "attribute"],
        [{ ...base, attribute: "Reply-Message", value: '"quoted"' }, "value"],
        [{ ...base, attribute: "Reply-Message", value: "%{exec:/bin/sh}" }, "value"],
        [{ ...base, attribute: "Reply-Message", value: "y".repeat(254) }, "value"],
        [{ ...base, table: "radgroupcheck", attribute: "User-Name", operator: "=~", value: "(" }, "value"],
        [{ ...base, attribute: "Reply-Message", table: "radreply" }, "table"],
        [{ ...base, attribute: "Reply-Message", group_id: g.id }, "group_id"],
      ];
      for (const [body, field] of cases) {
        const res = await addItem(g.id, body);
        const shown = `${JSON.stringify(body)} -> ${res.status} ${res.text}`;
        assert.equal(res.status, 400, shown);
        assert.ok(
          res.body.details?.some((d: { field: string }) => d.field === field),
          `should name ${field}: ${shown}`,
        );
      }
      const rows = await radiusRows("strict");
      assert.deepEqual([rows.check, rows.reply], [[], []]);
      for (const query of ["table=radcheck", "table=", "page=0", "userid=1"]) {
        assert.equal((await call("GET", `/api/groups/${g.id}/attributes?${query}`)).status, 400, query);
      }
    });

    test("deleting a group attribute: 204, then 404; another group's id answers 404", async () => {
      const a = await newGroup("group-a");
      const b = await newGroup("group-b");
      const item = { attribute: "Idle-Timeout", operator: "=", value: "30", table: "radgroupreply" };
      const ofA = await addItem(a.id, item);
      const ofB = await addItem(b.id, item);
      assert.equal(ofB.status, 201);
      const viaB = `/api/groups/${b.id}/attributes/${ofA.body.id}?table=radgroupreply`;
      assert.equal((await call("GET", viaB)).status, 404);
      assert.equal((await call("DELETE", viaB)).status, 404);
      assert.equal((await call("DELETE", `/api/groups/${a.id}/attributes/${ofA.body.id}`)).status, 400);
      const path = `/api/groups/${a.id}/attributes/${ofA.body.id}?table=radgroupreply`;
      const res = await call("DELETE", path);
      assert.equal(res.status, 204);
      assert.equal(res.text, "");
      const again = await call("DELETE", path);
      assert.equal(again.status, 404);
      assert.equal(again.body.message, `attribute ${ofA.body.id} not found in radgroupreply`);
      assert.equal((await radiusRows("group-a")).reply.length, 0);
      assert.equal((await radiusRows("group-b")).reply.length, 1);
    });

    test("renaming a group carries its memberships and attributes along", async () => {
      const g = await newGroup("old-name");
      const cat = await newUser("cat");
      assert.equal((await join(g.id, { userid: cat.id, priority: 3 })).status, 201);
      for (const table of ["radgroupcheck", "radgroupreply"]) {
        const res = await addItem(g.id, {
          attribute: "Acct-Interim-Interval",
          operator: ":=",
          value: "60",
          table,
        });
        assert.equal(res.status, 201, res.text);
      }
      const renamed = await call("PUT", `/api/groups/${g.id}`, { name: "new-name" });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.name, "new-name");
      const old = await radiusRows("old-name");
      assert.deepEqual([old.members, old.check, old.reply], [[], [], []]);
      const moved = await radiusRows("new-name");
      assert.deepEqual(moved.members, [
        { account_id: accountId, username: "cat", groupname: "new-name", priority: 3 },
      ]);
      assert.equal(moved.check.length, 1);
      assert.equal(moved.reply.length, 1);
      assert.equal((await call("GET", `/api/groups/${g.id}/users`)).body.total, 1);
      assert.equal((await call("GET", `/api/groups/${g.id}/attributes`)).body.total, 2);
    });

    test("racing writes: one membership wins; rows added during a rename follow the new name", async () => {
      const g = await newGroup("race");
      const rex = await newUser("rex");
      const joins = await Promise.all(Array.from({ length: 6 }, () => join(g.id, { userid: rex.id })));
      assert.deepEqual(joins.map((res) => res.status).sort(), [201, 409, 409, 409, 409, 409]);
      const [renamed, ...added] = await Promise.all([
        call("PUT", `/api/groups/${g.id}`, { name: "race-renamed" }),
        ...Array.from({ length: 5 }, (_, i) =>
          addItem(g.id, {
            attribute: "Reply-Message",
            operator: "+=",
            value: `m${i}`,
            table: "radgroupreply",
          }),
        ),
      ]);
      assert.equal(renamed?.status, 200);
      assert.ok(added.every((res) => res.status === 201));
      const old = await radiusRows("race");
      assert.deepEqual([old.members, old.reply], [[], []]);
      const now = await radiusRows("race-renamed");
      assert.equal(now.members.length, 1);
      assert.equal(now.reply.length, 5);
    });

    test("deleting a group deletes its memberships and attributes; its users stay", async () => {
      const g = await newGroup("doomed");
      const dan = await newUser("dan");
      await call("POST", "/api/attributes", {
        userid: dan.id,
        attribute: "Cleartext-Password",
        operator: ":=",
        value: "pw",
        table: "radcheck",
      });
      const other = await newGroup("survivor");
      assert.equal((await join(g.id, { userid: dan.id })).status, 201);
      assert.equal((await join(other.id, { userid: dan.id })).status, 201);
      await addItem(g.id, {
        attribute: "Session-Timeout",
        operator: ":=",
        value: "60",
        table: "radgroupreply",
      });
      await addItem(g.id, {
        attribute: "Auth-Type",
        operator: ":=",
        value: "Reject",
        table: "radgroupcheck",
      });
      const res = await call("DELETE", `/api/groups/${g.id}`);
      assert.equal(res.status, 204);
      assert.equal(res.text, "");
      assert.equal((await call("GET", `/api/groups/${g.id}`)).status, 404);
      assert.equal((await call("DELETE", `/api/groups/${g.id}`)).status, 404);
      const rows = await radiusRows("doomed");
      assert.deepEqual([rows.members, rows.check, rows.reply], [[], [], []]);
      assert.equal((await call("GET", `/api/users/${dan.id}`)).status, 200);
      assert.equal((await call("GET", `/api/attributes?userid=${dan.id}`)).body.total, 1);
      assert.equal((await radiusRows("survivor")).members.length, 1);
    });

    test("permissions: groups:read to read, groups:write to change", async () => {
      const g = await newGroup("perm");
      const eli = await newUser("eli");
      const usersOnly = await server.key("default", { permissions: "users:read" });
      const forbidden = await call("GET", "/api/groups", undefined, usersOnly);
      assert.equal(forbidden.status, 403);
      assert.match(forbidden.body.message, /groups:read/);
      const reader = await server.key("default", { permissions: "read" });
      for (const path of [
        "/api/groups",
        `/api/groups/${g.id}`,
        `/api/groups/${g.id}/users`,
        `/api/groups/${g.id}/attributes`,
      ]) {
        assert.equal((await call("GET", path, undefined, reader)).status, 200, path);
      }
      const writes: [string, string, unknown][] = [
        ["POST", "/api/groups", { name: "nope" }],
        ["PUT", `/api/groups/${g.id}`, { description: "x" }],
        ["DELETE", `/api/groups/${g.id}`, undefined],
        ["POST", `/api/groups/${g.id}/users`, { userid: eli.id }],
        [
          "POST",
          `/api/groups/${g.id}/attributes`,
          { attribute: "Idle-Timeout", operator: "=", value: "1", table: "radgroupreply" },
        ],
      ];
      const attributesWriter = await server.key("default", { permissions: "attributes:write,users:write" });
      for (const [method, path, body] of writes) {
        const res = await call(method, path, body, reader);
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.match(res.body.message, /groups:write/);
        assert.equal((await call(method, path, body, attributesWriter)).status, 403, `${method} ${path}`);
      }
      const writer = await server.key("default", { permissions: "groups:write" });
      assert.equal((await join(g.id, { userid: eli.id }, writer)).status, 201);
      assert.equal((await call("GET", `/api/groups/${g.id}/users`, undefined, writer)).body.total, 1);
      assert.equal((await call("GET", `/api/groups/${g.id}`)).body.description, "");
    });

    test("tenant isolation: another account's groups, users and group attributes answer 404", async () => {
      const otherKey = await server.key("other-tenant");
      const mine = await newGroup("shared-name");
      const myUser = await newUser("fred");
      const myItem = await addItem(mine.id, {
        attribute: "Idle-Timeout",
        operator: "=",
        value: "7",
        table: "radgroupreply",
      });
      const theirs = await newGroup("shared-name", "same name, other account", otherKey);
      const theirUser = await newUser("fred", otherKey);
      assert.equal((await call("GET", "/api/groups?search=shared", undefined, otherKey)).body.total, 1);
      for (const [method, path, body] of [
        ["GET", `/api/groups/${mine.id}`, undefined],
        ["PUT", `/api/groups/${mine.id}`, { description: "hijacked" }],
        ["DELETE", `/api/groups/${mine.id}`, undefined],
        ["GET", `/api/groups/${mine.id}/users`, undefined],
        ["POST", `/api/groups/${mine.id}/users`, { userid: theirUser.id }],
        ["GET", `/api/groups/${mine.id}/attributes`, undefined],
        [
          "POST",
          `/api/groups/${mine.id}/attributes`,
          { attribute: "Idle-Timeout", operator: "=", value: "8", table: "radgroupreply" },
        ],
        ["GET", `/api/groups/${mine.id}/attributes/${myItem.body.id}?table=radgroupreply`, undefined],
        ["DELETE", `/api/groups/${mine.id}/attributes/${myItem.body.id}?table=radgroupreply`, undefined],
        ["DELETE", `/api/groups/${theirs.id}/attributes/${myItem.body.id}?table=radgroupreply`, undefined],
      ] as const) {
        const res = await call(method, path, body, otherKey);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      }
      // My user cannot be put in their group, by them or by me.
      const foreignUser = await join(theirs.id, { userid: myUser.id }, otherKey);
      assert.equal(foreignUser.status, 404);
      assert.equal(foreignUser.body.message, `user ${myUser.id} not found`);
      assert.equal((await join(theirs.id, { userid: myUser.id })).status, 404);
      assert.equal((await join(mine.id, { userid: theirUser.id })).status, 404);
      const rows = await db()
        .selectFrom("radusergroup")
        .select(["account_id", "username"])
        .where("groupname", "=", "shared-name")
        .execute();
      assert.deepEqual(rows, []);
      const items = await db()
        .selectFrom("radgroupreply")
        .select(["account_id", "value"])
        .where("groupname", "=", "shared-name")
        .execute();
      assert.deepEqual(items, [{ account_id: accountId, value: "7" }]);
      assert.equal((await call("GET", `/api/groups/${mine.id}`)).body.description, "");
    });
  });
}

// `sort=<field>` / `sort=-<field>` on every list of the API (reports aside): the documented order
// (text ignoring case, missing values last, ties by the row's key in the sort's direction), pages
// that neither overlap nor skip, 400 for other fields, and every order named in the OpenAPI document.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ATTRIBUTE_SORT_FIELDS } from "../../src/core/attributes/rules.ts";
import { GROUP_SORT_FIELDS, MEMBER_SORT_FIELDS } from "../../src/core/groups/rules.ts";
import { NETWORK_SORT_FIELDS } from "../../src/core/networks/rules.ts";
import { PORTAL_SORT_FIELDS } from "../../src/core/portals/rules.ts";
import { ValidationError } from "../../src/core/shared/errors.ts";
import { USER_SORT_FIELDS } from "../../src/core/users/rules.ts";
import { VOUCHER_SORT_FIELDS } from "../../src/core/vouchers/rules.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

type Item = Record<string, string | number | null>;
interface Term {
  field: string;
  descending: boolean;
}

interface Endpoint {
  /** The path of the list, with the query it always needs. */
  path: string;
  /** The path as the OpenAPI document names it. */
  template: string;
  fields: readonly string[];
  /** Fields compared ignoring case. */
  text: readonly string[];
  /** Fields that make an item unique: the tie-break. */
  unique: readonly string[];
  defaultOrder: readonly Term[];
}

/** The documented order, written out independently of the SQL: NULL last either way. */
function compare(endpoint: Endpoint, terms: readonly Term[]) {
  return (a: Item, b: Item) => {
    for (const { field, descending } of terms) {
      let x = a[field] ?? null;
      let y = b[field] ?? null;
      if (x === null || y === null) {
        if (x !== y) return x === null ? 1 : -1;
        continue;
      }
      if (endpoint.text.includes(field)) {
        x = String(x).toLowerCase();
        y = String(y).toLowerCase();
      }
      if (x !== y) return (x < y ? -1 : 1) * (descending ? -1 : 1);
    }
    return 0;
  };
}

function withTieBreak(endpoint: Endpoint, terms: readonly Term[]): Term[] {
  const descending = terms[0]?.descending ?? false;
  const extra = endpoint.unique.filter((f) => !terms.some((t) => t.field === f));
  return [...terms, ...extra.map((field) => ({ field, descending }))];
}

const keyOf = (endpoint: Endpoint, item: Item) => endpoint.unique.map((f) => item[f]).join(":");
const withQuery = (path: string, query: string) => `${path}${path.includes("?") ? "&" : "?"}${query}`;

for (const { dialect, skip } of await dialects()) {
  describe(`sorted lists on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    const endpoints: Endpoint[] = [];
    const get = (path: string) => server.call("GET", path, { key });
    const post = async (path: string, body: unknown) => {
      const res = await server.call("POST", path, { key, body });
      assert.equal(res.status, 201, `${path}: ${res.text}`);
      return res.body;
    };

    before(async () => {
      server = await startTestServer({ dialect });
      key = await server.key("default", { rateLimit: 100_000 });
      const accountId = (await server.account("default")).id;
      const db = server.core.database.db;

      // Mixed case, ties on status, created and updated: case and tie-breaks both matter.
      const people = [
        { username: "carol", email: "c@example.org", fullname: "Carol Z", status: "enabled" },
        { username: "Alice", email: "zed@example.org", fullname: "alice a", status: "disabled" },
        { username: "bob", email: "Bob@example.org", fullname: "Bob B", status: "enabled" },
        { username: "Dave", email: "", fullname: "", status: "disabled" },
        { username: "erin", email: "a@example.org", fullname: "Erin", status: "enabled", password: "pw" },
      ];
      const users: Item[] = [];
      for (const person of people) users.push(await post("/api/users", person));
      const stamps = ["2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"];
      for (const [i, user] of users.entries()) {
        const created = stamps[i % stamps.length]!;
        await db
          .updateTable("users")
          .set({ created, updated: i === 3 ? "2026-02-01T00:00:00Z" : created })
          .where("id", "=", user.id as number)
          .execute();
      }
      const [carol, alice, bob, dave, erin] = users.map((u) => u.id as number);

      // Both tables, ids that coincide across them, attribute names in mixed case.
      for (const [table, attribute, operator, value] of [
        ["radcheck", "Simultaneous-Use", ":=", "2"],
        ["radreply", "Session-Timeout", ":=", "3600"],
        ["radreply", "Reply-Message", ":=", "hello"],
        ["radcheck", "Auth-Type", ":=", "Accept"],
        ["radreply", "Idle-Timeout", ":=", "600"],
      ]) {
        await post("/api/attributes", { userid: erin, table, attribute, operator, value });
      }

      const groups: Item[] = [];
      for (const name of ["staff", "Guests", "admins", "VIP"]) {
        groups.push(await post("/api/groups", { name, description: `the ${name}` }));
      }
      const staff = groups[0]!.id as number;
      for (const [userid, priority] of [
        [carol, 2],
        [alice, 1],
        [bob, 1],
        [dave, 3],
        [erin, 2],
      ]) {
        await post(`/api/groups/${staff}/users`, { userid, priority });
      }
      for (const [table, attribute, value] of [
        ["radgroupreply", "Session-Timeout", "7200"],
        ["radgroupcheck", "Simultaneous-Use", "1"],
        ["radgroupreply", "Acct-Interim-Interval", "300"],
      ]) {
        await post(`/api/groups/${staff}/attributes`, { table, attribute, operator: ":=", value });
      }

      const networks = [];
      for (const [name, nas_ip] of [
        ["Lobby", "192.0.2.1"],
        ["cafe", "192.0.2.2"],
        ["Office", "192.0.2.3"],
        ["annex", "192.0.2.4"],
      ] as const) {
        networks.push((await server.core.networks.create(accountId, { name, nas_ip })).network);
      }
      for (const [name, network] of [
        ["Guests", 2],
        ["staff", 0],
        ["Lobby guests", 0],
        ["annex", 3],
      ] as const) {
        await server.core.portals.create(accountId, { name, network_id: networks[network]!.id });
      }

      await post("/api/vouchers/batch", { quantity: 3, prefix: "mid", validity: 3600 });
      await post("/api/vouchers", { validity: 3600, code: "zulu1234" });
      await post("/api/vouchers", { validity: 3600, code: "ALPHA123" });
      await post("/api/vouchers/batch", { quantity: 2, prefix: "b", validity: 3600 });
      const vouchers = await db.selectFrom("vouchers").select("id").orderBy("id").execute();
      // Two in use, the others never used: first_used and expires are missing on most.
      for (const [i, at] of [
        [1, "2026-03-01T00:00:00Z"],
        [4, "2026-01-01T00:00:00Z"],
      ] as const) {
        await db
          .updateTable("vouchers")
          .set({ status: "active", first_used: at, expires: "2099-01-01T00:00:00Z" })
          .where("id", "=", vouchers[i]!.id)
          .execute();
      }

      const byId: Term[] = [{ field: "id", descending: false }];
      const attributes = { fields: ATTRIBUTE_SORT_FIELDS, text: ["attribute"], unique: ["table", "id"] };
      const byTable: Term[] = [{ field: "table", descending: false }];
      endpoints.push(
        {
          path: "/api/users",
          template: "/api/users",
          fields: USER_SORT_FIELDS,
          text: ["username", "email", "fullname"],
          unique: ["id"],
          defaultOrder: byId,
        },
        {
          path: `/api/attributes?userid=${erin}`,
          template: "/api/attributes",
          ...attributes,
          defaultOrder: byTable,
        },
        {
          path: "/api/groups",
          template: "/api/groups",
          fields: GROUP_SORT_FIELDS,
          text: ["name"],
          unique: ["id"],
          defaultOrder: byId,
        },
        {
          path: `/api/groups/${staff}/users`,
          template: "/api/groups/{group_id}/users",
          fields: MEMBER_SORT_FIELDS,
          text: ["username"],
          unique: ["userid"],
          defaultOrder: [
            { field: "priority", descending: false },
            { field: "username", descending: false },
          ],
        },
        {
          path: `/api/groups/${staff}/attributes`,
          template: "/api/groups/{group_id}/attributes",
          ...attributes,
          defaultOrder: byTable,
        },
        {
          path: "/api/networks",
          template: "/api/networks",
          fields: NETWORK_SORT_FIELDS,
          text: ["name"],
          unique: ["id"],
          defaultOrder: byId,
        },
        {
          path: "/api/captiveportals",
          template: "/api/captiveportals",
          fields: PORTAL_SORT_FIELDS,
          text: ["name"],
          unique: ["id"],
          defaultOrder: byId,
        },
        {
          path: "/api/vouchers",
          template: "/api/vouchers",
          fields: VOUCHER_SORT_FIELDS,
          text: ["code"],
          unique: ["id"],
          defaultOrder: byId,
        },
      );
    });
    after(() => server?.stop());

    /** Every item of the list in the order asked for, read page by page: the pages must add up. */
    async function walk(endpoint: Endpoint, sort: string | undefined, limit: number): Promise<Item[]> {
      const items: Item[] = [];
      let total: number | undefined;
      for (let page = 1; ; page++) {
        const query = `${sort === undefined ? "" : `sort=${sort}&`}limit=${limit}&page=${page}`;
        const res = await get(withQuery(endpoint.path, query));
        assert.equal(res.status, 200, res.text);
        total ??= res.body.total;
        assert.equal(res.body.total, total, "the total stays the same on every page");
        if (res.body.data.length === 0) break;
        items.push(...res.body.data);
      }
      assert.equal(items.length, total);
      return items;
    }

    test("the default order is unchanged, and stable across pages", async () => {
      for (const endpoint of endpoints) {
        const all = await walk(endpoint, undefined, 1000);
        assert.ok(all.length >= 3, `${endpoint.path} has data to sort`);
        const expected = [...all].sort(compare(endpoint, withTieBreak(endpoint, endpoint.defaultOrder)));
        assert.deepEqual(all, expected, endpoint.path);
        const paged = await walk(endpoint, undefined, 2);
        assert.deepEqual(paged, all, `${endpoint.path} in pages of 2`);
      }
    });

    test("every field sorts ascending and descending, ties by key, in pages that add up", async () => {
      for (const endpoint of endpoints) {
        const all = await walk(endpoint, undefined, 1000);
        for (const field of endpoint.fields) {
          for (const descending of [false, true]) {
            const sort = `${descending ? "-" : ""}${field}`;
            const expected = [...all].sort(
              compare(endpoint, withTieBreak(endpoint, [{ field, descending }])),
            );
            const label = `${endpoint.path} sort=${sort}`;
            const whole = await walk(endpoint, sort, 1000);
            assert.deepEqual(
              whole.map((item) => keyOf(endpoint, item)),
              expected.map((item) => keyOf(endpoint, item)),
              label,
            );
            const paged = await walk(endpoint, sort, 2);
            assert.deepEqual(paged, whole, `${label} in pages of 2`);
            assert.equal(new Set(paged.map((item) => keyOf(endpoint, item))).size, paged.length, label);
          }
        }
      }
    });

    test("the orders spelled out", async () => {
      const names = async (path: string, field: string) =>
        (await get(path)).body.data.map((item: Item) => item[field]);
      assert.deepEqual(await names("/api/users?sort=username", "username"), [
        "Alice",
        "bob",
        "carol",
        "Dave",
        "erin",
      ]);
      assert.deepEqual(await names("/api/users?sort=-username", "username"), [
        "erin",
        "Dave",
        "carol",
        "bob",
        "Alice",
      ]);
      // Ties on status: by id ascending, then by id descending.
      assert.deepEqual(await names("/api/users?sort=status", "username"), [
        "Alice",
        "Dave",
        "carol",
        "bob",
        "erin",
      ]);
      assert.deepEqual(await names("/api/users?sort=-status", "username"), [
        "erin",
        "bob",
        "carol",
        "Dave",
        "Alice",
      ]);
      assert.deepEqual(await names("/api/networks?sort=name", "name"), ["annex", "cafe", "Lobby", "Office"]);
      const staff = (await get("/api/groups?search=staff")).body.data[0].id;
      assert.deepEqual(await names(`/api/groups/${staff}/users?sort=-priority`, "username"), [
        "Dave",
        "erin",
        "carol",
        "bob",
        "Alice",
      ]);
      // Never-used vouchers have no first use: last, whichever the direction.
      const used = await names("/api/vouchers?sort=first_used", "first_used");
      assert.deepEqual(used.slice(0, 2), ["2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"]);
      assert.ok(used.slice(2).every((v: unknown) => v === null));
      const usedDown = await names("/api/vouchers?sort=-first_used", "first_used");
      assert.deepEqual(usedDown.slice(0, 2), ["2026-03-01T00:00:00Z", "2026-01-01T00:00:00Z"]);
      assert.ok(usedDown.slice(2).every((v: unknown) => v === null));
      const erin = (await get("/api/users?search=erin")).body.data[0].id;
      assert.deepEqual(await names(`/api/attributes?userid=${erin}&sort=attribute`, "attribute"), [
        "Auth-Type",
        "Cleartext-Password",
        "Idle-Timeout",
        "Reply-Message",
        "Session-Timeout",
        "Simultaneous-Use",
      ]);
      assert.deepEqual(
        await names(`/api/attributes?userid=${erin}&table=radreply&sort=-attribute`, "attribute"),
        ["Session-Timeout", "Reply-Message", "Idle-Timeout"],
      );
    });

    test("any other sort answers 400 in the error shape, naming the parameter", async () => {
      for (const endpoint of endpoints) {
        for (const sort of ["nope", "-nope", "", "--id", "+id", "ID", "id,name", "value", "password"]) {
          const res = await get(withQuery(endpoint.path, `sort=${encodeURIComponent(sort)}`));
          const label = `${endpoint.path} sort=${sort}: ${res.text}`;
          assert.equal(res.status, 400, label);
          assert.equal(res.body.error, true, label);
          assert.equal(res.body.code, 400, label);
          assert.equal(typeof res.body.message, "string", label);
          assert.deepEqual(
            res.body.details.map((d: { field: string }) => d.field),
            ["sort"],
            label,
          );
          assert.match(res.body.details[0].message, /^must be one of /, label);
        }
      }
    });

    test("the services refuse other orders too, for doors without the API's schema", async () => {
      const accountId = (await server.account("default")).id;
      const page = { page: 1, limit: 10 };
      const { users, groups, attributes, networks, portals, vouchers } = server.core;
      const erin = (await users.list(accountId, { search: "erin" }, page)).data[0]!.id;
      const staff = (await groups.list(accountId, "staff", page)).data[0]!.id;
      for (const attempt of [
        () => users.list(accountId, {}, page, "password"),
        () => users.listJson(accountId, {}, page, "-api_json"),
        () => groups.list(accountId, undefined, page, "description"),
        () => groups.listMembers(accountId, staff, page, "priority-"),
        () => attributes.listForUser(accountId, erin, undefined, page, "value"),
        () => attributes.listForGroup(accountId, staff, undefined, page, "-value"),
        () => networks.list(accountId, {}, page, "secret"),
        () => portals.list(accountId, {}, page, "login_url"),
        () => vouchers.list(accountId, {}, page, "status"),
      ]) {
        await assert.rejects(attempt, (error: ValidationError) => {
          assert.ok(error instanceof ValidationError);
          assert.deepEqual(
            error.details.map((d) => d.field),
            ["sort"],
          );
          return true;
        });
      }
      assert.equal((await users.list(accountId, {}, page, "-username")).data[0]?.username, "erin");
    });

    test("the OpenAPI document lists every order of every list", async () => {
      const doc = (await server.call("GET", "/api/openapi.json")).body;
      for (const endpoint of endpoints) {
        const parameters = doc.paths[endpoint.template].get.parameters;
        const sort = parameters.find((p: { name: string }) => p.name === "sort");
        assert.ok(sort, `${endpoint.template} documents sort`);
        assert.equal(sort.in, "query");
        assert.equal(sort.required, false);
        assert.deepEqual(sort.schema.enum, [...endpoint.fields, ...endpoint.fields.map((f) => `-${f}`)]);
        assert.match(sort.description ?? sort.schema.description, /descending/);
      }
    });
  });
}

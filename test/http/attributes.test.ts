import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

type Row = { id: number; attribute: string; operator: string; value: string; table: string };

for (const { dialect, skip } of await dialects()) {
  describe(`attributes API on ${dialect}`, { skip }, () => {
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
    const newUser = async (username: string, k = key) => {
      const res = await server.call("POST", "/api/users", { key: k, body: { username } });
      assert.equal(res.status, 201, res.text);
      return res.body as { id: number; username: string };
    };
    const add = (body: unknown, k = key) => server.call("POST", "/api/attributes", { key: k, body });
    const list = (query: string, k = key) => server.call("GET", `/api/attributes?${query}`, { key: k });
    const stored = async (username: string) => {
      const check = await db()
        .selectFrom("radcheck")
        .select(["id", "account_id", "username", "attribute", "op", "value"])
        .where("username", "=", username)
        .orderBy("id")
        .execute();
      const reply = await db()
        .selectFrom("radreply")
        .select(["id", "account_id", "username", "attribute", "op", "value"])
        .where("username", "=", username)
        .orderBy("id")
        .execute();
      return { check, reply };
    };

    test("create answers 201 with the item and a Location; the row is stored for FreeRADIUS", async () => {
      const ann = await newUser("ann");
      const res = await add({
        userid: ann.id,
        attribute: "Session-Timeout",
        operator: ":=",
        value: "3600",
        table: "radreply",
      });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body, {
        id: res.body.id,
        userid: ann.id,
        attribute: "Session-Timeout",
        operator: ":=",
        value: "3600",
        table: "radreply",
      });
      assert.equal(res.headers.get("location"), `/api/attributes/${res.body.id}?table=radreply`);
      const { check, reply } = await stored("ann");
      assert.deepEqual(check, []);
      assert.deepEqual(reply, [
        {
          id: res.body.id,
          account_id: accountId,
          username: "ann",
          attribute: "Session-Timeout",
          op: ":=",
          value: "3600",
        },
      ]);
      const got = await server.call("GET", res.headers.get("location")!, { key });
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, res.body);
    });

    test("every operator of each table is accepted and reads back exactly", async () => {
      const bo = await newUser("bo");
      const checks: [string, string, string][] = [
        ["==", "NAS-Identifier", "ap-1"],
        [":=", "Auth-Type", "Accept"],
        ["+=", "Pool-Name", "guests"],
        ["!=", "NAS-Port", "7"],
        [">", "NAS-Port", "1"],
        [">=", "NAS-Port", "2"],
        ["<", "NAS-Port", "100"],
        ["<=", "NAS-Port", "99"],
        ["=~", "Calling-Station-Id", "^aa-bb-.*$"],
        ["!~", "Called-Station-Id", ":guest$"],
        ["=*", "Framed-Protocol", "PPP"],
        ["!*", "Framed-Protocol", "SLIP"],
      ];
      const replies: [string, string, string][] = [
        ["=", "Idle-Timeout", "600"],
        [":=", "Acct-Interim-Interval", "300"],
        ["+=", "Reply-Message", "Welcome"],
      ];
      for (const [table, items] of [
        ["radcheck", checks],
        ["radreply", replies],
      ] as const) {
        for (const [operator, attribute, value] of items) {
          const res = await add({ userid: bo.id, attribute, operator, value, table });
          assert.equal(res.status, 201, `${table} ${attribute} ${operator}: ${res.text}`);
          assert.equal(res.body.operator, operator);
        }
      }
      const all = await list(`userid=${bo.id}&limit=100`);
      assert.deepEqual(
        all.body.data.map((r: Row) => [r.table, r.operator, r.attribute, r.value]),
        [
          ...checks.map(([op, attribute, value]) => ["radcheck", op, attribute, value]),
          ...replies.map(([op, attribute, value]) => ["radreply", op, attribute, value]),
        ],
      );
      const { check, reply } = await stored("bo");
      // What FreeRADIUS reads: the op column, trimmed of PostgreSQL's char(2) padding.
      assert.deepEqual(
        check.map((r) => r.op.trim()),
        checks.map(([op]) => op),
      );
      assert.deepEqual(
        reply.map((r) => r.op.trim()),
        replies.map(([op]) => op),
      );
    });

    test("attribute names match ignoring case and are stored with the dictionary's spelling", async () => {
      const cy = await newUser("cy");
      const cases: [string, string, string, string, string][] = [
        ["session-timeout", "=", "60", "radreply", "Session-Timeout"],
        ["CLEARTEXT-PASSWORD", ":=", "pw", "radcheck", "Cleartext-Password"],
        ["wispr-bandwidth-max-down", "=", "2048000", "radreply", "WISPr-Bandwidth-Max-Down"],
        ["tunnel-private-group-id:1", "=", "100", "radreply", "Tunnel-Private-Group-Id:1"],
      ];
      for (const [attribute, operator, value, table, canonical] of cases) {
        const res = await add({ userid: cy.id, attribute, operator, value, table });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.attribute, canonical);
      }
      // Named values too (FreeRADIUS matches them ignoring case).
      const named = await add({
        userid: cy.id,
        attribute: "service-type",
        operator: ":=",
        value: "framed-user",
        table: "radreply",
      });
      assert.equal(named.status, 201, named.text);
      assert.equal(named.body.value, "Framed-User");
      const { check, reply } = await stored("cy");
      assert.deepEqual(
        [...check, ...reply].map((r) => r.attribute),
        [
          "Cleartext-Password",
          "Session-Timeout",
          "WISPr-Bandwidth-Max-Down",
          "Tunnel-Private-Group-Id:1",
          "Service-Type",
        ],
      );
    });

    test("vendor attributes (WISPr, MikroTik, ChilliSpot) are checked by their types", async () => {
      const dee = await newUser("dee");
      const ok = [
        { attribute: "WISPr-Bandwidth-Max-Down", value: "4096000" },
        { attribute: "WISPr-Bandwidth-Max-Up", value: "1024000" },
        { attribute: "Mikrotik-Rate-Limit", value: "2M/4M" },
        { attribute: "ChilliSpot-Max-Total-Octets", value: "1000000000" },
      ];
      for (const body of ok) {
        const res = await add({ userid: dee.id, operator: ":=", table: "radreply", ...body });
        assert.equal(res.status, 201, res.text);
      }
      for (const body of [
        { attribute: "WISPr-Bandwidth-Max-Down", value: "fast" },
        { attribute: "ChilliSpot-Max-Total-Octets", value: "-1" },
        { attribute: "ChilliSpot-Max-Total-Octets", value: "4294967296" },
      ]) {
        const res = await add({ userid: dee.id, operator: ":=", table: "radreply", ...body });
        assert.equal(res.status, 400, res.text);
        assert.deepEqual(
          res.body.details.map((d: { field: string }) => d.field),
          ["value"],
        );
      }
      assert.equal((await stored("dee")).reply.length, ok.length);
    });

    test("refusals answer 400 naming the field and why, and write nothing", async () => {
      const eve = await newUser("eve");
      const base = { userid: eve.id, operator: ":=", table: "radreply", value: "x" };
      const cases: [Record<string, unknown>, string, RegExp?][] = [
        [
          { ...base, attribute: "No-Such-Attribute", value: "1" },
          "attribute",
          /not in the RADIUS dictionary/,
        ],
        [{ ...base, attribute: "Session-Timeout", value: "one hour" }, "value", /integer/],
        [{ ...base, attribute: "Session-Timeout", value: "4294967296" }, "value", /integer/],
        [{ ...base, attribute: "Session-Timeout", value: "" }, "value", /empty/],
        [{ ...base, table: "radcheck", attribute: "Expiration", value: "2030-01-01" }, "value", /Unix/],
        [{ ...base, attribute: "Framed-IP-Address", value: "10.0.0.300" }, "value", /IPv4/],
        [{ ...base, attribute: "Framed-IP-Address", value: "fe80::1" }, "value", /IPv4/],
        [{ ...base, attribute: "Service-Type", value: "Bogus-User" }, "value", /Framed-User|one of/],
        [{ ...base, attribute: "Reply-Message", operator: "==" }, "operator", /= := \+=/],
        [{ ...base, attribute: "Reply-Message", operator: "!=" }, "operator"],
        [{ ...base, table: "radcheck", attribute: "Auth-Type", operator: "=", value: "Accept" }, "operator"],
        [{ ...base, attribute: "Reply-Message", operator: "=>" }, "operator"],
        [{ ...base, attribute: "Expiration", value: "1900000000" }, "attribute", /radcheck/],
        [{ ...base, attribute: "Cleartext-Password", value: "pw" }, "attribute", /server-side/],
        [{ ...base, attribute: "Simultaneous-Use", value: "1" }, "attribute", /server-side/],
        [{ ...base, attribute: "Reply-Message", value: '"hello"' }, "value", /quotes/],
        [{ ...base, attribute: "Reply-Message", value: "'hello'" }, "value", /quotes/],
        [{ ...base, attribute: "Reply-Message", value: "`id`" }, "value", /backticks/],
        [{ ...base, attribute: "Reply-Message", value: "Hi %{User-Name}" }, "value", /%\{/],
        [{ ...base, attribute: "Reply-Message", value: "x".repeat(254) }, "value"],
        [{ ...base, attribute: "Reply-Message", value: "é".repeat(127) }, "value", /253 bytes/],
        [{ ...base, attribute: "Reply-Message", value: "line\nbreak" }, "value", /control/],
        [
          { ...base, table: "radcheck", attribute: "Calling-Station-Id", operator: "=~", value: "([a-f" },
          "value",
          /regular expression/,
        ],
        [{ ...base, table: "radcheck", attribute: "Exec-Program-Wait", value: "/bin/true" }, "attribute"],
        [{ ...base, attribute: "Vendor-Specific", value: "0x00" }, "attribute"],
        [{ ...base, attribute: "Reply-Message", value: "hi", extra: 1 }, "extra", /not a known field/],
        [{ ...base, attribute: "Reply-Message", value: "hi", table: "radusergroup" }, "table"],
        [{ ...base, attribute: "Reply-Message", value: "hi", table: "radgroupreply" }, "table"],
        [{ ...base, attribute: "Reply-Message", value: 5 }, "value"],
        [{ ...base, attribute: "Reply-Message", value: "hi", userid: "1" }, "userid"],
        [{ ...base, attribute: "Reply-Message", value: "hi", userid: 0 }, "userid"],
        [{ operator: ":=", attribute: "Reply-Message", value: "hi" }, "userid"],
        [{ userid: eve.id, attribute: "Reply-Message", value: "hi", table: "radreply" }, "operator"],
        [{ userid: eve.id, operator: "=", attribute: "Reply-Message", table: "radreply" }, "value"],
        [{ userid: eve.id, operator: "=", attribute: "Reply-Message", value: "hi" }, "table"],
        [{ ...base, value: "hi" }, "attribute"],
      ];
      for (const [body, field, why] of cases) {
        const res = await add(body);
        const shown = `${JSON.stringify(body)} -> ${res.status} ${res.text}`;
        assert.equal(res.status, 400, shown);
        assert.equal(res.body.code, 400);
        const detail = res.body.details?.find((d: { field: string }) => d.field === field);
        assert.ok(detail, `should name ${field}: ${shown}`);
        if (why) assert.match(detail.message, why, shown);
      }
      assert.deepEqual(await stored("eve"), { check: [], reply: [] });
    });

    test("Fall-Through, read by rlm_sql from reply tables, is the one server-side reply item", async () => {
      const fay = await newUser("fay");
      const res = await add({
        userid: fay.id,
        attribute: "fall-through",
        operator: "=",
        value: "yes",
        table: "radreply",
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.attribute, "Fall-Through");
      assert.equal(res.body.value, "Yes");
    });

    test("an exact duplicate answers 409; a different value, operator or table does not", async () => {
      const gil = await newUser("gil");
      const item = {
        userid: gil.id,
        attribute: "Idle-Timeout",
        operator: "=",
        value: "60",
        table: "radreply",
      };
      assert.equal((await add(item)).status, 201);
      const again = await add({ ...item, attribute: "idle-timeout" });
      assert.equal(again.status, 409, again.text);
      assert.equal(again.body.code, 409);
      assert.equal((await add({ ...item, value: "61" })).status, 201);
      assert.equal((await add({ ...item, operator: ":=" })).status, 201);
      assert.equal((await add({ ...item, table: "radcheck", operator: "==" })).status, 201);
      assert.equal((await add({ ...item, table: "radcheck", operator: "==" })).status, 409);
      const { check, reply } = await stored("gil");
      assert.equal(check.length, 1);
      assert.equal(reply.length, 3);
    });

    test("identical requests racing each other store one row", async () => {
      const ray = await newUser("ray");
      const item = {
        userid: ray.id,
        attribute: "Idle-Timeout",
        operator: "=",
        value: "60",
        table: "radreply",
      };
      const answers = await Promise.all(Array.from({ length: 6 }, () => add(item)));
      assert.deepEqual(answers.map((res) => res.status).sort(), [201, 409, 409, 409, 409, 409]);
      assert.equal((await stored("ray")).reply.length, 1);
    });

    test("secrets are masked in every answer and stored in clear for FreeRADIUS", async () => {
      const hal = await newUser("hal");
      const secrets: [string, string, string][] = [
        ["Cleartext-Password", "s3cret-clear", "radcheck"],
        ["NT-Password", "0x8846f7eaee8fb117ad06bdd830b7586c", "radcheck"],
        ["Crypt-Password", "$1$salt$qJH7.N4xYta3aEG/dfqo/0", "radcheck"],
        ["SSHA2-512-Password", Buffer.alloc(72, 7).toString("base64"), "radcheck"],
        ["Password-With-Header", "{clear}s3cret-header", "radcheck"],
        ["Tunnel-Password", "s3cret-tunnel", "radreply"],
      ];
      for (const [attribute, value, table] of secrets) {
        const res = await add({ userid: hal.id, attribute, operator: ":=", value, table });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.value, "********");
        assert.ok(!res.text.includes(value));
      }
      const all = await list(`userid=${hal.id}`);
      assert.equal(all.body.total, secrets.length);
      assert.ok(all.body.data.every((r: Row) => r.value === "********"));
      for (const [, value] of secrets) assert.ok(!all.text.includes(value));
      const one = await server.call("GET", `/api/attributes/${all.body.data[0].id}?table=radcheck`, { key });
      assert.equal(one.body.value, "********");
      const { check, reply } = await stored("hal");
      assert.deepEqual(
        [...check, ...reply].map((r) => r.value),
        secrets.map(([, value]) => value),
      );
      // A password set through the users API is masked the same way.
      const ida = (
        await server.call("POST", "/api/users", { key, body: { username: "ida", password: "pw-ida" } })
      ).body;
      const idaList = await list(`userid=${ida.id}`);
      assert.deepEqual(
        idaList.body.data.map((r: Row) => [r.attribute, r.operator, r.value]),
        [["Cleartext-Password", ":=", "********"]],
      );
      const doc = (await server.call("GET", "/api/openapi.json")).body;
      assert.match(doc.components.schemas.Attribute.properties.value.description, /\*{8}/);
    });

    test("list: radcheck rows then radreply rows, each by id; table filter; true totals", async () => {
      const jo = await newUser("jo");
      const replyIds: number[] = [];
      const checkIds: number[] = [];
      // Interleave the writes so that id order alone would mix the tables.
      for (let i = 0; i < 4; i++) {
        const r = await add({
          userid: jo.id,
          attribute: "Reply-Message",
          operator: "+=",
          value: `r${i}`,
          table: "radreply",
        });
        replyIds.push(r.body.id);
        if (i < 3) {
          const c = await add({
            userid: jo.id,
            attribute: "NAS-Port",
            operator: "!=",
            value: String(i),
            table: "radcheck",
          });
          checkIds.push(c.body.id);
        }
      }
      const pages: string[] = [];
      for (let page = 1; page <= 4; page++) {
        const res = await list(`userid=${jo.id}&limit=2&page=${page}`);
        assert.equal(res.status, 200);
        assert.deepEqual(Object.keys(res.body).sort(), ["data", "limit", "page", "total"]);
        assert.equal(res.body.total, 7);
        assert.equal(res.body.page, page);
        assert.equal(res.body.limit, 2);
        pages.push(...res.body.data.map((r: Row) => `${r.table}:${r.id}`));
      }
      assert.deepEqual(pages, [
        ...checkIds.map((id) => `radcheck:${id}`),
        ...replyIds.map((id) => `radreply:${id}`),
      ]);
      const past = await list(`userid=${jo.id}&limit=5&page=3`);
      assert.deepEqual(past.body.data, []);
      assert.equal(past.body.total, 7);
      const replies = await list(`userid=${jo.id}&table=radreply&limit=3&page=2`);
      assert.equal(replies.body.total, 4);
      assert.deepEqual(
        replies.body.data.map((r: Row) => r.value),
        ["r3"],
      );
      const checks = await list(`userid=${jo.id}&table=radcheck`);
      assert.equal(checks.body.total, 3);
      assert.ok(
        checks.body.data.every((r: Row & { userid: number }) => r.table === "radcheck" && r.userid === jo.id),
      );
      const defaults = await list(`userid=${jo.id}`);
      assert.equal(defaults.body.limit, 50);
      assert.equal(defaults.body.page, 1);
    });

    test("bad query parameters and ids answer 400; unknown ones 404", async () => {
      const kim = await newUser("kim");
      for (const query of [
        "",
        "userid=abc",
        "userid=0",
        "userid=99999999999",
        `userid=${kim.id}&table=radgroupcheck`,
        `userid=${kim.id}&table=`,
        `userid=${kim.id}&page=0`,
        `userid=${kim.id}&limit=1001`,
        `userid=${kim.id}&sort=value`,
      ]) {
        const res = await list(query);
        assert.equal(res.status, 400, `${query}: ${res.text}`);
      }
      const missing = await list("userid=999999");
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, { error: true, message: "user 999999 not found", code: 404 });
      for (const path of ["abc?table=radcheck", "0?table=radcheck", "1.5?table=radcheck", "1", "1?table=x"]) {
        assert.equal((await server.call("GET", `/api/attributes/${path}`, { key })).status, 400, path);
        assert.equal((await server.call("DELETE", `/api/attributes/${path}`, { key })).status, 400, path);
      }
      const gone = await server.call("DELETE", "/api/attributes/999999?table=radreply", { key });
      assert.equal(gone.status, 404);
      assert.equal(gone.body.message, "attribute 999999 not found in radreply");
      const posted = await add({
        userid: 999999,
        attribute: "Idle-Timeout",
        operator: "=",
        value: "1",
        table: "radreply",
      });
      assert.equal(posted.status, 404);
      assert.equal(posted.body.message, "user 999999 not found");
    });

    test("delete answers 204 and removes only that row of that table", async () => {
      const lee = await newUser("lee");
      const keep = await add({
        userid: lee.id,
        attribute: "Idle-Timeout",
        operator: "=",
        value: "5",
        table: "radreply",
      });
      // Push radcheck's sequence past radreply's, so that the row below has no twin id in radreply.
      const highest = await db()
        .selectFrom("radreply")
        .select((eb) => eb.fn.max("id").as("id"))
        .executeTakeFirstOrThrow();
      for (;;) {
        const filler = await db()
          .insertInto("radcheck")
          .values({
            account_id: accountId,
            username: "filler",
            attribute: "Auth-Type",
            op: ":=",
            value: "Accept",
          })
          .returning("id")
          .executeTakeFirstOrThrow();
        if (filler.id > Number(highest.id)) break;
      }
      const drop = await add({
        userid: lee.id,
        attribute: "Auth-Type",
        operator: ":=",
        value: "Reject",
        table: "radcheck",
      });
      const wrongTable = await server.call("DELETE", `/api/attributes/${drop.body.id}?table=radreply`, {
        key,
      });
      assert.equal(wrongTable.status, 404);
      assert.equal((await stored("lee")).check.length, 1);
      const res = await server.call("DELETE", `/api/attributes/${drop.body.id}?table=radcheck`, { key });
      assert.equal(res.status, 204);
      assert.equal(res.text, "");
      assert.equal(
        (await server.call("DELETE", `/api/attributes/${drop.body.id}?table=radcheck`, { key })).status,
        404,
      );
      assert.equal(
        (await server.call("GET", `/api/attributes/${drop.body.id}?table=radcheck`, { key })).status,
        404,
      );
      const { check, reply } = await stored("lee");
      assert.deepEqual(check, []);
      assert.deepEqual(
        reply.map((r) => r.id),
        [keep.body.id],
      );
    });

    test("rows of names that are no user (e.g. written by FreeRADIUS tools) are out of reach", async () => {
      const row = await db()
        .insertInto("radcheck")
        .values({
          account_id: accountId,
          username: "not-a-user",
          attribute: "Auth-Type",
          op: ":=",
          value: "Accept",
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      assert.equal(
        (await server.call("GET", `/api/attributes/${row.id}?table=radcheck`, { key })).status,
        404,
      );
      assert.equal(
        (await server.call("DELETE", `/api/attributes/${row.id}?table=radcheck`, { key })).status,
        404,
      );
      assert.equal((await stored("not-a-user")).check.length, 1);
    });

    test("permissions: attributes:read to read, attributes:write to change", async () => {
      const max = await newUser("max");
      const item = {
        userid: max.id,
        attribute: "Idle-Timeout",
        operator: "=",
        value: "9",
        table: "radreply",
      };
      const created = await add(item);
      const usersOnly = await server.key("default", { permissions: "users:read" });
      const res = await list(`userid=${max.id}`, usersOnly);
      assert.equal(res.status, 403);
      assert.match(res.body.message, /attributes:read/);
      assert.equal((await add({ ...item, value: "10" }, usersOnly)).status, 403);
      const reader = await server.key("default", { permissions: "read" });
      assert.equal((await list(`userid=${max.id}`, reader)).status, 200);
      const denied = await add({ ...item, value: "10" }, reader);
      assert.equal(denied.status, 403);
      assert.match(denied.body.message, /attributes:write/);
      const path = `/api/attributes/${created.body.id}?table=radreply`;
      assert.equal((await server.call("DELETE", path, { key: reader })).status, 403);
      const writer = await server.key("default", { permissions: "attributes:write" });
      assert.equal((await add({ ...item, value: "11" }, writer)).status, 201);
      assert.equal((await server.call("GET", path, { key: writer })).status, 200);
      assert.equal((await server.call("DELETE", path, { key: writer })).status, 204);
      assert.equal((await stored("max")).reply.length, 1);
    });

    test("tenant isolation: another account's user and attribute ids answer 404, even to DELETE", async () => {
      const otherKey = await server.key("other-tenant");
      const ned = await newUser("ned");
      const mine = await add({
        userid: ned.id,
        attribute: "Idle-Timeout",
        operator: "=",
        value: "1",
        table: "radreply",
      });
      const theirsUser = await newUser("ned", otherKey);
      const notFound = `user ${ned.id} not found`;
      const listed = await list(`userid=${ned.id}`, otherKey);
      assert.equal(listed.status, 404);
      assert.equal(listed.body.message, notFound);
      const posted = await add(
        { userid: ned.id, attribute: "Idle-Timeout", operator: "=", value: "2", table: "radreply" },
        otherKey,
      );
      assert.equal(posted.status, 404);
      assert.equal(posted.body.message, notFound);
      const path = `/api/attributes/${mine.body.id}?table=radreply`;
      assert.equal((await server.call("GET", path, { key: otherKey })).status, 404);
      assert.equal((await server.call("DELETE", path, { key: otherKey })).status, 404);
      const { reply } = await stored("ned");
      assert.deepEqual(
        reply.map((r) => [r.account_id, r.value]),
        [[accountId, "1"]],
      );
      // The other account's own user of the same name has none of these rows.
      assert.equal((await list(`userid=${theirsUser.id}`, otherKey)).body.total, 0);
      assert.equal((await list(`userid=${theirsUser.id}`)).status, 404);
    });

    test("renaming a user carries its attributes; deleting it removes them and its memberships", async () => {
      const oz = await newUser("oz");
      await add({
        userid: oz.id,
        attribute: "Cleartext-Password",
        operator: ":=",
        value: "pw",
        table: "radcheck",
      });
      await add({ userid: oz.id, attribute: "Idle-Timeout", operator: "=", value: "3", table: "radreply" });
      const group = await server.call("POST", "/api/groups", { key, body: { name: "oz-group" } });
      assert.equal(group.status, 201);
      const joined = await server.call("POST", `/api/groups/${group.body.id}/users`, {
        key,
        body: { userid: oz.id },
      });
      assert.equal(joined.status, 201);
      const renamed = await server.call("PUT", `/api/users/${oz.id}`, { key, body: { username: "ozzy" } });
      assert.equal(renamed.status, 200);
      assert.equal((await list(`userid=${oz.id}`)).body.total, 2);
      const deleted = await server.call("DELETE", `/api/users/${oz.id}`, { key });
      assert.equal(deleted.status, 204);
      assert.deepEqual(await stored("ozzy"), { check: [], reply: [] });
      const memberships = await db()
        .selectFrom("radusergroup")
        .selectAll()
        .where("username", "=", "ozzy")
        .execute();
      assert.deepEqual(memberships, []);
      assert.equal((await list(`userid=${oz.id}`)).status, 404);
      assert.equal((await server.call("GET", `/api/groups/${group.body.id}`, { key })).status, 200);
    });
  });
}

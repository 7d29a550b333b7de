import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

for (const { dialect, skip } of await dialects()) {
  describe(`users API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;

    before(async () => {
      server = await startTestServer({ dialect });
      key = await server.key("default", { rateLimit: 100_000 });
    });
    after(() => server?.stop());

    const create = (body: unknown) => server.call("POST", "/api/users", { key, body });

    test("create answers 201 with the user, a Location header, and no password", async () => {
      const res = await create({
        username: "alice",
        email: "alice@example.com",
        fullname: "Alice A",
        password: "s3cret",
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("location"), `/api/users/${res.body.id}`);
      assert.deepEqual(Object.keys(res.body).sort(), [
        "created",
        "email",
        "fullname",
        "id",
        "plan_id",
        "status",
        "updated",
        "username",
      ]);
      assert.equal(res.body.status, "enabled");
      assert.match(res.body.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.ok(!res.text.includes("s3cret"));
      const rows = await server.core.database.db
        .selectFrom("radcheck")
        .select(["username", "attribute", "op", "value"])
        .where("username", "=", "alice")
        .execute();
      assert.deepEqual(rows, [
        { username: "alice", attribute: "Cleartext-Password", op: ":=", value: "s3cret" },
      ]);
    });

    test("only username is required; the rest default", async () => {
      const res = await create({ username: "bob" });
      assert.equal(res.status, 201);
      assert.equal(res.body.email, "");
      assert.equal(res.body.fullname, "");
      assert.equal(res.body.status, "enabled");
      const got = await server.call("GET", `/api/users/${res.body.id}`, { key });
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, res.body);
    });

    test("duplicate usernames, ignoring case, answer 409 and write nothing", async () => {
      const before = await server.call("GET", "/api/users?limit=1000", { key });
      const res = await create({ username: "ALICE", password: "other" });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 409);
      assert.match(res.body.message, /already exists/);
      const afterList = await server.call("GET", "/api/users?limit=1000", { key });
      assert.equal(afterList.body.total, before.body.total);
      const passwords = await server.core.database.db
        .selectFrom("radcheck")
        .select("value")
        .where("value", "=", "other")
        .execute();
      assert.equal(passwords.length, 0);
    });

    test("bad bodies answer 400 naming the field, and write nothing", async () => {
      const cases: [unknown, string][] = [
        [{}, "username"],
        [{ username: "" }, "username"],
        [{ username: "has space" }, "username"],
        [{ username: "x".repeat(65) }, "username"],
        [{ username: "o'brien" }, "username"],
        [{ username: 42 }, "username"],
        [{ username: "carol", email: "not-an-email" }, "email"],
        [{ username: "carol", email: 7 }, "email"],
        [{ username: "carol", fullname: "a\u0000b" }, "fullname"],
        [{ username: "carol", fullname: "x".repeat(256) }, "fullname"],
        [{ username: "carol", status: "active" }, "status"],
        [{ username: "carol", password: "" }, "password"],
        [{ username: "carol", password: '"quoted"' }, "password"],
        [{ username: "carol", password: "a%{exec}" }, "password"],
        [{ username: "carol", password: "line\nbreak" }, "password"],
        [{ username: "carol", usernmae: "typo" }, "usernmae"],
        [{ username: "carol", id: 5 }, "id"],
        [[], "body"],
        ["carol", "body"],
        [null, "body"],
      ];
      for (const [body, field] of cases) {
        const res = await create(body);
        assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.status} ${res.text}`);
        assert.equal(res.body.error, true);
        assert.equal(res.body.code, 400);
        assert.ok(
          res.body.details?.some((d: { field: string }) => d.field === field),
          `${JSON.stringify(body)} should name ${field}: ${res.text}`,
        );
      }
      const list = await server.call("GET", "/api/users?search=carol", { key });
      assert.equal(list.body.total, 0);
    });

    test("list paginates with the list shape and true totals", async () => {
      for (let i = 0; i < 12; i++)
        assert.equal((await create({ username: `page${String(i).padStart(2, "0")}` })).status, 201);
      const first = await server.call("GET", "/api/users?search=page&limit=5", { key });
      assert.equal(first.status, 200);
      assert.deepEqual(Object.keys(first.body).sort(), ["data", "limit", "page", "total"]);
      assert.equal(first.body.total, 12);
      assert.equal(first.body.page, 1);
      assert.equal(first.body.limit, 5);
      assert.deepEqual(
        first.body.data.map((u: { username: string }) => u.username),
        ["page00", "page01", "page02", "page03", "page04"],
      );
      const third = await server.call("GET", "/api/users?search=page&limit=5&page=3", { key });
      assert.deepEqual(
        third.body.data.map((u: { username: string }) => u.username),
        ["page10", "page11"],
      );
      const past = await server.call("GET", "/api/users?search=page&limit=5&page=9", { key });
      assert.deepEqual(past.body.data, []);
      assert.equal(past.body.total, 12);
      const defaults = await server.call("GET", "/api/users", { key });
      assert.equal(defaults.body.limit, 50);
      assert.equal(defaults.body.page, 1);
    });

    test("status and search filters", async () => {
      const dave = await create({
        username: "dave",
        email: "Dave.Smith@Example.org",
        fullname: "Dave 100% Smith",
        status: "disabled",
      });
      assert.equal(dave.status, 201);
      const disabled = await server.call("GET", "/api/users?status=disabled", { key });
      assert.deepEqual(
        disabled.body.data.map((u: { username: string }) => u.username),
        ["dave"],
      );
      const enabled = await server.call("GET", "/api/users?status=enabled&limit=1000", { key });
      assert.ok(enabled.body.data.every((u: { status: string }) => u.status === "enabled"));
      assert.equal(
        enabled.body.total + disabled.body.total,
        (await server.call("GET", "/api/users", { key })).body.total,
      );
      for (const search of ["DAVE", "example.ORG", "smith", "100%"]) {
        const res = await server.call("GET", `/api/users?search=${encodeURIComponent(search)}`, { key });
        assert.deepEqual(
          res.body.data.map((u: { username: string }) => u.username),
          ["dave"],
          search,
        );
      }
      // LIKE wildcards in the search are literal characters.
      assert.equal((await server.call("GET", "/api/users?search=%25", { key })).body.total, 1);
      assert.equal((await server.call("GET", "/api/users?search=_", { key })).body.total, 0);
    });

    test("bad query parameters answer 400", async () => {
      for (const query of [
        "page=0",
        "page=abc",
        "limit=0",
        "limit=1001",
        "limit=2.5",
        "status=gone",
        "page=1&page=2",
        "sort=x",
        `search=${"s".repeat(101)}`,
      ]) {
        const res = await server.call("GET", `/api/users?${query}`, { key });
        assert.equal(res.status, 400, `${query}: ${res.text}`);
        assert.equal(res.body.code, 400);
      }
    });

    test("bad and unknown ids", async () => {
      for (const id of ["abc", "0", "-1", "1.5", "99999999999999999999"]) {
        const res = await server.call("GET", `/api/users/${id}`, { key });
        assert.equal(res.status, 400, `${id}: ${res.text}`);
      }
      const missing = await server.call("GET", "/api/users/999999", { key });
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, { error: true, message: "user 999999 not found", code: 404 });
      assert.equal(
        (await server.call("PUT", "/api/users/999999", { key, body: { fullname: "x" } })).status,
        404,
      );
      assert.equal((await server.call("DELETE", "/api/users/999999", { key })).status, 404);
    });

    test("PUT is a partial update, PATCH its synonym, password stays write-only", async () => {
      const erin = (await create({ username: "erin", email: "erin@example.com", password: "first" })).body;
      const put = await server.call("PUT", `/api/users/${erin.id}`, {
        key,
        body: { fullname: "Erin E", password: "second" },
      });
      assert.equal(put.status, 200);
      assert.equal(put.body.fullname, "Erin E");
      assert.equal(put.body.email, "erin@example.com");
      assert.ok(!("password" in put.body));
      const patch = await server.call("PATCH", `/api/users/${erin.id}`, {
        key,
        body: { status: "disabled" },
      });
      assert.equal(patch.status, 200);
      assert.equal(patch.body.status, "disabled");
      assert.equal(patch.body.fullname, "Erin E");
      const stored = await server.core.database.db
        .selectFrom("radcheck")
        .select(["value"])
        .where("username", "=", "erin")
        .execute();
      assert.deepEqual(stored, [{ value: "second" }]);
      const bad = await server.call("PUT", `/api/users/${erin.id}`, {
        key,
        body: { status: "x", fullname: "changed" },
      });
      assert.equal(bad.status, 400);
      assert.equal((await server.call("GET", `/api/users/${erin.id}`, { key })).body.fullname, "Erin E");
    });

    test("renaming carries the RADIUS rows; renaming onto another user is 409", async () => {
      const fay = (await create({ username: "fay", password: "pw" })).body;
      const renamed = await server.call("PUT", `/api/users/${fay.id}`, { key, body: { username: "faye" } });
      assert.equal(renamed.status, 200);
      const rows = await server.core.database.db
        .selectFrom("radcheck")
        .select(["username"])
        .where("value", "=", "pw")
        .execute();
      assert.deepEqual(rows, [{ username: "faye" }]);
      const clash = await server.call("PUT", `/api/users/${fay.id}`, { key, body: { username: "Alice" } });
      assert.equal(clash.status, 409);
      const self = await server.call("PUT", `/api/users/${fay.id}`, { key, body: { username: "FAYE" } });
      assert.equal(self.status, 200, "a user may change the case of its own name");
    });

    test("delete answers 204 and removes the user's RADIUS rows", async () => {
      const gus = (await create({ username: "gus", password: "pw-gus" })).body;
      const db = server.core.database.db;
      await db
        .insertInto("radusergroup")
        .values({ account_id: 1, username: "gus", groupname: "staff", priority: 1 })
        .execute();
      const res = await server.call("DELETE", `/api/users/${gus.id}`, { key });
      assert.equal(res.status, 204);
      assert.equal(res.text, "");
      assert.equal((await server.call("GET", `/api/users/${gus.id}`, { key })).status, 404);
      assert.equal(
        (await db.selectFrom("radcheck").selectAll().where("username", "=", "gus").execute()).length,
        0,
      );
      assert.equal(
        (await db.selectFrom("radusergroup").selectAll().where("username", "=", "gus").execute()).length,
        0,
      );
    });

    test("tenant isolation: another account's key never sees these users", async () => {
      const otherKey = await server.key("other-tenant");
      const mine = (await create({ username: "shared-name" })).body;
      const list = await server.call("GET", "/api/users", { key: otherKey });
      assert.equal(list.status, 200);
      assert.equal(list.body.total, 0);
      assert.equal((await server.call("GET", `/api/users/${mine.id}`, { key: otherKey })).status, 404);
      assert.equal(
        (await server.call("PUT", `/api/users/${mine.id}`, { key: otherKey, body: { fullname: "x" } }))
          .status,
        404,
      );
      assert.equal((await server.call("DELETE", `/api/users/${mine.id}`, { key: otherKey })).status, 404);
      // The same username may exist in two accounts.
      const theirs = await server.call("POST", "/api/users", {
        key: otherKey,
        body: { username: "shared-name" },
      });
      assert.equal(theirs.status, 201);
      assert.equal((await server.call("GET", `/api/users/${mine.id}`, { key })).body.fullname, "");
    });
  });
}

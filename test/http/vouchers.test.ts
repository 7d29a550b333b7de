import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { VouchersRepo } from "../../src/core/vouchers/repo.ts";
import { randomCode, type VouchersService } from "../../src/core/vouchers/service.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const RANDOM = "[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8}";
const FIELDS = [
  "batch_id",
  "code",
  "created",
  "data_limit",
  "devices_used",
  "expires",
  "first_used",
  "id",
  "session_timeout",
  "status",
  "usage_limit",
  "validity",
].sort();

/** Makes the service's generator answer `codes` first, then random codes again; returns the undo. */
function scriptGenerator(service: VouchersService, codes: string[]): () => void {
  const original = service.generateCode;
  let next = 0;
  service.generateCode = (prefix) => (next < codes.length ? codes[next++]! : original(prefix));
  return () => {
    service.generateCode = original;
  };
}

for (const { dialect, skip } of await dialects()) {
  describe(`vouchers API on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let accountId: number;

    before(async () => {
      server = await startTestServer({ dialect });
      key = await server.key("default", { rateLimit: 100_000 });
      accountId = (await server.account("default")).id;
    });
    after(() => server?.stop());

    const create = (body: unknown, k = key) => server.call("POST", "/api/vouchers", { key: k, body });
    const batch = (body: unknown, k = key) => server.call("POST", "/api/vouchers/batch", { key: k, body });
    const count = async (table: "vouchers" | "voucher_batches") =>
      Number(
        (
          await server.core.database.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );

    test("create with defaults: 201, Location, an 8-character code, status unused", async () => {
      const res = await create({ validity: 3600 });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers.get("location"), `/api/vouchers/${res.body.id}`);
      assert.deepEqual(Object.keys(res.body).sort(), FIELDS);
      assert.match(res.body.code, new RegExp(`^${RANDOM}$`));
      assert.deepEqual(
        { ...res.body, id: 0, code: "", created: "" },
        {
          id: 0,
          code: "",
          created: "",
          status: "unused",
          validity: 3600,
          usage_limit: 1,
          session_timeout: null,
          batch_id: null,
          first_used: null,
          expires: null,
          devices_used: 0,
          data_limit: null,
        },
      );
      assert.match(res.body.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const got = await server.call("GET", `/api/vouchers/${res.body.id}`, { key });
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, res.body);
    });

    test("create with every field; an explicit code is stored upper-case", async () => {
      const res = await create({
        validity: 86_400,
        usage_limit: 0,
        session_timeout: 3600,
        code: "Guest2024",
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.code, "GUEST2024");
      assert.equal(res.body.validity, 86_400);
      assert.equal(res.body.usage_limit, 0);
      assert.equal(res.body.session_timeout, 3600);
      const row = await server.core.database.db
        .selectFrom("vouchers")
        .select(["code", "account_id", "status"])
        .where("id", "=", res.body.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { code: "GUEST2024", account_id: accountId, status: "unused" });
      const longest = await create({
        validity: 31_536_000,
        session_timeout: 31_536_000,
        code: "A".repeat(16),
      });
      assert.equal(longest.status, 201, longest.text);
      const nullTimeout = await create({ validity: 60, session_timeout: null, code: "n0cap" });
      assert.equal(nullTimeout.status, 201, nullTimeout.text);
      assert.equal(nullTimeout.body.session_timeout, null);
    });

    test("an explicit code that exists, in any case, answers 409 and writes nothing", async () => {
      const before = await count("vouchers");
      for (const code of ["guest2024", "GUEST2024", "gUeSt2024"]) {
        const res = await create({ validity: 600, code });
        assert.equal(res.status, 409, `${code}: ${res.text}`);
        assert.equal(res.body.code, 409);
        assert.match(res.body.message, /already exists/);
      }
      assert.equal(await count("vouchers"), before);
    });

    test("findByCode (for the RADIUS door) ignores case and stays in the account", async () => {
      const vouchers = server.core.vouchers;
      assert.equal((await vouchers.findByCode(accountId, "guest2024"))?.code, "GUEST2024");
      assert.equal((await vouchers.findByCode(accountId, "GUEST2024"))?.status, "unused");
      assert.equal(await vouchers.findByCode(accountId, "NOSUCHCODE"), undefined);
      assert.equal(await vouchers.findByCode(accountId, "guest 2024"), undefined);
      assert.equal(await vouchers.findByCode(accountId, ""), undefined);
      const other = await server.account("find-other");
      assert.equal(await vouchers.findByCode(other.id, "guest2024"), undefined);
    });

    test("a batch of 10,000: one request, distinct codes with the prefix, one batch row", async () => {
      const beforeVouchers = await count("vouchers");
      const res = await batch({
        quantity: 10_000,
        prefix: "wifi",
        validity: 7200,
        usage_limit: 3,
        session_timeout: 1800,
      });
      assert.equal(res.status, 201, res.text.slice(0, 500));
      const { batch_id, quantity, data } = res.body;
      assert.deepEqual(Object.keys(res.body).sort(), ["batch_id", "data", "plan_id", "quantity"]);
      assert.equal(res.headers.get("location"), `/api/vouchers?batch_id=${batch_id}`);
      assert.equal(quantity, 10_000);
      assert.equal(data.length, 10_000);
      const codes = new Set(data.map((v: { code: string }) => v.code));
      assert.equal(codes.size, 10_000, "all codes distinct");
      const shape = new RegExp(`^WIFI${RANDOM}$`);
      for (const v of data) {
        assert.match(v.code, shape);
        assert.equal(v.batch_id, batch_id);
        assert.equal(v.status, "unused");
        assert.equal(v.validity, 7200);
        assert.equal(v.usage_limit, 3);
        assert.equal(v.session_timeout, 1800);
      }
      const ids = data.map((v: { id: number }) => v.id);
      assert.ok(
        ids.every((id: number, i: number) => i === 0 || ids[i - 1] < id),
        "data is in id order",
      );
      const db = server.core.database.db;
      assert.equal(await count("vouchers"), beforeVouchers + 10_000);
      const stored = await db
        .selectFrom("vouchers")
        .select(["id", "code"])
        .where("account_id", "=", accountId)
        .where("batch_id", "=", batch_id)
        .orderBy("id")
        .execute();
      assert.equal(stored.length, 10_000);
      assert.deepEqual(
        stored.map((r) => r.id),
        ids,
      );
      assert.ok(stored.every((r) => codes.has(r.code)));
      const batchRow = await db
        .selectFrom("voucher_batches")
        .selectAll()
        .where("id", "=", batch_id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        { ...batchRow, id: 0, created: "" },
        {
          id: 0,
          account_id: accountId,
          prefix: "WIFI",
          quantity: 10_000,
          validity: 7200,
          usage_limit: 3,
          session_timeout: 1800,
          data_limit: null,
          plan_id: null,
          created: "",
        },
      );
      const listed = await server.call("GET", `/api/vouchers?batch_id=${batch_id}&limit=1000&page=10`, {
        key,
      });
      assert.equal(listed.body.total, 10_000);
      assert.deepEqual(
        listed.body.data.map((v: { id: number }) => v.id),
        ids.slice(9000),
      );
    });

    test("generated codes that already exist or repeat are regenerated, not failed", async () => {
      const existing = (await server.call("GET", "/api/vouchers?search=wifi&limit=2", { key })).body.data.map(
        (v: { code: string }) => v.code,
      );
      assert.equal(existing.length, 2);
      const fresh = ["WIFIAAAAAAAA", "WIFIAAAAAAAB", "WIFIAAAAAAAC"];
      const undo = scriptGenerator(server.core.vouchers, [
        existing[0],
        fresh[0]!,
        fresh[0]!,
        existing[1],
        fresh[1]!,
        fresh[2]!,
      ]);
      try {
        const res = await batch({ quantity: 3, prefix: "WIFI", validity: 600 });
        assert.equal(res.status, 201, res.text);
        assert.deepEqual(res.body.data.map((v: { code: string }) => v.code).sort(), fresh);
      } finally {
        undo();
      }
      const undoSingle = scriptGenerator(server.core.vouchers, [existing[0], "SINGLEAAAAAA"]);
      try {
        const res = await create({ validity: 600 });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.code, "SINGLEAAAAAA");
      } finally {
        undoSingle();
      }
    });

    test("a batch is all or nothing: a failure in a later INSERT chunk leaves no row behind", async () => {
      // A trigger makes the database itself refuse one row. The scripted generator puts that row at
      // position 6,000, i.e. in the second multi-row INSERT, after the batch row and 4,000 vouchers
      // were written in the same transaction. Nothing of it may remain.
      const db = server.core.database.db;
      if (dialect === "sqlite") {
        await sql`create trigger wisp_test_fail before insert on vouchers when new.code = 'BOOM0000'
          begin select raise(abort, 'forced failure'); end`.execute(db);
      } else {
        await sql`create function wisp_test_fail() returns trigger language plpgsql as $$
          begin if new.code = 'BOOM0000' then raise exception 'forced failure'; end if; return new; end
          $$`.execute(db);
        await sql`create trigger wisp_test_fail before insert on vouchers
          for each row execute function wisp_test_fail()`.execute(db);
      }
      const script = Array.from({ length: 5999 }, () => randomCode("ATOM"));
      const undo = scriptGenerator(server.core.vouchers, [...script, "BOOM0000"]);
      const before = { vouchers: await count("vouchers"), batches: await count("voucher_batches") };
      try {
        const res = await batch({ quantity: 8000, prefix: "ATOM", validity: 600 });
        assert.equal(res.status, 500, res.text.slice(0, 300));
        assert.deepEqual(res.body, { error: true, message: "internal server error", code: 500 });
      } finally {
        undo();
        await sql`drop trigger wisp_test_fail${sql.raw(dialect === "postgres" ? " on vouchers" : "")}`.execute(
          db,
        );
        if (dialect === "postgres") await sql`drop function wisp_test_fail()`.execute(db);
      }
      assert.deepEqual(
        { vouchers: await count("vouchers"), batches: await count("voucher_batches") },
        before,
      );
      const first = await db.selectFrom("vouchers").select("id").where("code", "=", script[0]!).execute();
      assert.deepEqual(first, []);
      // The same request succeeds once the obstacle is gone.
      const again = await batch({ quantity: 8000, prefix: "ATOM", validity: 600 });
      assert.equal(again.status, 201);
      assert.equal(await count("voucher_batches"), before.batches + 1);
    });

    test("a code another writer takes after the probe: the whole batch is retried once", async () => {
      // Simulates the race by blinding the first probe: the INSERT then hits the unique index, the
      // transaction rolls back (batch row included) and the service starts over with new codes.
      const taken = (await server.call("GET", "/api/vouchers?search=wifi&limit=1", { key })).body.data[0]
        .code;
      const probe = VouchersRepo.prototype.existingCodes;
      let blind = 1;
      VouchersRepo.prototype.existingCodes = function (this: VouchersRepo, id, codes) {
        return blind-- > 0 ? Promise.resolve(new Set<string>()) : probe.call(this, id, codes);
      };
      const undo = scriptGenerator(server.core.vouchers, [taken]);
      const batches = await count("voucher_batches");
      try {
        const res = await batch({ quantity: 3, prefix: "WIFI", validity: 600 });
        assert.equal(res.status, 201, res.text);
        assert.ok(!res.body.data.some((v: { code: string }) => v.code === taken));
        assert.equal(await count("voucher_batches"), batches + 1);
      } finally {
        undo();
        VouchersRepo.prototype.existingCodes = probe;
      }
      // For an explicit code the same race is a conflict, not a retry.
      const lookup = VouchersRepo.prototype.findByCode;
      VouchersRepo.prototype.findByCode = () => Promise.resolve(undefined);
      try {
        const res = await create({ validity: 600, code: taken.toLowerCase() });
        assert.equal(res.status, 409, res.text);
      } finally {
        VouchersRepo.prototype.findByCode = lookup;
      }
    });

    test("bad batch bodies answer 400 naming the field, and write nothing", async () => {
      const ok = { quantity: 2, validity: 600 };
      const cases: [unknown, string][] = [
        [{ ...ok, quantity: 0 }, "quantity"],
        [{ ...ok, quantity: 10_001 }, "quantity"],
        [{ ...ok, quantity: 2.5 }, "quantity"],
        [{ ...ok, quantity: "2" }, "quantity"],
        [{ ...ok, quantity: -1 }, "quantity"],
        [{ validity: 600 }, "quantity"],
        [{ quantity: 2 }, "validity"],
        [{ ...ok, validity: 0 }, "validity"],
        [{ ...ok, validity: -600 }, "validity"],
        [{ ...ok, validity: 59 }, "validity"],
        [{ ...ok, validity: 31_536_001 }, "validity"],
        [{ ...ok, validity: "600" }, "validity"],
        [{ ...ok, validity: 600.5 }, "validity"],
        [{ ...ok, prefix: "ab-c" }, "prefix"],
        [{ ...ok, prefix: "ab c" }, "prefix"],
        [{ ...ok, prefix: "ÄBC" }, "prefix"],
        [{ ...ok, prefix: "ABCDEFGHJ" }, "prefix"],
        [{ ...ok, prefix: 12 }, "prefix"],
        [{ ...ok, usage_limit: -1 }, "usage_limit"],
        [{ ...ok, usage_limit: 1001 }, "usage_limit"],
        [{ ...ok, usage_limit: 1.5 }, "usage_limit"],
        [{ ...ok, session_timeout: 59 }, "session_timeout"],
        [{ ...ok, session_timeout: 0 }, "session_timeout"],
        [{ ...ok, session_timeout: 601 }, "session_timeout"],
        [{ ...ok, session_timeout: 31_536_001 }, "session_timeout"],
        [{ ...ok, session_timeout: "60" }, "session_timeout"],
        [{ ...ok, code: "ABCDEFGH" }, "code"],
        [{ ...ok, quantiy: 3 }, "quantiy"],
        [[], "body"],
        [null, "body"],
      ];
      const before = { vouchers: await count("vouchers"), batches: await count("voucher_batches") };
      for (const [body, field] of cases) {
        const res = await batch(body);
        assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.status} ${res.text.slice(0, 200)}`);
        assert.equal(res.body.code, 400);
        assert.ok(
          res.body.details?.some((d: { field: string }) => d.field === field),
          `${JSON.stringify(body)} should name ${field}: ${res.text}`,
        );
      }
      assert.deepEqual(
        { vouchers: await count("vouchers"), batches: await count("voucher_batches") },
        before,
      );
    });

    test("bad single bodies answer 400 naming the field, and write nothing", async () => {
      const cases: [unknown, string][] = [
        [{}, "validity"],
        [{ validity: 0 }, "validity"],
        [{ validity: -1 }, "validity"],
        [{ validity: 31_536_001 }, "validity"],
        [{ validity: 600, usage_limit: -1 }, "usage_limit"],
        [{ validity: 600, session_timeout: 30 }, "session_timeout"],
        [{ validity: 600, session_timeout: 900 }, "session_timeout"],
        [{ validity: 600, code: "abc" }, "code"],
        [{ validity: 600, code: "A".repeat(17) }, "code"],
        [{ validity: 600, code: "ab-cd" }, "code"],
        [{ validity: 600, code: "ab cd" }, "code"],
        [{ validity: 600, code: 12345 }, "code"],
        [{ validity: 600, prefix: "AB" }, "prefix"],
        [{ validity: 600, quantity: 2 }, "quantity"],
        ["600", "body"],
      ];
      const before = await count("vouchers");
      for (const [body, field] of cases) {
        const res = await create(body);
        assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.status} ${res.text}`);
        assert.ok(
          res.body.details?.some((d: { field: string }) => d.field === field),
          `${JSON.stringify(body)} should name ${field}: ${res.text}`,
        );
      }
      assert.equal(await count("vouchers"), before);
    });

    test("the service refuses the same input for doors without HTTP validation", async () => {
      const vouchers = server.core.vouchers;
      const cases: [() => Promise<unknown>, string][] = [
        [() => vouchers.createBatch(accountId, { quantity: 10_001, validity: 600 }), "quantity"],
        [() => vouchers.createBatch(accountId, { quantity: 2, validity: 600, prefix: "a-b" }), "prefix"],
        [() => vouchers.create(accountId, { validity: Number.NaN }), "validity"],
        [() => vouchers.create(accountId, { validity: 600, usage_limit: 1001 }), "usage_limit"],
        [() => vouchers.create(accountId, { validity: 600, code: "a b c d" }), "code"],
        [() => vouchers.list(accountId, { status: "gone" }, { page: 1, limit: 1 }), "status"],
      ];
      for (const [call, field] of cases) {
        await assert.rejects(call, (error: { status?: number; details?: { field: string }[] }) => {
          assert.equal(error.status, 400);
          assert.ok(
            error.details?.some((d) => d.field === field),
            field,
          );
          return true;
        });
      }
    });

    test("list filters: status (expiry derived from the clock), batch_id, search; pagination", async () => {
      const listKey = await server.key("list-tests", { rateLimit: 100_000 });
      const get = async (query: string) => {
        const res = await server.call("GET", `/api/vouchers?${query}`, { key: listKey });
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        return res.body;
      };
      // "L0" and "O1" are outside the random alphabet, so only the prefix can contain them.
      const a = (await batch({ quantity: 12, prefix: "pl0", validity: 600 }, listKey)).body;
      const b = (await batch({ quantity: 3, prefix: "PO1", validity: 600 }, listKey)).body;
      const single = (await create({ validity: 600, code: "underscore" }, listKey)).body;
      assert.equal((await get("")).total, 16);

      // What the RADIUS door will write on logins, done by hand here.
      const db = server.core.database.db;
      const set = (id: number, status: string, expires: string | null) =>
        db
          .updateTable("vouchers")
          .set({ status, expires, first_used: expires && "2020-01-01T00:00:00Z" })
          .where("id", "=", id)
          .execute();
      const [a0, a1, a2, a3] = a.data as { id: number }[];
      await set(a0!.id, "active", "2999-01-01T00:00:00Z");
      await set(a1!.id, "active", "2020-01-01T01:00:00Z");
      await set(a2!.id, "exhausted", "2020-01-01T01:00:00Z");
      await set(a3!.id, "disabled", null);
      const ids = (page: { data: { id: number }[] }) => page.data.map((v) => v.id);
      assert.deepEqual(ids(await get("status=active")), [a0!.id]);
      const expired = await get("status=expired");
      assert.deepEqual(ids(expired), [a1!.id, a2!.id]);
      assert.ok(expired.data.every((v: { status: string }) => v.status === "expired"));
      assert.deepEqual(ids(await get("status=disabled")), [a3!.id]);
      assert.equal((await get("status=exhausted")).total, 0);
      assert.equal((await get("status=unused")).total, 12);
      const lapsed = await server.call("GET", `/api/vouchers/${a1!.id}`, { key: listKey });
      assert.equal(lapsed.body.status, "expired");

      assert.equal((await get(`batch_id=${a.batch_id}`)).total, 12);
      assert.deepEqual(ids(await get(`batch_id=${b.batch_id}`)), ids(b));
      assert.equal((await get("batch_id=2000000000")).total, 0);

      assert.equal((await get("search=l0")).total, 12);
      assert.equal((await get("search=PL0")).total, 12);
      assert.deepEqual(ids(await get("search=o1")), ids(b));
      assert.deepEqual(ids(await get("search=SCORE")), [single.id]);
      assert.deepEqual(ids(await get(`search=${b.data[0].code.toLowerCase()}`)), [b.data[0].id]);
      // LIKE wildcards are literal characters.
      assert.equal((await get("search=%25")).total, 0);
      assert.equal((await get("search=_")).total, 0);
      assert.equal((await get(`batch_id=${a.batch_id}&search=o1`)).total, 0);
      assert.deepEqual(ids(await get(`batch_id=${a.batch_id}&status=active&search=pl0`)), [a0!.id]);

      const first = await get(`batch_id=${a.batch_id}&limit=5`);
      assert.deepEqual(
        { total: first.total, page: first.page, limit: first.limit },
        { total: 12, page: 1, limit: 5 },
      );
      assert.deepEqual(ids(first), ids(a).slice(0, 5));
      assert.deepEqual(ids(await get(`batch_id=${a.batch_id}&limit=5&page=3`)), ids(a).slice(10));
      const past = await get(`batch_id=${a.batch_id}&limit=5&page=9`);
      assert.deepEqual(past.data, []);
      assert.equal(past.total, 12);
      const defaults = await get("");
      assert.deepEqual({ page: defaults.page, limit: defaults.limit }, { page: 1, limit: 50 });
    });

    test("bad query parameters answer 400", async () => {
      for (const query of [
        "status=gone",
        "status=",
        "batch_id=0",
        "batch_id=abc",
        "batch_id=1.5",
        `search=${"s".repeat(17)}`,
        "page=0",
        "limit=1001",
        "code=ABC",
      ]) {
        const res = await server.call("GET", `/api/vouchers?${query}`, { key });
        assert.equal(res.status, 400, `${query}: ${res.text}`);
        assert.equal(res.body.code, 400);
      }
    });

    test("bad ids answer 400, unknown ids 404", async () => {
      for (const id of ["abc", "0", "-1", "1.5", "99999999999999999999", "batch"]) {
        for (const method of ["GET", "DELETE"]) {
          const res = await server.call(method, `/api/vouchers/${id}`, { key });
          assert.equal(res.status, 400, `${method} ${id}: ${res.text}`);
        }
      }
      const missing = await server.call("GET", "/api/vouchers/999999", { key });
      assert.deepEqual(missing.body, { error: true, message: "voucher 999999 not found", code: 404 });
      assert.equal((await server.call("DELETE", "/api/vouchers/999999", { key })).status, 404);
    });

    test("delete answers 204; the voucher is gone, its batch row stays", async () => {
      const made = (await batch({ quantity: 2, validity: 600 })).body;
      const victim = made.data[0];
      // A device the RADIUS door recorded for it goes with it (ON DELETE CASCADE).
      const db = server.core.database.db;
      await db
        .insertInto("voucher_devices")
        .values({
          account_id: accountId,
          voucher_id: victim.id,
          mac: "aa:bb:cc:dd:ee:ff",
          first_seen: victim.created,
        })
        .execute();
      const res = await server.call("DELETE", `/api/vouchers/${victim.id}`, { key });
      assert.equal(res.status, 204);
      assert.equal(res.text, "");
      assert.equal((await server.call("GET", `/api/vouchers/${victim.id}`, { key })).status, 404);
      assert.equal((await server.call("DELETE", `/api/vouchers/${victim.id}`, { key })).status, 404);
      assert.equal(await server.core.vouchers.findByCode(accountId, victim.code), undefined);
      const devices = await db
        .selectFrom("voucher_devices")
        .select("mac")
        .where("voucher_id", "=", victim.id)
        .execute();
      assert.deepEqual(devices, []);
      const rest = await server.call("GET", `/api/vouchers?batch_id=${made.batch_id}`, { key });
      assert.deepEqual(
        rest.body.data.map((v: { id: number }) => v.id),
        [made.data[1].id],
      );
    });

    test("permissions: vouchers:read may list and get but not write", async () => {
      const reader = await server.key("default", { permissions: "vouchers:read", rateLimit: 100_000 });
      const some = (await create({ validity: 600 })).body;
      assert.equal((await server.call("GET", "/api/vouchers", { key: reader })).status, 200);
      assert.equal((await server.call("GET", `/api/vouchers/${some.id}`, { key: reader })).status, 200);
      for (const [method, path, body] of [
        ["POST", "/api/vouchers", { validity: 600 }],
        ["POST", "/api/vouchers/batch", { quantity: 1, validity: 600 }],
        ["DELETE", `/api/vouchers/${some.id}`, undefined],
      ] as const) {
        const res = await server.call(method, path, { key: reader, body });
        assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
        assert.match(res.body.message, /vouchers:write/);
      }
      const usersOnly = await server.key("default", { permissions: "users:write" });
      assert.equal((await server.call("GET", "/api/vouchers", { key: usersOnly })).status, 403);
      const writer = await server.key("default", { permissions: "vouchers:write" });
      assert.equal((await server.call("GET", "/api/vouchers", { key: writer })).status, 200);
      assert.equal((await create({ validity: 600 }, writer)).status, 201);
      assert.equal((await server.call("GET", "/api/vouchers")).status, 401);
    });

    test("tenant isolation: another account never sees these vouchers; codes may repeat across", async () => {
      const otherKey = await server.key("voucher-tenant", { rateLimit: 100_000 });
      const mine = (await create({ validity: 600, code: "SameCode" })).body;
      const list = await server.call("GET", "/api/vouchers", { key: otherKey });
      assert.equal(list.body.total, 0);
      assert.equal((await server.call("GET", `/api/vouchers/${mine.id}`, { key: otherKey })).status, 404);
      assert.equal((await server.call("DELETE", `/api/vouchers/${mine.id}`, { key: otherKey })).status, 404);
      assert.equal((await server.call("GET", `/api/vouchers/${mine.id}`, { key })).status, 200);
      const theirs = await create({ validity: 600, code: "samecode" }, otherKey);
      assert.equal(theirs.status, 201, theirs.text);
      assert.notEqual(theirs.body.id, mine.id);
      const theirBatch = (await batch({ quantity: 2, validity: 600 }, otherKey)).body;
      const seen = await server.call("GET", `/api/vouchers?batch_id=${theirBatch.batch_id}`, { key });
      assert.equal(seen.body.total, 0);
      const other = await server.account("voucher-tenant");
      assert.equal((await server.core.vouchers.findByCode(other.id, "SAMECODE"))?.id, theirs.body.id);
      assert.equal((await server.core.vouchers.findByCode(accountId, "SAMECODE"))?.id, mine.id);
    });
  });
}

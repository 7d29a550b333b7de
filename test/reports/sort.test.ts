// Sorting report pages: sort=<field> ascending, sort=-<field> descending, newest first without it;
// text ignoring case, missing values last, ties by time then id in the same direction; unknown
// fields (and orders for files, which are always newest first) are 400 in the API's error shape.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { isoSeconds } from "../../src/core/reports/time.ts";
import { ValidationError } from "../../src/core/shared/errors.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/** 2025-06-15T15:06:40Z. */
const T0 = 1_750_000_000;
const window = (from: number, to: number) => `earliest=${from}&latest=${to}`;

for (const { dialect, skip } of await dialects()) {
  describe(`sorting report pages on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let mine: AccountRow;
    let uniq = 0;
    const pg = dialect === "postgres";
    const db = () => server.core.database.db;
    const get = (url: string) => server.call("GET", url, { key });

    before(async () => {
      server = await startTestServer({ dialect });
      mine = await server.account("default");
      key = await server.key(mine, { rateLimit: 100_000 });
    });
    after(() => server?.stop());

    async function attempt(at: number, username: string, reply = "Access-Accept") {
      await db()
        .insertInto("radpostauth")
        .values({
          username,
          pass: "",
          reply,
          authdate: pg ? new Date(at * 1000) : isoSeconds(at).slice(0, 19).replace("T", " "),
          account_id: mine.id,
        })
        .execute();
    }

    async function session(start: number, username: string, stop: number | null, output: number | null) {
      const time = (s: number | null) => (s === null ? null : pg ? new Date(s * 1000) : s);
      const row = await db()
        .insertInto("radacct")
        .values({
          acctsessionid: `s${++uniq}`,
          acctuniqueid: `sort-${uniq}`,
          username,
          nasipaddress: "192.0.2.10",
          acctstarttime: time(start),
          acctstoptime: time(stop),
          acctsessiontime: stop === null ? null : stop - start,
          acctoutputoctets: output,
          account_id: mine.id,
        })
        .returning("radacctid")
        .executeTakeFirstOrThrow();
      return row.radacctid;
    }

    async function user(username: string, email: string, created: number) {
      await db()
        .insertInto("users")
        .values({
          account_id: mine.id,
          username,
          email,
          fullname: "",
          status: "enabled",
          created: isoSeconds(created),
          updated: isoSeconds(created),
        })
        .execute();
    }

    const column = (res: { body: { data: Record<string, unknown>[] } }, name: string) =>
      res.body.data.map((r) => r[name]);

    // Byte order would put "Dave" before "bob", and "C@" before "a@": the tests tell them apart.
    test("110: by time either way, by username ignoring case, ties by time in the same direction", async () => {
      const base = T0;
      await attempt(base + 1, "bob");
      await attempt(base + 2, "Alice");
      await attempt(base + 3, "Dave", "Access-Reject");
      await attempt(base + 4, "bob");
      const w = window(base, base + 60);
      const times = (sort: string) => get(`/api/reports/110?${w}${sort}`).then((r) => column(r, "time"));
      const newest = [4, 3, 2, 1].map((s) => isoSeconds(base + s));
      assert.deepEqual(await times(""), newest, "newest first without sort");
      assert.deepEqual(await times("&sort=-time"), newest);
      assert.deepEqual(await times("&sort=time"), [...newest].reverse());

      const names = async (sort: string) => {
        const res = await get(`/api/reports/110?${w}&sort=${sort}`);
        assert.equal(res.status, 200, sort);
        return res.body.data.map(
          (r: { username: string; time: string }) => `${r.username}@${r.time.slice(17, 19)}`,
        );
      };
      assert.deepEqual(await names("username"), ["Alice@42", "bob@41", "bob@44", "Dave@43"]);
      assert.deepEqual(await names("-username"), ["Dave@43", "bob@44", "bob@41", "Alice@42"]);
      assert.deepEqual(await names("-result"), ["Dave@43", "bob@44", "Alice@42", "bob@41"]);

      // Pages follow the order, without overlap; the CSV page too.
      const first = await get(`/api/reports/110?${w}&sort=username&limit=2`);
      const second = await get(`/api/reports/110?${w}&sort=username&limit=2&page=2`);
      assert.deepEqual(
        [...column(first, "username"), ...column(second, "username")],
        ["Alice", "bob", "bob", "Dave"],
      );
      assert.equal(first.body.total, 4);
      const csv = await get(`/api/reports/110?${w}&sort=username&format=csv`);
      assert.deepEqual(
        csv.text
          .split("\r\n")
          .slice(1, -1)
          .map((line) => line.split(",")[1]),
        ["Alice", "bob", "bob", "Dave"],
      );
    });

    test("120: open sessions (no stop) and missing byte counts come last either way", async () => {
      const base = T0 + 86_400;
      const early = await session(base, "a", base + 100, 50);
      const open = await session(base + 10, "b", null, null);
      const late = await session(base + 20, "c", base + 30, 900);
      const w = window(base, base + 3600);
      const ids = async (sort: string) =>
        column(await get(`/api/reports/120?${w}&sort=${sort}`), "session_id");
      assert.deepEqual(await ids("stop"), [late, early, open]);
      assert.deepEqual(await ids("-stop"), [early, late, open]);
      assert.deepEqual(await ids("duration"), [late, early, open]);
      assert.deepEqual(await ids("-output_bytes"), [late, early, open]);
      assert.deepEqual(await ids("output_bytes"), [early, late, open]);
      assert.deepEqual(await ids("start"), [early, open, late]);
      assert.deepEqual(await ids("-start"), [late, open, early]);
    });

    test("115: by username and by email", async () => {
      const base = T0 + 2 * 86_400;
      await user("zed", "b@example.com", base);
      await user("Amy", "C@example.com", base + 1);
      await user("mia", "a@example.com", base + 2);
      const w = window(base, base + 60);
      const names = async (sort: string) => column(await get(`/api/reports/115?${w}${sort}`), "username");
      assert.deepEqual(await names(""), ["mia", "Amy", "zed"]);
      assert.deepEqual(await names("&sort=created"), ["zed", "Amy", "mia"]);
      assert.deepEqual(await names("&sort=username"), ["Amy", "mia", "zed"]);
      assert.deepEqual(await names("&sort=-email"), ["Amy", "zed", "mia"]);
    });

    test("unknown fields are 400 naming the accepted values; files take no other order", async () => {
      for (const [id, sort] of [
        [110, "password"],
        [110, "created"],
        [110, "-"],
        [110, "--time"],
        [115, "last_seen"],
        [120, "Start"],
        [120, ""],
      ] as const) {
        const res = await get(`/api/reports/${id}?sort=${encodeURIComponent(sort)}`);
        assert.equal(res.status, 400, `${id} sort=${sort}`);
        assert.equal(res.body.error, true);
        assert.equal(res.body.code, 400);
        assert.match(res.body.message, /^sort must be one of /);
        assert.equal(res.body.details?.[0]?.field, "sort");
      }
      const bad = await get("/api/reports/110?sort=password");
      assert.deepEqual(bad.body.details, [
        { field: "sort", message: "must be one of time, username, result, -time, -username, -result" },
      ]);
      assert.equal((await get("/api/reports/110?sort=password&format=csv")).status, 400);

      // Files are built newest first: that order is accepted, any other is refused.
      assert.equal((await get("/api/reports/120?sort=-start&format=csvfile")).status, 202);
      const file = await get("/api/reports/120?sort=start&format=csvfile");
      assert.equal(file.status, 400);
      assert.deepEqual(file.body.details, [
        { field: "sort", message: "cannot order a file: files are newest first (-start)" },
      ]);

      // Other doors go through the same rule in the service.
      assert.throws(() => server.core.reports.sort(115, "password"), ValidationError);
      assert.deepEqual(server.core.reports.sort(115, undefined), { field: "created", descending: true });
    });

    test("the OpenAPI document lists each report's orders", async () => {
      const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
      for (const [id, fields] of [
        [110, ["time", "username", "result"]],
        [120, ["start", "stop", "duration", "username", "input_bytes", "output_bytes"]],
      ] as const) {
        const parameters = doc.paths[`/api/reports/${id}`].get.parameters as {
          name: string;
          in: string;
          schema: { enum: string[] };
        }[];
        const sort = parameters.find((p) => p.name === "sort" && p.in === "query");
        assert.ok(sort, `report ${id} documents sort`);
        assert.deepEqual(sort.schema.enum, [...fields, ...fields.map((f) => `-${f}`)]);
      }
    });
  });
}

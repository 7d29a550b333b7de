// Reports include the present: a row written by Wisp's own code paths a moment before the request,
// asked for with latest=now (or no latest), is in the page, the CSV page and the CSV file. Rows are
// written at the start of a fresh second, so before the fix (now truncated to the second, t < now)
// they were left out every time rather than now and then. Sub-second stored times (FreeRADIUS
// writes authdate as '%S.%M') compare as the second they fall in.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import type { Pair } from "../../src/core/aaa/pairs.ts";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { isoSeconds } from "../../src/core/reports/time.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until a second has just begun: what follows runs well inside that one second. */
async function freshSecond(): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 5);
}

for (const { dialect, skip } of await dialects()) {
  describe(`reports include the present on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let key: string;
    let mine: AccountRow;
    let client: { id: number; account_id: number };
    let n = 0;
    const get = (url: string) => server.call("GET", url, { key });

    before(async () => {
      server = await startTestServer({ dialect });
      mine = await server.account("default");
      key = await server.key(mine, { rateLimit: 100_000 });
      const { network } = await server.core.networks.create(mine.id, {
        name: "Present",
        nas_ip: "192.0.2.88",
        secret: "present-secret-1",
      });
      client = { id: network.id, account_id: mine.id };
      await server.core.users.create(mine.id, { username: "radia", password: "pw-1234" });
    });
    after(() => server?.stop());

    async function waitForTask(name: string) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        server.worker?.poke();
        const res = await get(`/api/reports/tasks?task_name=${name}&format=csvfile`);
        if (res.status !== 202) return res;
        assert.ok(Date.now() < deadline, `task ${name} still ${res.body.status}`);
        await sleep(25);
      }
    }

    /** Writes one row through Wisp's own code, stamped this second; answers its name. */
    const writers = {
      110: async () => {
        const name = `guest${++n}`;
        const request: Pair[] = [
          { attribute: "User-Name", op: "=", value: name },
          { attribute: "NAS-IP-Address", op: "=", value: "192.0.2.88" },
        ];
        await server.core.aaa.authenticate(client, request, { password: Buffer.from("nope") });
        return name;
      },
      115: async () => {
        const name = `new${++n}`;
        const res = await server.call("POST", "/api/users", { key, body: { username: name } });
        assert.equal(res.status, 201);
        return name;
      },
      120: async () => {
        const request: Pair[] = [
          { attribute: "User-Name", op: "=", value: "radia" },
          { attribute: "NAS-IP-Address", op: "=", value: "192.0.2.88" },
          { attribute: "Acct-Status-Type", op: "=", value: "Start" },
          { attribute: "Acct-Session-Id", op: "=", value: `present-${++n}` },
        ];
        await server.core.aaa.account(client, request, "192.0.2.88");
        return `present-${n}`;
      },
    };
    /** What identifies the row in a report: the username, or for 120 the session's id. */
    async function identity(id: 110 | 115 | 120, name: string): Promise<string> {
      if (id !== 120) return name;
      const row = await server.core.database.db
        .selectFrom("radacct")
        .select("radacctid")
        .where("acctsessionid", "=", name)
        .executeTakeFirstOrThrow();
      return String(row.radacctid);
    }
    const ids = (id: 110 | 115 | 120, res: { body: { data: Record<string, unknown>[] } }) =>
      res.body.data.map((r) => String(id === 120 ? r.session_id : r.username));
    /** The row's CSV line: 110 and 115 have the username second, 120 the session's id first. */
    const line = (id: 110 | 115 | 120, value: string) =>
      new RegExp(id === 120 ? `\r\n${value},` : `\r\n[^,]+,${value},`);

    for (const id of [110, 115, 120] as const) {
      test(`${id}: a row of this very second is in the page, with and without latest=now`, async () => {
        await freshSecond();
        const name = await writers[id]();
        const page = await get(`/api/reports/${id}?latest=now`);
        const defaults = await get(`/api/reports/${id}`);
        const csv = await get(`/api/reports/${id}?earliest=-1h&latest=now&format=csv`);
        const expected = await identity(id, name);
        assert.equal(page.status, 200);
        assert.ok(ids(id, page).includes(expected), `${expected} with latest=now`);
        assert.ok(ids(id, defaults).includes(expected), `${expected} without latest`);
        assert.match(csv.text, line(id, expected), `${expected} in the CSV page`);
      });

      test(`${id}: a row of this very second is in the CSV file of latest=now`, async () => {
        await freshSecond();
        const name = await writers[id]();
        const queued = await get(`/api/reports/${id}?earliest=-1d&latest=now&format=csvfile`);
        assert.equal(queued.status, 202);
        const done = await waitForTask(queued.body.task_name);
        assert.equal(done.status, 200);
        assert.match(done.text, line(id, await identity(id, name)));
      });
    }

    test("sub-second stored times count as their second, and files keep every such row", async () => {
      const second = 1_750_000_000;
      // What FreeRADIUS's stock query writes: microseconds (as text on SQLite).
      const stamp =
        dialect === "postgres"
          ? sql`to_timestamp(${second}) + interval '999999 microseconds'`
          : `${isoSeconds(second).slice(0, 19).replace("T", " ")}.999999`;
      for (let i = 0; i < 5; i++) {
        await sql`insert into radpostauth (username, pass, reply, authdate, account_id)
          values (${`fraction${i}`}, '', 'Access-Accept', ${stamp}, ${mine.id})`.execute(
          server.core.database.db,
        );
      }
      const total = async (from: number, to: number) =>
        (await get(`/api/reports/110?earliest=${from}&latest=${to}`)).body.total;
      assert.equal(await total(second, second + 1), 5, "their own second");
      assert.equal(await total(second - 60, second), 0, "a window ending at their second");
      assert.equal(await total(second + 1, second + 60), 0, "a window starting after their second");
      // A keyset cursor rounded to milliseconds would skip the rest of the tie after each chunk.
      const tuning = server.core.reports.tuning;
      const saved = { ...tuning.chunkRows };
      try {
        tuning.chunkRows = { 110: 2, 115: 2, 120: 2 };
        const w = `earliest=${second}&latest=${second + 1}`;
        const queued = await get(`/api/reports/110?${w}&format=csvfile`);
        const file = await waitForTask(queued.body.task_name);
        assert.equal(file.text, (await get(`/api/reports/110?${w}&format=csv`)).text);
        assert.equal(file.text.split("\r\n").length, 7, "a header, 5 rows and the last CRLF");
      } finally {
        tuning.chunkRows = saved;
      }
    });
  });
}

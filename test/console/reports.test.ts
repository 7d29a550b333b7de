// The console's reports page over plain HTTP: a report and window picked with time expressions or
// presets, the preview of windows up to 4 hours (escaped cells, paging), the CSV download of that
// window, errors next to the fields, larger windows as a background CSV file (CSRF on the form, a
// task page refreshing itself until the download), and other accounts' rows and tasks kept apart.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { AccountRow } from "../../src/core/accounts/repo.ts";
import { REPORT_COLUMNS } from "../../src/core/reports/definitions.ts";
import { isoSeconds } from "../../src/core/reports/time.ts";
import { ConsoleClient } from "../support/browser.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const PASSWORD = "a long enough password";
const ROWS = 55;

async function until<T>(fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

for (const { dialect, skip } of await dialects()) {
  describe(`console reports over HTTP (${dialect})`, { skip }, () => {
    let server: TestServer;
    let mine: AccountRow;
    let client: ConsoleClient;
    let other: ConsoleClient;
    const now = Math.floor(Date.now() / 1000);

    async function attempt(at: number, username: string, account: number) {
      const pg = dialect === "postgres";
      await server.core.database.db
        .insertInto("radpostauth")
        .values({
          username,
          pass: "",
          reply: "Access-Accept",
          authdate: pg ? new Date(at * 1000) : isoSeconds(at).slice(0, 19).replace("T", " "),
          account_id: account,
          user_id: null,
          network_id: null,
          client_mac: "aa:bb:cc:dd:ee:01",
          ap_mac: "00:11:22:33:44:55",
          ssid: "Lobby",
          nas_ip: "192.0.2.10",
          nas_identifier: "lobby-ap",
          reason: null,
        })
        .execute();
    }

    before(async () => {
      server = await startTestServer({ dialect });
      mine = await server.account("default");
      const theirs = await server.account("reports-second");
      await server.core.admins.create(mine, { email: "a@example.com", password: PASSWORD });
      await server.core.admins.create(theirs, { email: "b@example.com", password: PASSWORD });
      // ROWS attempts in the last hour, the newest one named to test escaping and CSV injection;
      // one three hours ago, one two days ago; the other account's one a minute ago.
      for (let i = 0; i < ROWS - 1; i++) await attempt(now - 120 - i * 30, `guest${i}`, mine.id);
      await attempt(now - 60, "<b>=cmd</b>", mine.id);
      await attempt(now - 3 * 3600, "earlier", mine.id);
      await attempt(now - 2 * 86_400, "old-timer", mine.id);
      await attempt(now - 60, "theirs-only", theirs.id);
      client = new ConsoleClient(server.url);
      other = new ConsoleClient(server.url);
      assert.equal((await client.login("a@example.com", PASSWORD)).status, 303);
      assert.equal((await other.login("b@example.com", PASSWORD)).status, 303);
    });
    after(() => server?.stop());

    test("the form: nav entry, defaults -4h/now, presets, preview of the first page", async () => {
      const res = await client.get("/console/reports");
      assert.equal(res.status, 200);
      assert.match(res.text, /<a href="\/console\/reports" aria-current="page">Reports<\/a>/);
      assert.match(res.text, /<form method="get" action="\/console\/reports"/);
      assert.match(res.text, /name="earliest" type="text" value="-4h"/);
      assert.match(res.text, /name="latest" type="text" value="now"/);
      assert.match(res.text, /<option value="110" selected>110 · Authentication requests/);
      for (const e of ["-1h", "-4h", "-24h", "-7d"]) {
        assert.ok(
          res.text.includes(`href="/console/reports?report=110&amp;earliest=${e}&amp;latest=now"`),
          e,
        );
      }
      for (const column of REPORT_COLUMNS[110]) assert.ok(res.text.includes(`<th>${column}</th>`), column);
      // Newest first, escaped; 56 rows in 4 hours: 50 here, paging to the rest.
      assert.match(res.text, /<td>&lt;b&gt;=cmd&lt;\/b&gt;<\/td>/);
      assert.ok(!res.text.includes("<b>=cmd"), "cells are escaped");
      assert.ok(!res.text.includes("theirs-only"), "another account's rows are not shown");
      assert.ok(!res.text.includes("old-timer"));
      assert.match(res.text, /1–50 of 56/);
      const next = /href="([^"]+)" rel="next"/.exec(res.text)?.[1]?.replaceAll("&amp;", "&") ?? "";
      assert.equal(next, "/console/reports?report=110&earliest=-4h&latest=now&page=2");
      const second = await client.get(next);
      assert.match(second.text, /51–56 of 56/);
      assert.match(second.text, /<td>earlier<\/td>/);
      assert.ok(!second.text.includes("Prepare CSV file"), "a 4-hour window is no file task");

      const hour = await client.get("/console/reports?report=110&earliest=-1h&latest=now");
      assert.match(hour.text, /href="[^"]*earliest=-1h[^"]*" aria-current="true">Last hour/);
      assert.match(hour.text, /1–50 of 55/);
      const sessions = await client.get("/console/reports?report=120");
      assert.match(sessions.text, /No rows in this window/);
      assert.match(sessions.text, /Session data, /);
    });

    test("Download CSV: every row of the previewed window, as an attachment", async () => {
      const page = await client.get("/console/reports?report=110&earliest=-4h&latest=now");
      const link = /href="(\/console\/reports\/csv\?[^"]+)" download>Download CSV/.exec(page.text)?.[1];
      assert.ok(link);
      const url = link.replaceAll("&amp;", "&");
      assert.match(url, /earliest=\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\dZ&latest=/, "pinned to resolved times");
      const res = await client.get(url);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "text/csv; charset=utf-8");
      assert.match(
        res.headers.get("content-disposition") ?? "",
        /^attachment; filename="report-110-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.csv"$/,
      );
      assert.equal(res.headers.get("x-report-rows"), "56");
      const lines = res.text.split("\r\n").filter(Boolean);
      assert.equal(lines[0], REPORT_COLUMNS[110].join(","));
      assert.equal(lines.length, 57, "a header and all 56 rows, not only the first page");
      assert.ok(lines[1]?.includes("<b>=cmd</b>"), "CSV holds the raw text");
      assert.ok(res.text.includes("earlier"));
      assert.ok(!res.text.includes("theirs-only"));
      const bad = await client.get("/console/reports/csv?report=110&earliest=yesterday");
      assert.equal(bad.status, 400);
      assert.match(bad.text, /id="e-earliest">Earliest &quot;yesterday&quot; is not a time expression/);
    });

    test("bad input: each error next to its field, the form keeps what was typed", async () => {
      const res = await client.get("/console/reports?report=110&earliest=-4x&latest=now");
      assert.equal(res.status, 400);
      assert.match(res.text, /id="e-earliest">Earliest &quot;-4x&quot; is not a time expression/);
      assert.match(res.text, /value="-4x"/);
      const script = await client.get("/console/reports?report=110&earliest=-1h&latest=%3Cscript%3E");
      assert.equal(script.status, 400);
      assert.match(script.text, /id="e-latest">Latest &quot;&lt;script&gt;&quot; is not a time expression/);
      assert.match(script.text, /value="&lt;script&gt;"/);
      assert.ok(!script.text.includes("<script>"));
      const order = await client.get("/console/reports?earliest=-1h&latest=-2h");
      assert.equal(order.status, 400);
      assert.match(order.text, /id="e-latest">Latest must be later than earliest/);
      const report = await client.get("/console/reports?report=999");
      assert.equal(report.status, 400);
      assert.match(report.text, /id="e-report">Report must be one of 110, 115, 120/);
    });

    let taskPath = "";

    test("a larger window: no preview; Prepare CSV file (CSRF checked), task page, download", async () => {
      const page = await client.get("/console/reports?report=110&earliest=-7d&latest=now");
      assert.equal(page.status, 200);
      assert.ok(!page.text.includes("<table"), "no preview");
      assert.match(page.text, /<form method="post" action="\/console\/reports\/tasks">/);
      assert.match(page.text, /Prepare CSV file/);
      const fields = { report: "110", earliest: "-7d", latest: "now" };
      const forged = await client.post("/console/reports/tasks", fields, { csrf: null });
      assert.equal(forged.status, 403);
      const wrong = await client.post("/console/reports/tasks", fields, { csrf: "x".repeat(43) });
      assert.equal(wrong.status, 403);
      const bad = await client.post("/console/reports/tasks", { ...fields, earliest: "soon" });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /id="e-earliest">Earliest &quot;soon&quot; is not a time expression/);

      await client.get("/console/reports?report=110&earliest=-7d&latest=now");
      const made = await client.post("/console/reports/tasks", fields);
      assert.equal(made.status, 303);
      assert.match(made.location ?? "", /^\/console\/reports\/tasks\/[0-9a-f]{32}$/);
      taskPath = made.location ?? "";
      const first = await client.get(taskPath);
      assert.equal(first.status, 200);
      if (!/ready/.test(first.text)) assert.match(first.text, /<meta http-equiv="refresh" content="2">/);
      const done = await until(async () => {
        const res = await client.get(taskPath);
        return /The file is ready/.test(res.text) ? res : undefined;
      });
      assert.ok(!done.text.includes('http-equiv="refresh"'), "a finished task stops refreshing");
      assert.match(done.text, /<strong>57<\/strong> rows/);
      assert.ok(done.text.includes(`href="${taskPath}/download"`));
      const file = await client.get(`${taskPath}/download`);
      assert.equal(file.status, 200);
      assert.equal(file.headers.get("content-type"), "text/csv; charset=utf-8");
      assert.match(
        file.headers.get("content-disposition") ?? "",
        /^attachment; filename="report-110-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.csv"$/,
      );
      const lines = file.text.split("\r\n").filter(Boolean);
      assert.equal(lines[0], REPORT_COLUMNS[110].join(","));
      assert.equal(lines.length, 58);
      assert.ok(file.text.includes("old-timer"));
      assert.ok(!file.text.includes("theirs-only"));
    });

    test("past the account's report files under way: the form again with 429 and Retry-After", async () => {
      await server.worker!.stop();
      try {
        const fields = { report: "110", earliest: "-30d", latest: "now" };
        for (let i = 0; i < 10; i++) {
          await other.get("/console/reports?report=110&earliest=-30d&latest=now");
          assert.equal((await other.post("/console/reports/tasks", fields)).status, 303);
        }
        const refused = await other.post("/console/reports/tasks", fields);
        assert.equal(refused.status, 429);
        assert.match(refused.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
        assert.match(refused.text, /role="alert">10 report files of this account are queued or being built/);
        assert.match(refused.text, /<form method="get" action="\/console\/reports"/, "the form again");
      } finally {
        server.worker!.start();
      }
    });

    test("isolation: another account's task and unknown names answer 404", async () => {
      assert.ok(taskPath);
      assert.equal((await other.get(taskPath)).status, 404);
      assert.equal((await other.get(`${taskPath}/download`)).status, 404);
      assert.equal((await client.get("/console/reports/tasks/nope")).status, 404);
      assert.equal((await client.get("/console/reports/tasks/a%2F..%2Fb/download")).status, 404);
      const theirs = await other.get("/console/reports?report=110&earliest=-7d");
      assert.ok(!theirs.text.includes("<table"));
      const preview = await other.get("/console/reports?report=110");
      assert.match(preview.text, /<td>theirs-only<\/td>/);
      assert.ok(!preview.text.includes("guest1"));
      assert.equal((await new ConsoleClient(server.url).get("/console/reports")).status, 303, "login first");
    });
  });
}

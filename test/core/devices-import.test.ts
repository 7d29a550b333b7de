// CSV import at scale, in-process on real databases: 100,000 rows stream in with progress and
// bounded memory; one bad row anywhere refuses the whole file; the CSV reader takes chunks split
// anywhere (inside quotes, between "" and CR LF).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readCsv } from "../../src/core/devices/csv.ts";
import { DevicesRepo } from "../../src/core/devices/repo.ts";
import { DevicesService } from "../../src/core/devices/service.ts";
import type { Database } from "../../src/db/database.ts";
import { dialects, withDatabase } from "../support/databases.ts";

const ROWS = 100_000;

/** Row i's MAC: locally administered unicast (02:...), unique per i. */
const macOf = (i: number) =>
  `02:00:00:${((i >> 16) & 0xff).toString(16).padStart(2, "0")}:${((i >> 8) & 0xff).toString(16).padStart(2, "0")}:${(i & 0xff).toString(16).padStart(2, "0")}`;

/** The file as a stream of 64 KiB chunks, generated as read (never whole in memory). */
async function* csvFile(rows: number, bad?: { at: number; line: string }): AsyncGenerator<Buffer> {
  let text = "mac,name,description\n";
  for (let i = 1; i <= rows; i++) {
    text += bad && i === bad.at ? `${bad.line}\n` : `${macOf(i)},device ${i},imported\n`;
    if (text.length > 65_536) {
      yield Buffer.from(text);
      text = "";
    }
  }
  yield Buffer.from(text);
}

async function count(database: Database): Promise<number> {
  const row = await database.db
    .selectFrom("devices")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function account(database: Database): Promise<number> {
  const row = await database.db
    .insertInto("accounts")
    .values({ name: "default", created: "2026-01-01T00:00:00Z" })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

describe("CSV reader", () => {
  test("records are the same whatever the chunk boundaries", async () => {
    const text = 'a,"b ""q"", c",d\r\n"multi\nline",,\r\n\r\nlast,"x"';
    const expected = [
      { line: 1, cells: ["a", 'b "q", c', "d"] },
      { line: 2, cells: ["multi\nline", "", ""] },
      { line: 5, cells: ["last", "x"] },
    ];
    for (let size = 1; size <= text.length; size++) {
      const chunks = async function* () {
        for (let i = 0; i < text.length; i += size) yield Buffer.from(text.slice(i, i + size));
      };
      const records = [];
      for await (const r of readCsv(chunks())) records.push(r);
      assert.deepEqual(records, expected, `chunks of ${size}`);
    }
  });
});

for (const { dialect, skip } of await dialects()) {
  describe(`devices CSV import of ${ROWS} rows on ${dialect}`, { skip }, () => {
    test("all rows in, with progress, memory bounded; one bad row refuses everything", {
      timeout: 300_000,
    }, async () => {
      await withDatabase(dialect, async (database) => {
        const accountId = await account(database);
        const service = new DevicesService(new DevicesRepo(database.db, database.dialect));
        // A bad row near the end: everything before it was already written in the transaction.
        const progress: number[] = [];
        await assert.rejects(
          service.importCsv(
            accountId,
            csvFile(ROWS, { at: ROWS - 1, line: "01:00:5e:00:00:01,multicast," }),
            (n) => progress.push(n),
          ),
          (error: Error & { details?: { field: string; message: string }[] }) => {
            assert.deepEqual(error.details, [
              {
                field: `line ${ROWS}`,
                message: "mac must be a unicast address (this one is multicast or broadcast)",
              },
            ]);
            return true;
          },
        );
        assert.equal(await count(database), 0, "nothing half-imported");
        assert.ok(progress.length >= ROWS / 1000, "progress was reported");

        global.gc?.();
        const heapBefore = process.memoryUsage().heapUsed;
        let peak = heapBefore;
        const started = Date.now();
        const { created } = await service.importCsv(accountId, csvFile(ROWS), () => {
          peak = Math.max(peak, process.memoryUsage().heapUsed);
        });
        assert.equal(created, ROWS);
        assert.equal(await count(database), ROWS);
        // One key per MAC seen plus a chunk of rows: tens of MB, not the file times objects.
        const grownMb = (peak - heapBefore) / 2 ** 20;
        console.log(
          `# ${dialect}: ${ROWS} rows in ${Date.now() - started} ms, heap grew at most ${grownMb.toFixed(0)} MB`,
        );
        assert.ok(grownMb < 150, `heap grew ${grownMb} MB`);

        // The same file again: every row is already a device, nothing changes.
        await assert.rejects(service.importCsv(accountId, csvFile(10)), /already a device of this account/);
        assert.equal(await count(database), ROWS);
      });
    });
  });
}

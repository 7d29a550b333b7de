// CSV cells and lines (RFC 4180 quoting, OWASP formula-injection prefix) and the pooled writer's
// backpressure and error handling.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { CsvWriter, csvCell, csvLine, csvTable } from "../../src/core/reports/csv.ts";

describe("CSV", () => {
  test("plain cells stay as they are; null is empty; numbers are digits", () => {
    assert.equal(csvCell("alice"), "alice");
    assert.equal(csvCell("Guest WiFi"), "Guest WiFi");
    assert.equal(csvCell(""), "");
    assert.equal(csvCell(null), "");
    assert.equal(csvCell(42), "42");
    assert.equal(csvCell(0), "0");
    assert.equal(csvCell("aa:bb:cc:dd:ee:ff"), "aa:bb:cc:dd:ee:ff");
    assert.equal(csvCell("2026-11-25T21:16:18Z"), "2026-11-25T21:16:18Z");
  });

  test("commas, quotes, CR and LF are quoted, quotes doubled", () => {
    assert.equal(csvCell("Smith, John"), '"Smith, John"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell("two\nlines"), '"two\nlines"');
    assert.equal(csvCell("cr\rhere"), '"cr\rhere"');
    assert.equal(csvCell('"'), '""""');
    assert.equal(csvCell("O'Brien"), "O'Brien", "a single quote inside needs nothing");
  });

  test("text starting with = + - @ tab or CR gets a leading ' (formula injection)", () => {
    assert.equal(csvCell("=1+1"), "'=1+1");
    assert.equal(csvCell("+33 1 23"), "'+33 1 23");
    assert.equal(csvCell("-2+3"), "'-2+3");
    assert.equal(csvCell("@SUM(A1)"), "'@SUM(A1)");
    assert.equal(csvCell("\tx"), "'\tx");
    assert.equal(csvCell("\rx"), '"\'\rx"', "prefixed, then quoted for the CR");
    assert.equal(csvCell('=HYPERLINK("http://x","y")'), '"\'=HYPERLINK(""http://x"",""y"")"');
    assert.equal(csvCell("=1,2"), `"'=1,2"`);
    assert.equal(csvCell("a=b"), "a=b", "only the first character counts");
    assert.equal(csvCell(-5), "-5", "numbers are never prefixed");
  });

  test("lines end with CRLF; a table starts with its header", () => {
    assert.equal(csvLine(["a", 1, null, "b,c"]), 'a,1,,"b,c"\r\n');
    assert.equal(
      csvTable(
        ["x", "y"],
        [
          ["1", 2],
          [null, "=z"],
        ],
      ),
      "x,y\r\n1,2\r\n,'=z\r\n",
    );
  });

  test("the writer writes every line, in order, through a few reused buffers", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wisp-csv-"));
    const file = path.join(dir, "out.csv");
    const writer = new CsvWriter(fs.createWriteStream(file), 1000, 2);
    let expected = "";
    for (let i = 0; i < 5000; i++) {
      const cells = [i, `name ${i}`, i % 7 === 0 ? "Ünïcödé, ✓" : null];
      expected += csvLine(cells);
      if (writer.add(cells)) await writer.flush();
    }
    // One line longer than a pooled buffer holds.
    const long = ["x".repeat(30_000)];
    expected += csvLine(long);
    writer.add(long);
    await writer.end();
    assert.equal(fs.readFileSync(file, "utf8"), expected);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("the writer waits while every buffer is in flight (backpressure)", async () => {
    const pending: (() => void)[] = [];
    let written = "";
    const slow = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written += chunk.toString("utf8");
        pending.push(callback);
      },
    });
    const writer = new CsvWriter(slow, 10, 2);
    writer.add(["0123456789"]);
    await writer.flush();
    writer.add(["abcdefghij"]);
    await writer.flush();
    writer.add(["third line"]);
    let third = false;
    const flushing = writer.flush().then(() => {
      third = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(third, false, "no buffer is free until the stream has written one");
    pending.shift()?.();
    await flushing;
    assert.equal(third, true);
    while (pending.length > 0) pending.shift()?.();
    const ended = writer.end();
    await new Promise((resolve) => setTimeout(resolve, 5));
    while (pending.length > 0) pending.shift()?.();
    await ended;
    assert.equal(written, "0123456789\r\nabcdefghij\r\nthird line\r\n");
  });

  test("a stream error reaches the writer's caller", async () => {
    const broken = new Writable({
      write(_chunk, _encoding, callback) {
        callback(new Error("disk full"));
      },
    });
    const writer = new CsvWriter(broken, 10, 1);
    writer.add(["0123456789"]);
    await writer.flush();
    writer.add(["0123456789"]);
    await assert.rejects(
      (async () => {
        await writer.flush();
        await writer.end();
      })(),
      /disk full/,
    );
  });
});

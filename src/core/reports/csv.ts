// CSV as RFC 4180 writes it (CRLF line ends; a cell with a comma, quote, CR or LF is quoted, quotes
// doubled), plus OWASP's defence against CSV injection: a text cell starting with = + - @, a tab or
// a CR is prefixed with a single quote, so spreadsheets show it instead of running it as a formula.
// The quote is part of the cell (a consumer that wants the raw value strips one leading quote);
// numbers are never prefixed, so a negative number stays a number. Hand-written rather than
// csv-stringify: the rule is a few lines, and the per-cell cost decides the large reports' speed.
import type { Writable } from "node:stream";

export type Cell = string | number | null;

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: Cell): string {
  if (value === null) return "";
  if (typeof value === "number") return String(value);
  let text = value;
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: readonly Cell[]): string {
  let line = "";
  for (let i = 0; i < cells.length; i++) {
    if (i > 0) line += ",";
    line += csvCell(cells[i]!);
  }
  return `${line}\r\n`;
}

/** A whole (small) table: the header row, then the rows. */
export function csvTable(header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  let text = csvLine(header);
  for (const row of rows) text += csvLine(row);
  return text;
}

/**
 * Writes CSV lines to a stream in chunks, through a few reused buffers: a chunk is encoded into a
 * free buffer and handed to the stream, and the buffer comes back once the stream has written it.
 * When all are in flight, `flush` waits: that is the backpressure, and it keeps memory flat (fresh
 * buffers per chunk would pile up as garbage outside V8's heap faster than it collects them).
 */
export class CsvWriter {
  private text = "";
  private readonly free: Buffer[] = [];
  private waiting: (() => void) | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly out: Writable,
    /** Characters collected before a chunk is written; a buffer holds them even as 3-byte UTF-8. */
    private readonly chunkChars = 64 * 1024,
    buffers = 4,
  ) {
    for (let i = 0; i < buffers; i++) this.free.push(Buffer.allocUnsafe(chunkChars * 3 + 16 * 1024));
    out.on("error", (error) => {
      this.failure = error;
      this.wake();
    });
  }

  /** Appends one line; true when the caller should `await flush()`. */
  add(cells: readonly Cell[]): boolean {
    this.text += csvLine(cells);
    return this.text.length >= this.chunkChars;
  }

  async flush(): Promise<void> {
    if (this.text === "") return;
    while (this.free.length === 0 && !this.failure)
      await new Promise<void>((resolve) => (this.waiting = resolve));
    if (this.failure) throw this.failure;
    const text = this.text;
    this.text = "";
    const buffer = this.free.pop()!;
    if (text.length * 3 > buffer.length && Buffer.byteLength(text) > buffer.length) {
      // An unusually long last line: too big for a pooled buffer, so written from a fresh one.
      this.free.push(buffer);
      this.out.write(text);
      return;
    }
    const bytes = buffer.write(text);
    this.out.write(buffer.subarray(0, bytes), () => {
      this.free.push(buffer);
      this.wake();
    });
  }

  /** Flushes and ends the stream; resolves once everything is written. */
  async end(): Promise<void> {
    await this.flush();
    if (this.failure) throw this.failure;
    await new Promise<void>((resolve, reject) => {
      this.out.once("error", reject);
      this.out.end(() => resolve());
    });
  }

  private wake(): void {
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.();
  }
}

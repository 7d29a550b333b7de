// CSV of devices: export (RFC 4180, with the reports' guard against spreadsheet formulas) and an
// all-or-nothing import. The import reads the file as a stream and writes inside one transaction
// as it goes, so memory stays bounded by a chunk of rows plus one key per MAC seen (duplicates in
// the file are found that way); any refused row rolls everything back, and every refused row is
// reported with its line and reason.
import { csvLine } from "../reports/csv.ts";
import { ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import type { DeviceRow, DevicesRepo, NewDeviceRow } from "./repo.ts";
import { CSV_COLUMNS, MAX_IMPORT_ROWS } from "./rules.ts";
import { checkDevice, type DeviceInput, presentDevice } from "./service.ts";

type Column = (typeof CSV_COLUMNS)[number];

/** One record of a CSV file and the line it starts on (1-based; quoted cells may span lines). */
export interface CsvRecord {
  line: number;
  cells: string[];
}

/**
 * RFC 4180 records from a stream of text: quoted cells (with "" for a quote, and line breaks
 * inside), CRLF or LF line ends, a UTF-8 byte order mark ignored. Blank lines are skipped. A state
 * machine over characters, so a chunk may end anywhere (inside a quote, between "" or CR LF).
 */
export async function* readCsv(source: AsyncIterable<string | Buffer>): AsyncGenerator<CsvRecord> {
  const decoder = new TextDecoder("utf-8");
  // start: before a cell's first character; plain/quoted: inside one; quote: a quote seen in a quoted cell.
  let state: "start" | "plain" | "quoted" | "quote" = "start";
  let cells: string[] = [];
  let cell = "";
  let line = 1;
  let recordLine = 1;
  let first = true;
  const records: CsvRecord[] = [];
  const endRecord = () => {
    cells.push(cell);
    if (cells.length > 1 || cells[0] !== "") records.push({ line: recordLine, cells });
    cells = [];
    cell = "";
    state = "start";
  };
  const step = (c: string) => {
    if (state === "quoted") {
      if (c === '"') state = "quote";
      else {
        if (c === "\n") line++;
        cell += c;
      }
      return;
    }
    if (state === "quote" && c === '"') {
      cell += '"';
      state = "quoted";
      return;
    }
    if (c === ",") {
      cells.push(cell);
      cell = "";
      state = "start";
    } else if (c === "\n") {
      endRecord();
      line++;
      recordLine = line;
    } else if (c === "\r") {
      // CR of CR LF; a lone CR is dropped too.
    } else if (c === '"' && state === "start") {
      state = "quoted";
    } else {
      cell += c;
      state = "plain";
    }
  };
  for await (const chunk of source) {
    let text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    if (first) {
      text = text.replace(/^\uFEFF/, "");
      first = false;
    }
    for (const c of text) step(c);
    yield* records.splice(0);
  }
  if (cell !== "" || cells.length > 0 || state !== "start") endRecord();
  yield* records.splice(0);
}

/** Export's guard against formulas, taken off again (a cell `'=x` was `=x`). */
function unguard(value: string): string {
  return /^'[=+\-@\t\r]/.test(value) ? value.slice(1) : value;
}

export interface ImportProblem {
  line: number;
  message: string;
}

/** Problems reported at most (the count says how many there were). */
const MAX_PROBLEMS = 1000;
const CHUNK_ROWS = 500;

interface PendingRow {
  line: number;
  input: DeviceInput;
  username: string;
  voucher: string;
  group: string;
}

export class ImportRefused extends ValidationError {
  constructor(
    readonly problems: ImportProblem[],
    readonly count: number,
  ) {
    const first = problems[0];
    super(
      `the import was refused (${count} problem${count === 1 ? "" : "s"}; nothing was imported)` +
        (first ? `: line ${first.line}: ${first.message}` : ""),
      problems.map((p) => ({ field: `line ${p.line}`, message: p.message })),
    );
  }
}

/** The header's columns, or problems: unknown names, a repeated name, no `mac`. */
function readHeader(record: CsvRecord | undefined): Column[] {
  if (!record)
    throw new ImportRefused([{ line: 1, message: "the file is empty: a header row is required" }], 1);
  const problems: ImportProblem[] = [];
  const columns = record.cells.map((c) => c.trim().toLowerCase());
  for (const name of columns) {
    if (!(CSV_COLUMNS as readonly string[]).includes(name)) {
      problems.push({
        line: record.line,
        message: `unknown column "${name}" (columns: ${CSV_COLUMNS.join(", ")})`,
      });
    }
  }
  if (new Set(columns).size !== columns.length)
    problems.push({ line: record.line, message: "a column is named twice" });
  if (!columns.includes("mac"))
    problems.push({ line: record.line, message: "the header must name a mac column" });
  if (problems.length > 0) throw new ImportRefused(problems, problems.length);
  return columns as Column[];
}

/** One row's fields as a device input (checked), or the problem. */
function readRow(columns: Column[], record: CsvRecord): PendingRow | string {
  if (record.cells.length !== columns.length) {
    return `has ${record.cells.length} fields; the header has ${columns.length}`;
  }
  const value = (name: Column) => {
    const at = columns.indexOf(name);
    return at < 0 ? "" : unguard(record.cells[at] ?? "").trim();
  };
  const input: DeviceInput = {
    mac: value("mac"),
    name: value("name"),
    description: value("description"),
    status: value("status") || undefined,
    expires: value("expires") || null,
  };
  try {
    const clean = checkDevice(input);
    const row = {
      line: record.line,
      input: clean,
      username: value("username"),
      voucher: value("voucher"),
      group: value("group"),
    };
    if (row.username && row.voucher) return "names both a username and a voucher: a device has one owner";
    return row;
  } catch (error) {
    if (error instanceof ValidationError) return error.message;
    throw error;
  }
}

/**
 * Imports devices from CSV, all or nothing: 201-like count of devices created, or ImportRefused
 * with every refused row (up to MAX_PROBLEMS) and nothing written. `progress` hears of rows read.
 */
export async function importDevices(
  repo: DevicesRepo,
  accountId: number,
  source: AsyncIterable<string | Buffer>,
  progress?: (rows: number) => void,
): Promise<{ created: number }> {
  return repo.transaction(async (trx) => {
    const records = readCsv(source);
    const columns = readHeader((await records.next()).value || undefined);
    const seen = new Map<string, number>();
    const problems: ImportProblem[] = [];
    let count = 0;
    let rows = 0;
    let created = 0;
    let chunk: PendingRow[] = [];
    const problem = (line: number, message: string) => {
      count++;
      if (problems.length < MAX_PROBLEMS) problems.push({ line, message });
    };
    const flush = async () => {
      const ready = await resolveChunk(trx, accountId, chunk, problem);
      chunk = [];
      // After a problem nothing more is written: the transaction is rolled back at the end.
      if (count === 0 && ready.length > 0) created += await insertChunk(trx, accountId, ready);
    };
    for await (const record of records) {
      rows++;
      if (rows > MAX_IMPORT_ROWS) {
        problem(record.line, `more than ${MAX_IMPORT_ROWS} rows: split the file`);
        break;
      }
      if (rows % 1000 === 0) progress?.(rows);
      const row = readRow(columns, record);
      if (typeof row === "string") {
        problem(record.line, row);
        continue;
      }
      const mac = row.input.mac ?? "";
      const earlier = seen.get(mac);
      if (earlier !== undefined) {
        problem(record.line, `MAC ${mac} repeats line ${earlier}`);
        continue;
      }
      seen.set(mac, record.line);
      chunk.push(row);
      if (chunk.length >= CHUNK_ROWS) await flush();
    }
    await flush();
    progress?.(rows);
    if (count > 0)
      throw new ImportRefused(
        problems.sort((a, b) => a.line - b.line),
        count,
      );
    // One audit row for the whole file, not one per device.
    await trx.audit({
      accountId,
      resource: "device_import",
      id: "",
      action: "import",
      after: { rows, created },
    });
    return { created };
  });
}

/** Names to ids and the account's existing MACs for a chunk; rows with a problem are left out. */
async function resolveChunk(
  repo: DevicesRepo,
  accountId: number,
  chunk: PendingRow[],
  problem: (line: number, message: string) => void,
): Promise<PendingRow[]> {
  if (chunk.length === 0) return [];
  const names = (pick: (r: PendingRow) => string) => chunk.map(pick).filter((n) => n !== "");
  const [users, vouchers, groups, existing] = await Promise.all([
    repo.idsByName(
      accountId,
      "users",
      names((r) => r.username),
    ),
    repo.idsByName(
      accountId,
      "vouchers",
      names((r) => r.voucher),
    ),
    repo.idsByName(
      accountId,
      "groups",
      names((r) => r.group),
    ),
    repo.existingMacs(
      accountId,
      chunk.map((r) => r.input.mac ?? ""),
    ),
  ]);
  const ready: PendingRow[] = [];
  for (const row of chunk) {
    const lookup = (map: Map<string, number>, name: string, what: string) => {
      if (name === "") return null;
      const id = map.get(name.toLowerCase());
      if (id === undefined) problem(row.line, `no ${what} "${name}" in this account`);
      return id;
    };
    if (existing.has(row.input.mac ?? "")) {
      problem(row.line, `MAC ${row.input.mac} is already a device of this account`);
      continue;
    }
    const user_id = lookup(users, row.username, "user");
    const voucher_id = lookup(vouchers, row.voucher, "voucher");
    const group_id = lookup(groups, row.group, "group");
    if (user_id === undefined || voucher_id === undefined || group_id === undefined) continue;
    ready.push({ ...row, input: { ...row.input, user_id, voucher_id, group_id } });
  }
  return ready;
}

async function insertChunk(repo: DevicesRepo, accountId: number, ready: PendingRow[]): Promise<number> {
  const now = isoNow();
  const rows: NewDeviceRow[] = ready.map(({ input }) => ({
    account_id: accountId,
    mac: input.mac ?? "",
    name: input.name ?? "",
    description: input.description ?? "",
    status: input.status ?? "enabled",
    kind: "registered",
    user_id: input.user_id ?? null,
    voucher_id: input.voucher_id ?? null,
    group_id: input.group_id ?? null,
    portal_id: null,
    expires: input.expires ?? null,
    last_seen: null,
    last_network_id: null,
    created: now,
    updated: now,
  }));
  const inserted = await repo.insertMany(rows);
  await repo.recordEvents(
    accountId,
    "device.created",
    inserted.map((row) => ({ ...presentDevice(row) })),
  );
  return inserted.length;
}

/** The account's devices as CSV (header first), page by page: for a download or a file. */
export async function* exportDevices(repo: DevicesRepo, accountId: number): AsyncGenerator<string> {
  yield csvLine(CSV_COLUMNS);
  let after = 0;
  for (;;) {
    const page: DeviceRow[] = await repo.after(accountId, after, 1000);
    if (page.length === 0) return;
    const ids = (pick: (r: DeviceRow) => number | null) =>
      page.map(pick).filter((id): id is number => id !== null);
    const [users, vouchers, groups] = await Promise.all([
      repo.namesById(
        accountId,
        "users",
        ids((r) => r.user_id),
      ),
      repo.namesById(
        accountId,
        "vouchers",
        ids((r) => r.voucher_id),
      ),
      repo.namesById(
        accountId,
        "groups",
        ids((r) => r.group_id),
      ),
    ]);
    let text = "";
    for (const row of page) {
      text += csvLine([
        row.mac,
        row.name,
        row.description,
        row.status,
        row.user_id === null ? "" : (users.get(row.user_id) ?? ""),
        row.voucher_id === null ? "" : (vouchers.get(row.voucher_id) ?? ""),
        row.group_id === null ? "" : (groups.get(row.group_id) ?? ""),
        row.expires ?? "",
      ]);
    }
    yield text;
    after = page[page.length - 1]!.id;
  }
}

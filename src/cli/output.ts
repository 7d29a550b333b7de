// How commands print: tables for people, JSON for scripts (--json), and secrets read from standard
// input (--password-stdin, --secret-stdin) so they stay out of `ps` and shell history.
import type { Command } from "commander";
import { ValidationError } from "../core/shared/errors.ts";

type Cell = string | number | null | undefined;

/** Prints rows as aligned columns, the header first; "-" for empty cells. */
export function printTable(headers: string[], rows: Cell[][]): void {
  const cells = [
    headers,
    ...rows.map((row) =>
      row.map((cell) => (cell === null || cell === undefined || cell === "" ? "-" : String(cell))),
    ),
  ];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? "").length)));
  for (const row of cells) {
    console.log(
      row
        .map((cell, i) => (cell ?? "").padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    );
  }
}

/** Adds --json to a list command. */
export function jsonOption(command: Command): Command {
  return command.option("--json", "print a JSON array of objects instead of a table");
}

/** A list command's output: the listed objects as JSON with --json, else a table of chosen cells. */
export function printList<T>(
  json: boolean | undefined,
  rows: T[],
  headers: string[],
  cells: (row: T) => Cell[],
) {
  if (json) console.log(JSON.stringify(rows, null, 2));
  else printTable(headers, rows.map(cells));
}

/** Standard input whole, without the one line ending a pipe or heredoc adds (like docker --password-stdin). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

/**
 * A secret given as an option value or, with its --...-stdin flag, on standard input; undefined when
 * neither was given. `option` names the value option, e.g. "--password".
 */
export async function secretOption(
  value: string | undefined,
  fromStdin: boolean | undefined,
  option: string,
): Promise<string | undefined> {
  if (!fromStdin) return value;
  if (value !== undefined) throw new ValidationError(`give ${option} or ${option}-stdin, not both`);
  const secret = await readStdin();
  if (secret === "") throw new ValidationError(`${option}-stdin: standard input was empty`);
  return secret;
}

/** Prints rows as aligned columns, the header first; "-" for empty cells. */
export function printTable(headers: string[], rows: (string | number | null | undefined)[][]): void {
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

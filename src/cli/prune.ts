// `wisp prune [--dry-run]`: one retention run now (the worker runs the same every hour), with its
// progress on stderr and what went, table by table, on stdout.
import type { Command } from "commander";
import type { WithCore } from "./program.ts";

export function registerPruneCommand(program: Command, withCore: WithCore): void {
  program
    .command("prune")
    .description("delete what is older than the RETENTION_*_DAYS periods now (the worker does it hourly)")
    .option("--dry-run", "count what would be deleted, delete nothing")
    .action(async (options: { dryRun?: boolean }) => {
      const dryRun = options.dryRun === true;
      const outcomes = await withCore((core) =>
        core.retention.prune({
          dryRun,
          onProgress: (p) => {
            if (!p.done) console.error(`wisp: ${p.table}: ${p.rows} rows in ${p.batches} batches`);
          },
        }),
      );
      for (const o of outcomes) {
        const kept = o.days === 0 ? "kept for ever" : `older than ${o.days} day${o.days === 1 ? "" : "s"}`;
        const partitions =
          o.partitions.length > 0
            ? ` and ${o.partitions.length} partitions (${o.partitions.join(", ")})`
            : "";
        console.log(`${o.table}: ${dryRun ? "would prune" : "pruned"} ${o.rows} rows${partitions} (${kept})`);
      }
    });
}

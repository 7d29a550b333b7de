// `wisp backup <file>`: a copy of the SQLite database taken while the server runs. PostgreSQL has
// its own tools for that (pg_dump), so there the command says so and copies nothing.
import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { KEY_FILE } from "../core/webhooks/crypto.ts";
import { backupSqlite } from "../db/backup.ts";
import { databaseLocation } from "../db/database.ts";

export function registerBackupCommand(program: Command): void {
  program
    .command("backup <file>")
    .description("copy the SQLite database to <file> while Wisp runs (PostgreSQL: use pg_dump)")
    .action(async (file: string) => {
      const config = loadConfig();
      if (config.databaseUrl) {
        console.error(
          `wisp: backup copies a SQLite database; ${databaseLocation(config)} is PostgreSQL: ` +
            'use pg_dump (pg_dump --format=custom --file=wisp.dump "$DATABASE_URL")',
        );
        process.exitCode = 1;
        return;
      }
      const started = performance.now();
      const result = await backupSqlite(databaseLocation(config), file);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.error(
        `wisp: backed up ${result.source} to ${result.target} (${(result.bytes / 1048576).toFixed(1)} MiB in ${seconds} s)`,
      );
      if (!config.webhookSecretKey) {
        // Webhook and captive-portal UAM secrets are sealed with this key: without it a restored
        // database cannot sign webhooks or hand guests back to their gateway.
        console.error(
          `wisp: keep ${KEY_FILE} from the same DATA_DIR with it (it decrypts the stored secrets)`,
        );
      }
    });
}

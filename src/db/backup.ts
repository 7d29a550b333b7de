// A consistent copy of the SQLite database while Wisp keeps running: SQLite's online backup API
// (https://www.sqlite.org/backup.html, through better-sqlite3's db.backup()), which copies the
// pages in steps and starts over if another connection writes meanwhile, so the copy is one
// committed state. It is written under a temporary name beside the target and renamed over it
// only once complete: an interrupted backup never leaves a partial file under the target's name.
import fs from "node:fs";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { AppError } from "../core/shared/errors.ts";

export interface BackupResult {
  source: string;
  target: string;
  bytes: number;
  pages: number;
}

/** The temporary name a backup is written under until it is complete. */
export function partialName(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.partial-${process.pid}`);
}

/** Copies the SQLite database `source` to `target` (replacing it atomically if it exists). */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  if (!fs.existsSync(source)) throw new AppError(404, `there is no database at ${source}`);
  const absolute = path.resolve(target);
  if (absolute === path.resolve(source))
    throw new AppError(400, "the backup cannot replace the database itself");
  if (fs.statSync(absolute, { throwIfNoEntry: false })?.isDirectory()) {
    throw new AppError(
      400,
      `${target} is a folder: name the backup file (e.g. ${path.join(target, "wisp.db")})`,
    );
  }
  if (!fs.existsSync(path.dirname(absolute)))
    throw new AppError(400, `the folder ${path.dirname(target)} does not exist`);
  const partial = partialName(absolute);
  // A signal mid-way removes the partial copy; kill -9 cannot be caught and leaves it under its
  // temporary name (a dot file naming the process), never under the target's.
  const onSignal = (signal: NodeJS.Signals) => {
    fs.rmSync(partial, { force: true });
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // Read-only, so that a backup never creates, migrates or locks the database for writing.
  const database = new SqliteDatabase(source, { readonly: true, fileMustExist: true });
  try {
    // Made empty first, owner-only: the copy holds what the database holds (passwords that RADIUS
    // checks in clear among them), and SQLite would create it with the umask's mode.
    fs.writeFileSync(partial, "", { mode: 0o600 });
    const { totalPages } = await database.backup(partial);
    const file = fs.openSync(partial, "r");
    try {
      fs.fsyncSync(file);
    } finally {
      fs.closeSync(file);
    }
    fs.renameSync(partial, absolute);
    // The rename itself survives a power cut once the folder is synced.
    const folder = fs.openSync(path.dirname(absolute), "r");
    try {
      fs.fsyncSync(folder);
    } finally {
      fs.closeSync(folder);
    }
    return { source, target: absolute, bytes: fs.statSync(absolute).size, pages: totalPages };
  } catch (error) {
    fs.rmSync(partial, { force: true });
    if (error instanceof AppError) throw error;
    throw new AppError(500, `the backup failed: ${(error as Error).message}`);
  } finally {
    database.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

// Files Wisp ships beside its code and reads at run time: the console's templates and static files,
// the portal's static files, Wisp's RADIUS dictionary. Each module finds its files from its own
// import.meta, so they are in src/ under tsx and in dist/ once built (scripts/build.mjs copies
// every file of src/ that is not TypeScript to the same place in dist/ and gives each module the
// import.meta of its compiled place). One that cannot be read means an incomplete installation:
// the process refuses to start with one line naming the file, rather than failing requests later.
import fs from "node:fs";

/** A file Wisp ships cannot be read. Its message is the whole story, for one line on stderr. */
export class ShippedFileError extends Error {}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === "ENOENT") return "it is missing";
  if (code === "EACCES") return "permission denied";
  return ((error as Error)?.message ?? String(error)).split("\n")[0] ?? "";
}

/** `what` names the file for an operator, e.g. "the console template". */
export function shippedFileError(what: string, file: string, error: unknown): ShippedFileError {
  return new ShippedFileError(
    `cannot read ${what} ${file}: ${reason(error)}; the installation is incomplete (run npm run build, or reinstall)`,
  );
}

export function readShippedFile(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw shippedFileError(what, file, error);
  }
}

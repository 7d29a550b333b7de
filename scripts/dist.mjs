// Where the compiled build lives and whether it is current: shared by the build, `npm start` and
// bin/wisp.mjs. Plain JavaScript, so it runs before (and without) any TypeScript tooling.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const DIST = path.join(ROOT, "dist");
/** Written last by the build: its time is the build's, and its absence means no complete build. */
export const STAMP = path.join(DIST, ".build-stamp");
/** What the build reads besides src/: a change to any of them makes dist stale. */
export const INPUTS = ["package.json", "package-lock.json", "scripts/build.mjs", "scripts/native.mjs"];

/** The newest modification time under src/ (files and folders: a deleted file changes its folder's). */
function newestSourceTime() {
  const src = path.join(ROOT, "src");
  let newest = fs.statSync(src).mtimeMs;
  for (const entry of fs.readdirSync(src, { recursive: true })) {
    newest = Math.max(newest, fs.statSync(path.join(src, String(entry))).mtimeMs);
  }
  for (const file of INPUTS) {
    const stat = fs.statSync(path.join(ROOT, file), { throwIfNoEntry: false });
    if (stat) newest = Math.max(newest, stat.mtimeMs);
  }
  return newest;
}

/**
 * "current": dist is complete and not older than the sources (or there are no sources, as in a
 * production image that ships dist alone); "stale": built, but a source changed since;
 * "missing": no complete build.
 */
/** @returns {"current" | "stale" | "missing"} */
export function distState() {
  const stamp = fs.statSync(STAMP, { throwIfNoEntry: false });
  if (!stamp) return "missing";
  if (!fs.existsSync(path.join(ROOT, "src"))) return "current";
  return newestSourceTime() <= stamp.mtimeMs ? "current" : "stale";
}

// A build of this checkout, as `npm run build` makes it, in a copy of its own: never in the
// checkout's dist/, which other suites' `wisp` (bin/wisp.mjs) may be running from while the build
// swaps it. The copy shares the checkout's node_modules, as an installation has its own.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./processes.ts";

/** What a checkout's build reads: the sources, the build scripts, the package's files. */
const BUILD_INPUTS = ["package.json", "package-lock.json", ".npmrc", "scripts", "bin", "src"];

const BUILD_TIMEOUT_MS = 180_000;

export interface BuiltCopy {
  /** The copy's root: dist/, bin/, scripts/, package.json and node_modules, and src/ unless removed. */
  dir: string;
  remove(): void;
}

/**
 * Copies the checkout, runs `npm run build` there and, with `withoutSources`, then removes src/
 * (as the production image ships dist/ alone), so that nothing the built code reads can come from
 * the sources. Rejects with the build's output when it fails.
 */
export async function buildCopy(
  label: string,
  options: { withoutSources?: boolean } = {},
): Promise<BuiltCopy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `wisp-${label}-`));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    for (const entry of BUILD_INPUTS) {
      fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
    }
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
    await npmRunBuild(dir);
    if (options.withoutSources) fs.rmSync(path.join(dir, "src"), { recursive: true });
    return { dir, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

function npmRunBuild(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "-s", "build"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), BUILD_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`npm run build ended with ${code ?? signal}:\n${output}`));
    });
  });
}

// The build installed as the production image holds it: dist/, bin/, scripts/dist.mjs,
// package.json and node_modules, no sources, in a folder of its own. The build is the checkout's
// dist/ when it is current (`npm test` builds it once before the suites); otherwise (a test file
// run by hand after an edit) `npm run build` runs in a copy of the checkout, never in the
// checkout itself, whose dist/ other suites may be running from while a build would swap it.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DIST, distState } from "../../scripts/dist.mjs";
import { ROOT } from "./processes.ts";

/** What a checkout's build reads: the sources, the build scripts, the package's files. */
const BUILD_INPUTS = ["package.json", "package-lock.json", ".npmrc", "scripts", "bin", "src"];
/** What the Dockerfile's final stage copies besides node_modules and dist/. */
const INSTALLED = ["package.json", "package-lock.json", "bin", "scripts/dist.mjs"];

const BUILD_TIMEOUT_MS = 180_000;

export interface InstalledBuild {
  /** Its root, where `node dist/main.js` and `node bin/wisp.mjs` run. */
  dir: string;
  /** Whether `npm run build` ran for it (false: the checkout's current dist/ was taken). */
  built: boolean;
  remove(): void;
}

export async function installedBuild(label: string): Promise<InstalledBuild> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `wisp-${label}-`));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  let scratch: string | undefined;
  try {
    const current = distState() === "current";
    if (!current) scratch = await buildInCopy(`${label}-build`);
    fs.cpSync(scratch ? path.join(scratch, "dist") : DIST, path.join(dir, "dist"), { recursive: true });
    for (const entry of INSTALLED) {
      fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
    }
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
    return { dir, built: !current, remove };
  } catch (error) {
    remove();
    throw error;
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Copies the checkout's build inputs to a new folder and runs `npm run build` there; returns the folder. */
async function buildInCopy(label: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `wisp-${label}-`));
  try {
    for (const entry of BUILD_INPUTS) {
      fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
    }
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
    await npmRunBuild(dir);
    return dir;
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
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

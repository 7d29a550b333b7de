#!/usr/bin/env node
// `npm test`'s last step: node's test runner over the built suites (.test-build/, from
// scripts/build-tests.mjs), three files at a time, each a process of its own. Plain JavaScript, so
// that it runs on every node the project supports (20, 22, 24) with the options each accepts:
// - `--interrupt-budget=1048576` (16x V8's default) makes V8 optimize a test process's functions
//   later: short-lived test processes spent more CPU optimizing than it saved (docs/benchmarks.md).
//   Newer V8s (node 24) no longer have the flag; there it is left out.
// - The TAP reporter whenever the output is not a terminal, as node 20 does by default and node 23+
//   no longer does: CI reads its summary lines (`# tests`, `# pass`, `# fail`).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./dist.mjs";

const BUDGET = "--interrupt-budget=1048576";

/** Whether this node accepts a V8 option (an unknown one makes node exit with "bad option"). */
function accepts(option) {
  return spawnSync(process.execPath, [option, "-e", "0"], { stdio: "ignore" }).status === 0;
}

/** .test-build/<suite>/<name>.test.js, in the order the shell's .test-build/*\/*.test.js gave. */
function suiteFiles() {
  const root = path.join(ROOT, ".test-build");
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((dir) =>
      fs
        .readdirSync(path.join(root, dir.name))
        .filter((name) => name.endsWith(".test.js"))
        .map((name) => path.join(".test-build", dir.name, name)),
    )
    .sort();
}

const options = [
  "--enable-source-maps",
  ...(accepts(BUDGET) ? [BUDGET] : []),
  "--test",
  "--test-concurrency=3",
  ...(process.stdout.isTTY ? [] : ["--test-reporter=tap"]),
];
const run = spawnSync(process.execPath, [...options, ...suiteFiles()], {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, WISP_TEST_SCRYPT_LOG2N: "10" },
});
process.exit(run.status ?? 1);

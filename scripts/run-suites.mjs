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
import { ROOT } from "./dist.mjs";
import { suiteFiles } from "./suites.mjs";

const BUDGET = "--interrupt-budget=1048576";

/** Whether this node accepts a V8 option (an unknown one makes node exit with "bad option"). */
function accepts(option) {
  return spawnSync(process.execPath, [option, "-e", "0"], { stdio: "ignore" }).status === 0;
}

const options = [
  "--enable-source-maps",
  ...(accepts(BUDGET) ? [BUDGET] : []),
  "--test",
  "--test-concurrency=3",
  ...(process.stdout.isTTY ? [] : ["--test-reporter=tap"]),
];
const run = spawnSync(process.execPath, [...options, ...suiteFiles(".test-build", ".test.js")], {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, WISP_TEST_SCRYPT_LOG2N: "10" },
});
process.exit(run.status ?? 1);

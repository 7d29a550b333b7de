#!/usr/bin/env node
// The `wisp` command: the compiled CLI (dist/, from `npm run build`) when it is current, otherwise
// the TypeScript sources through tsx, so a command run in a checkout always runs what src/ says.
import { DIST, distState } from "../scripts/dist.mjs";

const state = distState();
if (state === "current") {
  await import(`${DIST}/cli.js`);
} else {
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch {
    // A production install (no development packages) with sources newer than its build.
    console.error(
      `wisp: dist/ is ${state === "missing" ? "missing" : "older than src/"} and tsx is not installed: run npm run build`,
    );
    process.exit(1);
  }
  register();
  await import("../src/cli/main.ts");
}

#!/usr/bin/env node
// The `wisp` command: the compiled CLI (dist/, from `npm run build`) when it is current, otherwise
// the TypeScript sources through tsx, so a command run in a checkout always runs what src/ says.
import { DIST, distState } from "../scripts/dist.mjs";

if (distState() === "current") {
  await import(`${DIST}/cli.js`);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}

#!/usr/bin/env node
// `npm start`: the compiled server, built first when dist/ is missing or older than src/ (so a
// fresh clone's `npm ci && npm start` works). Without TypeScript installed (a production install
// without development dependencies) an existing dist/ is run as it is.
import { build } from "./build.mjs";
import { DIST, distState } from "./dist.mjs";

const state = distState();
if (state !== "current") {
  try {
    await build();
  } catch (error) {
    if (state === "missing") {
      console.error(`wisp: ${error.message}`);
      process.exit(1);
    }
    console.error(
      `wisp: dist/ is older than src/ and ${error.message.replace(/^cannot build: /, "")}; running it anyway`,
    );
  }
}
await import(`${DIST}/main.js`);

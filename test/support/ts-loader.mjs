// `node --import ./test/support/ts-loader.mjs --test test/<suite>/<file>.test.ts`: runs one suite
// (or a few) from its TypeScript, with less work per process than `--import tsx` (0.45 s of CPU less
// to import test/support/server.ts). `npm test` runs the whole suite from one esbuild build
// instead (scripts/build-tests.mjs), and spawned servers and CLIs run from src/ through this loader
// only when dist/ is not current (test/support/processes.ts). Only the compiling differs: Node
// resolves every import itself (the project writes every relative import with its .ts extension),
// and tsc still type-checks everything in npm test.
import { register } from "node:module";

// Stack traces point at the .ts lines (the compiled code carries an inline source map), as with tsx.
process.setSourceMapsEnabled(true);
register("./ts-hooks.mjs", import.meta.url);

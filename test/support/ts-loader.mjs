// `node --import ./test/support/ts-loader.mjs --test ...` (npm test): runs the suites' TypeScript
// with less work per test process than `--import tsx`. Each of the ~200 test files is a process of
// its own that loads ~1,000 modules; tsx's hooks cost about 0.45 s of CPU more per process than
// these (2.1 s against 1.6 s to import test/support/server.ts, measured side by side), about 90 s
// of CPU per run. Only the compiling differs: Node resolves every import itself (the project writes
// every relative import with its .ts extension), and tsc still type-checks everything in npm test.
// `node --import tsx --test <file>` keeps working for a single file.
import { register } from "node:module";

// Stack traces point at the .ts lines (the compiled code carries an inline source map), as with tsx.
process.setSourceMapsEnabled(true);
register("./ts-hooks.mjs", import.meta.url);

#!/usr/bin/env node
// `npm test` runs the suites from one esbuild build of every test file (.test-build/), not through a
// TypeScript loader. Each of the ~180 test files is a process of its own. Through the loader's hooks
// (which run on a thread of their own) a process spent about 4 s of CPU on a 2-core CI machine
// before its first test, importing the ~1,000 modules of src/, test/support and the ES module
// packages one by one; from the build, 0.7-0.9 s: the test files share chunks of the code they have
// in common, and a process loads a few large files. Type-checking stays with tsc in npm test; one
// file still runs from its source with
// `node --import ./test/support/ts-loader.mjs --test test/<suite>/<file>.test.ts`.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { BANNER, EXTERNAL, importMetaPlugin } from "./build.mjs";
import { ROOT } from "./dist.mjs";
import { suiteFiles } from "./suites.mjs";

const TEST_BUILD = path.join(ROOT, ".test-build");

/**
 * The compiled code keeps its source file's `import.meta`: fixtures, scripts and the server's own
 * files (templates, static files, dictionaries) are found where they are in the checkout.
 */
const sourcePlaces = importMetaPlugin(
  ["src", "test", "scripts"].map((folder) => path.join(ROOT, folder)),
  (file) => ({
    url: JSON.stringify(pathToFileURL(file).href),
    filename: JSON.stringify(file),
    dirname: JSON.stringify(path.dirname(file)),
  }),
);

/**
 * Left to node_modules besides the server's build's (EXTERNAL): packages whose ES module entry only
 * wraps CommonJS code that finds files beside itself (playwright-core) or that src/ also loads at
 * run time with createRequire (pg: its type parsers are set on that one copy), and libpg-query,
 * which reads its WebAssembly beside itself.
 */
const TEST_EXTERNAL = ["pg", "playwright-core", "libpg-query"];

/**
 * ES module packages are bundled (kysely alone is hundreds of files, each a module to resolve, read,
 * parse and link in every test process); CommonJS packages stay in node_modules and load through
 * require as they do for the source, with node's own interop for their named exports (esbuild's
 * differs for some: ioredis's `Redis`). The import names the file esbuild resolved, so a nested
 * node_modules copy is still the one loaded.
 */
const commonJsFromNodeModules = {
  name: "commonjs-from-node-modules",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === "resolving" || args.path.startsWith("node:")) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: "resolving",
      });
      if (resolved.errors.length > 0 || resolved.external || isModule(resolved.path)) return undefined;
      return { path: resolved.path, external: true };
    });
  },
};

/** @type {Map<string, boolean>} */
const moduleFolders = new Map();

/** Whether node loads `file` as an ES module: .mjs, or .js under a package.json with type "module". */
function isModule(file) {
  if (file.endsWith(".mjs")) return true;
  if (!file.endsWith(".js")) return false;
  return packageTypeIsModule(path.dirname(file));
}

function packageTypeIsModule(folder) {
  let answer = moduleFolders.get(folder);
  if (answer !== undefined) return answer;
  const manifest = path.join(folder, "package.json");
  if (fs.existsSync(manifest)) answer = JSON.parse(fs.readFileSync(manifest, "utf8")).type === "module";
  else answer = path.dirname(folder) !== folder && packageTypeIsModule(path.dirname(folder));
  moduleFolders.set(folder, answer);
  return answer;
}

async function buildTests() {
  const started = performance.now();
  fs.rmSync(TEST_BUILD, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: suiteFiles("test", ".test.ts"),
    outbase: "test",
    outdir: TEST_BUILD,
    entryNames: "[dir]/[name]",
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: [...EXTERNAL, ...TEST_EXTERNAL],
    // CommonJS files inside the bundled packages still call require() for node's own modules.
    banner: { js: BANNER },
    plugins: [sourcePlaces, commonJsFromNodeModules],
    sourcemap: "linked",
    // The maps point at the files in the checkout; their text need not be copied into them.
    sourcesContent: false,
    logLevel: "warning",
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.error(`wisp: built the test suites into .test-build/ in ${seconds} s`);
}

buildTests().catch((error) => {
  console.error(`wisp: cannot build the tests: ${error.message}`);
  process.exit(1);
});

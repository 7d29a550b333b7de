#!/usr/bin/env node
// `npm run build`: bundles the server (dist/main.js) and the CLI (dist/cli.js) with esbuild, with
// their dependencies and shared code split into chunks beside them, and copies the files the code
// reads at run time (every file of src/ that is not TypeScript). One bundle loads in a fraction of
// the time of ~1,000 separate modules (see bench/startup.ts). Type-checking stays with `npm test`
// (tsc --noEmit). The new build is made in a folder of its own and swapped in whole, so a server
// starting meanwhile never sees half of one.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { DIST, ROOT, STAMP } from "./dist.mjs";
import { buildNativeAddon } from "./native.mjs";

/**
 * Left out of the bundle, loaded from node_modules at run time: a native addon, packages that
 * read files of their own beside their code, and pg's optional native binding.
 */
export const EXTERNAL = [
  "better-sqlite3",
  "@fastify/swagger",
  "@fastify/swagger-ui",
  "node-radius-utils",
  "pg-native",
];

/**
 * Bundled CommonJS dependencies call require() and read __dirname; an ES module has neither.
 * (ioredis uses __dirname to trim stack traces.)
 */
export const BANNER = [
  'import { createRequire as __wispCreateRequire } from "node:module";',
  'import { fileURLToPath as __wispFileURLToPath } from "node:url";',
  "const require = __wispCreateRequire(import.meta.url);",
  "const __filename = __wispFileURLToPath(import.meta.url);",
  'const __dirname = __wispFileURLToPath(new URL(".", import.meta.url));',
].join("\n");

/**
 * Every output file lands in dist/ itself, where `import.meta` is the bundle's, not the source
 * file's. Each source file's `import.meta.url` (and `.dirname`, `.filename`) becomes that of the
 * place its compiled file would have (src/portal/plugin.ts -> dist/portal/plugin.js), so the paths
 * the code builds from it (`./static`, `../package.json`, node_modules) resolve as they do from
 * src/, where copySourceFiles puts the files. (__wispFileURLToPath comes from the BANNER.)
 */
const sourceFileUrls = importMetaPlugin([path.join(ROOT, "src")], (file) => {
  const compiled = path.relative(path.join(ROOT, "src"), file).replace(/\.ts$/, ".js");
  const url = `new URL(${JSON.stringify(`./${compiled.split(path.sep).join("/")}`)}, import.meta.url)`;
  return {
    url: `${url}.href`,
    filename: `__wispFileURLToPath(${url})`,
    dirname: `__wispFileURLToPath(new URL(".", ${url}))`,
  };
});

/**
 * An esbuild plugin that rewrites `import.meta.url`, `.filename` and `.dirname` in the files under
 * `folders` to the expressions `replacementsFor(file)` gives: in a bundle, `import.meta` is the
 * output file's, and code that finds files beside itself needs its source file's place.
 * @param {string[]} folders
 * @param {(file: string) => { url: string, filename: string, dirname: string }} replacementsFor
 */
export function importMetaPlugin(folders, replacementsFor) {
  return {
    name: "import-meta-of-source",
    setup(build) {
      build.onLoad({ filter: /\.(ts|mjs)$/ }, async (args) => {
        if (!folders.some((folder) => args.path.startsWith(folder + path.sep))) return undefined;
        const loader = args.path.endsWith(".ts") ? "ts" : "js";
        const text = await fs.promises.readFile(args.path, "utf8");
        if (!text.includes("import.meta.")) return { contents: text, loader };
        const replacements = replacementsFor(args.path);
        const contents = text.replace(
          /\bimport\.meta\.(url|filename|dirname)\b/g,
          (_, key) => replacements[key],
        );
        return { contents, loader };
      });
    },
  };
}

/**
 * Copies every file of src/ that is not TypeScript (templates, static files, dictionaries) to the
 * same place under `target`: whatever the code reads beside itself is in the build, with no list
 * to keep.
 */
function copySourceFiles(target) {
  const src = path.join(ROOT, "src");
  for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
    // Not TypeScript, nor the native addon's C source (scripts/native.mjs builds it beside itself).
    if (!entry.isFile() || /\.(ts|c)$/.test(entry.name)) continue;
    const from = path.join(entry.parentPath ?? entry.path, entry.name);
    const to = path.join(target, path.relative(src, from));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
  }
}

/**
 * V8 keeps each script's source in memory, one byte a character when every character fits in one
 * (Latin-1), else two: one dash or curly quote in a comment doubled a 1.5 MB chunk's footprint.
 * esbuild writes code as ASCII (charset "ascii", its default: strings, regular expressions and names
 * escaped) but copies the comments it keeps as they are; their other characters become \uXXXX
 * escapes, which also mean the same character wherever else one could stand.
 */
function asciiOutput(dir) {
  for (const name of fs.readdirSync(dir, { recursive: true })) {
    if (!name.endsWith(".js")) continue;
    const file = path.join(dir, name);
    const text = fs.readFileSync(file, "utf8");
    if (!/[\u0080-\uffff]/.test(text)) continue;
    const escaped = text.replace(
      /[\u0080-\uffff]/g,
      (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
    fs.writeFileSync(file, escaped);
  }
}

/** Builds dist/; throws with a one-line reason when it cannot. */
export async function build() {
  let esbuild;
  try {
    esbuild = await import(pathToFileURL(createRequire(import.meta.url).resolve("esbuild")).href);
  } catch {
    throw new Error(
      "cannot build: esbuild is not installed (run `npm ci`, development dependencies included)",
    );
  }
  const started = performance.now();
  buildNativeAddon();
  const next = path.join(ROOT, `dist.building-${process.pid}`);
  fs.rmSync(next, { recursive: true, force: true });
  try {
    await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: [
        { in: "src/main.ts", out: "main" },
        { in: "src/cli/main.ts", out: "cli" },
        // The EAP TLS pool's worker threads load it (src/radius/eap/tls-pool.ts).
        { in: "src/radius/eap/tls-worker.ts", out: "radius/eap/tls-worker" },
        // The directories' worker thread loads it (src/core/directories/worker-client.ts).
        { in: "src/core/directories/ldap-worker.ts", out: "core/directories/ldap-worker" },
      ],
      outdir: next,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      external: EXTERNAL,
      banner: { js: BANNER },
      plugins: [sourceFileUrls],
      logLevel: "warning",
    });
    asciiOutput(next);
    copySourceFiles(next);
    fs.writeFileSync(path.join(next, path.basename(STAMP)), `${new Date().toISOString()}\n`);
    const old = path.join(ROOT, `dist.old-${process.pid}`);
    if (fs.existsSync(DIST)) fs.renameSync(DIST, old);
    fs.renameSync(next, DIST);
    fs.rmSync(old, { recursive: true, force: true });
  } catch (error) {
    throw new Error(`cannot build: ${error.message.split("\n")[0]}`);
  } finally {
    fs.rmSync(next, { recursive: true, force: true });
  }
  console.error(`wisp: built dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, "scripts", "build.mjs")) {
  build().catch((error) => {
    console.error(`wisp: ${error.message}`);
    process.exit(1);
  });
}

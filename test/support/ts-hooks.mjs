// The module hooks of ts-loader.mjs: a .ts file is compiled by esbuild (as tsx and the build do,
// with the options of tsconfig.json) and the result kept in a cache on disk, keyed by the file, its
// text and the options: the ~200 test processes of a run compile each file once between them.
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const { compilerOptions } = JSON.parse(fs.readFileSync(path.join(ROOT, "tsconfig.json"), "utf8"));
const ESBUILD_VERSION = JSON.parse(
  fs.readFileSync(path.join(ROOT, "node_modules/esbuild/package.json"), "utf8"),
).version;
const OPTIONS = {
  loader: "ts",
  format: "esm",
  target: `node${process.versions.node}`,
  sourcemap: "inline",
  tsconfigRaw: { compilerOptions },
};
const CACHE = path.join(os.tmpdir(), `wisp-ts-cache-${process.getuid?.() ?? "user"}`);
/** Entries unused (unwritten) this long go, when a process first has to compile something. */
const CACHE_DAYS = 7;
const OPTIONS_KEY = JSON.stringify([ESBUILD_VERSION, OPTIONS]);

/** @type {Promise<typeof import("esbuild")> | undefined} */
let esbuild;
let pruned = false;

/** @type {import("node:module").LoadHook} */
export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const source = fs.readFileSync(file, "utf8");
  const key = createHash("sha256").update(OPTIONS_KEY).update(file).update("\0").update(source).digest("hex");
  const cached = path.join(CACHE, key);
  let code;
  try {
    code = fs.readFileSync(cached, "utf8");
  } catch {
    code = await compile(file, source);
    store(cached, code);
  }
  return { format: "module", source: code, shortCircuit: true };
}

async function compile(file, source) {
  esbuild ??= import("esbuild");
  const { code } = await (await esbuild).transform(source, { ...OPTIONS, sourcefile: file });
  return code;
}

/** Written beside and renamed into place: a process reading it never sees half a file. */
function store(cached, code) {
  try {
    fs.mkdirSync(CACHE, { recursive: true });
    if (!pruned) prune();
    // Per thread too: a process with worker threads has a hooks thread for each.
    const partial = `${cached}.${process.pid}.${randomBytes(4).toString("hex")}`;
    fs.writeFileSync(partial, code);
    fs.renameSync(partial, cached);
  } catch {
    // A cache that cannot be written only costs the next process a compile.
  }
}

function prune() {
  pruned = true;
  const before = Date.now() - CACHE_DAYS * 86_400_000;
  for (const name of fs.readdirSync(CACHE)) {
    const entry = path.join(CACHE, name);
    const stat = fs.statSync(entry, { throwIfNoEntry: false });
    if (stat && stat.mtimeMs < before) fs.rmSync(entry, { force: true });
  }
}

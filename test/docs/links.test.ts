// Every relative link in the repository's Markdown (README.md, docs/, deploy/) points at a file
// that exists, and every #anchor at a heading of that file, slugged as GitHub slugs headings.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import GithubSlugger from "github-slugger";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".git", "data"]);

function markdownFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name) || entry.name.startsWith("dist.")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(full));
    else if (entry.name.endsWith(".md")) found.push(full);
  }
  return found;
}

/** The file's lines outside fenced code blocks. */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) lines.push(line);
  }
  return lines;
}

/** The anchors GitHub makes for the file's headings (duplicates get -1, -2...). */
function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const line of proseLines(fs.readFileSync(file, "utf8"))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) anchors.add(slugger.slug((heading[1] ?? "").replace(/`/g, "")));
  }
  return anchors;
}

/** Relative link targets of a file: `[text](target)`, without external schemes. */
function relativeLinks(file: string): string[] {
  const links: string[] = [];
  for (const line of proseLines(fs.readFileSync(file, "utf8"))) {
    // Inline code is blanked first: a link written inside backticks is an example, not a link.
    for (const match of line.replace(/`[^`]*`/g, "``").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] ?? "";
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  }
  return links;
}

/** Why a link is broken, or null when it resolves. */
function brokenReason(from: string, link: string, anchors: Map<string, Set<string>>): string | null {
  const [target = "", anchor] = link.split("#", 2);
  const file = target === "" ? from : path.resolve(path.dirname(from), decodeURI(target));
  if (!fs.existsSync(file)) return "no such file";
  if (anchor === undefined || !file.endsWith(".md")) return null;
  if (!anchors.has(file)) anchors.set(file, anchorsOf(file));
  return anchors.get(file)?.has(anchor) ? null : `no heading #${anchor}`;
}

test("every relative link and anchor in the Markdown resolves", () => {
  const files = markdownFiles(ROOT);
  assert.ok(files.includes(path.join(ROOT, "README.md")), "README.md is checked");
  assert.ok(
    files.some((file) => file.startsWith(path.join(ROOT, "docs"))),
    "docs/ is checked",
  );
  const anchors = new Map<string, Set<string>>();
  const broken: string[] = [];
  let checked = 0;
  for (const file of files) {
    for (const link of relativeLinks(file)) {
      checked++;
      const reason = brokenReason(file, link, anchors);
      if (reason) broken.push(`${path.relative(ROOT, file)}: (${link}) ${reason}`);
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(checked > 20, `only ${checked} links found: the link pattern is wrong`);
});

test("the link check sees a broken file and a broken anchor", () => {
  const dir = fs.mkdtempSync(path.join(ROOT, "test", "docs", ".tmp-"));
  try {
    const page = path.join(dir, "page.md");
    fs.writeFileSync(page, "# Title\n\n## The `wisp` CLI\n\n[a](#the-wisp-cli) [b](#nope) [c](missing.md)\n");
    const anchors = new Map<string, Set<string>>();
    const reasons = relativeLinks(page).map((link) => brokenReason(page, link, anchors));
    assert.deepEqual(reasons, [null, "no heading #nope", "no such file"]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

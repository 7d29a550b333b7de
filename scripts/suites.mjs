// The suites' files, as npm test's build and runner both list them: `<folder>/<suite>/<name><ending>`
// for every suite folder (test/ for the sources, .test-build/ for the built files).
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./dist.mjs";

/** Paths relative to the checkout, one level of suite folders deep, sorted. */
export function suiteFiles(folder, ending) {
  return fs
    .readdirSync(path.join(ROOT, folder), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((suite) =>
      fs
        .readdirSync(path.join(ROOT, folder, suite.name))
        .filter((name) => name.endsWith(ending))
        .map((name) => `${folder}/${suite.name}/${name}`),
    )
    .sort();
}

// `npm start` on a fresh copy (no dist/): it builds, then serves from the bundle; and when dist/
// counts as current, so that `npm start` and `wisp` run it, and when it is stale, so that they
// rebuild or fall back to src/. Runs in a copy of the repository's sources sharing its node_modules,
// never in the checkout itself (other suites run `wisp` from there at the same time).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { INPUTS } from "../../scripts/dist.mjs";
import { freePort, ROOT } from "../support/processes.ts";

describe("npm start and the build's freshness", () => {
  let copy: string;
  const state = () =>
    execFileSync(
      process.execPath,
      ["--input-type=module", "-e", 'console.log((await import("./scripts/dist.mjs")).distState())'],
      {
        cwd: copy,
        encoding: "utf8",
      },
    ).trim();

  before(() => {
    copy = fs.mkdtempSync(path.join(os.tmpdir(), "wisp-start-"));
    for (const entry of ["package.json", "package-lock.json", ".npmrc", "scripts", "bin", "src"]) {
      fs.cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
    }
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"));
  });

  after(() => fs.rmSync(copy, { recursive: true, force: true }));

  test("on a copy without dist/, npm start builds it and then serves /healthz from the bundle", async () => {
    assert.equal(state(), "missing");
    const port = await freePort();
    const data = fs.mkdtempSync(path.join(os.tmpdir(), "wisp-start-data-"));
    const child = spawn("npm", ["start"], {
      cwd: copy,
      env: {
        ...process.env,
        DATA_DIR: data,
        HOST: "127.0.0.1",
        PORT: String(port),
        RADIUS_AUTH_PORT: "0",
        RADIUS_ACCT_PORT: "0",
        DATABASE_URL: "",
        REDIS_URL: "",
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        assert.equal(child.exitCode, null, `npm start exited:\n${output}`);
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (response) => response.ok,
          () => false,
        );
        if (ok) break;
        assert.ok(Date.now() < deadline, `no /healthz within 60 s:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.match(output, /wisp: built dist\/ in [\d.]+ s/);
      // The start-up line is logged just after the port opens: it may reach us after /healthz did.
      while (!/wisp \S+ started: /.test(output)) {
        assert.ok(Date.now() < deadline, `no start-up line within 60 s:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(state(), "current");
    } finally {
      // npm and its node child are one process group (detached): stop both.
      process.kill(-child.pid!, "SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      fs.rmSync(data, { recursive: true, force: true });
    }
  });

  test("dist/ turns stale when a source changes or goes, and counts as current without sources", () => {
    assert.equal(state(), "current");
    const stamp = path.join(copy, "dist", ".build-stamp");
    const age = (file: string, seconds: number) => {
      const when = new Date(Date.now() - seconds * 1000);
      fs.utimesSync(file, when, when);
    };
    // Sources an hour old, the build ten seconds old: current.
    for (const entry of fs.readdirSync(path.join(copy, "src"), { recursive: true })) {
      age(path.join(copy, "src", String(entry)), 3600);
    }
    age(path.join(copy, "src"), 3600);
    for (const input of INPUTS) age(path.join(copy, input), 3600);
    age(stamp, 10);
    assert.equal(state(), "current");
    // An edit after the build.
    age(path.join(copy, "src", "version.ts"), 0);
    assert.equal(state(), "stale");
    age(path.join(copy, "src", "version.ts"), 3600);
    assert.equal(state(), "current");
    // A deleted file: only its folder's time says so.
    fs.rmSync(path.join(copy, "src", "cli", "backup.ts"));
    assert.equal(state(), "stale");
    // A production image ships dist/ without src/.
    fs.rmSync(path.join(copy, "src"), { recursive: true });
    assert.equal(state(), "current");
    const version = execFileSync(process.execPath, ["bin/wisp.mjs", "--version"], {
      cwd: copy,
      encoding: "utf8",
    });
    assert.match(version, /^\d+\.\d+\.\d+\n$/);
  });
});

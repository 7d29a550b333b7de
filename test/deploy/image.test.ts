// The Dockerfile's own build and start, replayed on a clean copy of the repository (its tracked
// files, as a build context would hold them), since images cannot be built here: `npm ci`, the
// build and the prune of the build stage, the final stage's COPY --from lines, then its CMD run as
// an unprivileged user (nobody, through setpriv) on a data folder of its own. The image must then
// answer /healthz, its HEALTHCHECK must pass, its CLI must work without the sources, and its RADIUS
// server must answer a Status-Server (RFC 5997 section 3). Only the system set-up lines (apt-get,
// the /data folder's owner) are not replayed.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { sendRadius } from "../../src/radius/client.ts";
import { freePort, ROOT } from "../support/processes.ts";
import { parseDockerfile, replay } from "./dockerfile.ts";

const NOBODY = 65534;

function whyNotRunnable(): string | undefined {
  if (process.platform !== "linux") return "replaying the Dockerfile needs Linux";
  if (process.getuid?.() !== 0) return "running the image's command as another user needs root";
  if (spawnSync("setpriv", ["--version"]).status !== 0) return "setpriv (util-linux) is not installed";
  if (spawnSync("git", ["ls-files", "--error-unmatch", "Dockerfile"], { cwd: ROOT }).status !== 0) {
    return "the clean copy is made from git's tracked files: needs git and a checkout with the Dockerfile committed";
  }
  return undefined;
}

const skip = whyNotRunnable();
if (skip) console.log(`skipping the Dockerfile replay: ${skip}`);

/** The repository as a build context: its tracked files as they are in the working tree. */
function cleanCopy(target: string): void {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    const from = path.join(ROOT, file);
    if (!fs.existsSync(from)) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    fs.copyFileSync(from, path.join(target, file));
    fs.chmodSync(path.join(target, file), fs.statSync(from).mode & 0o777);
  }
}

/**
 * better-sqlite3's install fetches a prebuilt binary from GitHub, which this machine cannot reach,
 * and compiles itself otherwise (minutes). Its installer takes a local prebuilt instead: this
 * checkout's own compiled binary, packed under the name the installer looks for.
 */
function localPrebuilds(folder: string): NodeJS.ProcessEnv {
  const pkgDir = path.join(ROOT, "node_modules", "better-sqlite3");
  const { version } = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")) as {
    version: string;
  };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  fs.mkdirSync(folder, { recursive: true });
  execFileSync("tar", ["-czf", path.join(folder, name), "-C", pkgDir, "build/Release/better_sqlite3.node"]);
  return { npm_config_better_sqlite3_local_prebuilds: folder };
}

function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    import("node:dgram").then(({ default: dgram }) => {
      const socket = dgram.createSocket("udp4");
      socket.on("error", reject);
      socket.bind(0, "127.0.0.1", () => {
        const { port } = socket.address();
        socket.close(() => resolve(port));
      });
    }, reject);
  });
}

/** Runs a command as nobody (setpriv: no setuid helper, no login shell). */
function asNobody(command: string[]): string[] {
  return ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--", ...command];
}

describe("the Dockerfile, replayed", { skip }, () => {
  const work = skip ? "" : fs.mkdtempSync(path.join(os.tmpdir(), "wisp-image-"));
  let server: ChildProcess | undefined;

  after(async () => {
    if (server && server.exitCode === null) {
      server.kill("SIGKILL");
      await new Promise((resolve) => server?.once("exit", resolve));
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test("builds as the Dockerfile says, starts as nobody, answers /healthz, its health check and RADIUS", async () => {
    // nobody must be able to reach the final stage's files, as in an image.
    fs.chmodSync(work, 0o755);
    const context = path.join(work, "context");
    cleanCopy(context);
    const instructions = parseDockerfile(fs.readFileSync(path.join(context, "Dockerfile"), "utf8"));
    const stages = replay(instructions, {
      context,
      work,
      runEnv: { ...localPrebuilds(path.join(work, "prebuilds")), npm_config_prefer_offline: "true" },
      skip: (command) =>
        /\bapt-get\b|\bchown\b/.test(command)
          ? "system set-up: this machine has the tools, the test its own data folder"
          : undefined,
      log: (message) => console.log(message),
    });
    const image = stages.get("last")!;
    const app = path.join(image.root, image.workdir);

    // What the final stage promises.
    assert.ok(image.user && image.user !== "root", "the image runs as a user that is not root");
    assert.deepEqual(image.volumes, ["/data"]);
    assert.equal(image.env.DATA_DIR, "/data");
    for (const port of ["8080", "1812/udp", "1813/udp"])
      assert.ok(image.expose.includes(port), `EXPOSE ${port}`);
    assert.ok(image.cmd && image.healthcheck, "CMD and HEALTHCHECK are set");
    assert.equal(fs.existsSync(path.join(app, "src")), false, "no TypeScript sources in the image");
    assert.equal(
      fs.existsSync(path.join(app, "node_modules", "typescript")),
      false,
      "development packages pruned",
    );

    const data = path.join(work, "data");
    fs.mkdirSync(data);
    fs.chownSync(data, NOBODY, NOBODY);
    const [port, authPort, acctPort] = [await freePort(), await freeUdpPort(), await freeUdpPort()];
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...image.env,
      DATA_DIR: data,
      HOST: "127.0.0.1",
      PORT: String(port),
      RADIUS_AUTH_PORT: String(authPort),
      RADIUS_ACCT_PORT: String(acctPort),
    };

    // The image's CLI (no sources beside it: it must run the bundle) adds the lab's RADIUS client.
    const secret = "image-test-secret";
    const [cli, ...cliArgs] = asNobody([
      "node",
      "bin/wisp.mjs",
      "networks",
      "create",
      "--name",
      "lab",
      "--nas-ip",
      "127.0.0.1",
      "--secret",
      secret,
    ]);
    const created = spawnSync(cli!, cliArgs, { cwd: app, env, encoding: "utf8" });
    assert.equal(created.status, 0, created.stderr);

    const [program, ...args] = asNobody(image.cmd!);
    const started = performance.now();
    server = spawn(program!, args, { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    server.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    server.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    for (;;) {
      assert.equal(server.exitCode, null, `the server exited:\n${output}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) break;
      assert.ok(performance.now() - started < 60_000, `no /healthz within 60 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    console.log(`first /healthz ${(performance.now() - started).toFixed(0)} ms after the image's CMD`);
    // The start-up line is logged just after the port opens: it may reach us after /healthz did.
    while (!/wisp \S+ started: /.test(output)) {
      assert.ok(performance.now() - started < 60_000, `no start-up line within 60 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(output, /wisp \S+ started: database sqlite /);
    const uid = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${server.pid}/status`, "utf8"))?.[1];
    // setpriv execs the command: the server is the process itself, running as nobody.
    assert.equal(Number(uid), NOBODY);
    assert.equal(fs.statSync(path.join(data, "wisp.db")).uid, NOBODY);

    const [check, ...checkArgs] = asNobody(image.healthcheck!);
    const health = spawnSync(check!, checkArgs, { cwd: app, env, encoding: "utf8" });
    assert.equal(health.status, 0, `HEALTHCHECK failed: ${health.stderr}`);

    const answer = await sendRadius({ code: "Status-Server", host: "127.0.0.1", port: authPort, secret });
    assert.equal(answer.type, "Access-Accept");

    server.kill("SIGTERM");
    const code = await new Promise((resolve) => server?.once("exit", resolve));
    assert.equal(code, 0, output);
  });
});

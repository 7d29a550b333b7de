// `wisp backup <file>` as operators run it: a real CLI process copying a real SQLite database
// (with enough pages that the online backup takes many steps), the copy opened and checked, and
// backups interrupted by SIGTERM and by kill -9 half-way, which must leave the target untouched.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { entryArgs, ROOT, wisp } from "../support/processes.ts";

/** Pages of filler: enough that the backup (100 pages a step) is still copying when it is killed. */
const FILLER_ROWS = 20_000;
const FILLER_BYTES = 4000;

function withoutDatabaseSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  delete env.DATABASE_URL;
  delete env.WEBHOOK_SECRET_KEY;
  return env;
}

const sha256 = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

describe("wisp backup", () => {
  let dir: string;
  let dataDir: string;
  const env = () => ({ DATA_DIR: dataDir, DATABASE_URL: undefined, WEBHOOK_SECRET_KEY: undefined });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "wisp-backup-"));
    dataDir = path.join(dir, "data");
    const created = await wisp(["accounts", "create", "acme"], env());
    assert.equal(created.code, 0, created.stderr);
    // About 80 MB more, straight into the file Wisp made (the backup copies pages, whatever they hold).
    const database = new SqliteDatabase(path.join(dataDir, "wisp.db"));
    database.exec("create table backup_filler (b blob)");
    database
      .prepare(
        `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
         insert into backup_filler select randomblob(?) from n`,
      )
      .run(FILLER_ROWS, FILLER_BYTES);
    database.close();
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("copies a consistent database, owner-only, and names secret.key", async () => {
    const target = path.join(dir, "first.db");
    const result = await wisp(["backup", target], env());
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^wisp: backed up .*wisp\.db to .*first\.db \(\d+\.\d MiB in [\d.]+ s\)\n/);
    assert.match(result.stderr, /keep secret\.key from the same DATA_DIR with it/);
    assert.equal(fs.statSync(target).mode & 0o777, 0o600);
    const copy = new SqliteDatabase(target, { readonly: true });
    try {
      assert.equal(copy.pragma("integrity_check", { simple: true }), "ok");
      assert.deepEqual(copy.prepare("select name from accounts order by id").pluck().all(), ["acme"]);
      assert.equal(copy.prepare("select count(*) from backup_filler").pluck().get(), FILLER_ROWS);
    } finally {
      copy.close();
    }
    assert.deepEqual(
      fs.readdirSync(dir).filter((name) => name.includes(".partial-")),
      [],
      "no temporary file is left",
    );
  });

  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    test(`${signal} half-way leaves the previous backup under the target name, untouched`, async () => {
      const target = path.join(dir, `interrupted-${signal}.db`);
      fs.writeFileSync(target, "yesterday's backup");
      const before = sha256(target);
      const child = spawn(process.execPath, [...entryArgs("cli"), "backup", target], {
        cwd: ROOT,
        env: withoutDatabaseSettings({ ...process.env, DATA_DIR: dataDir }),
        stdio: "ignore",
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once("exit", (code, signal) => resolve({ code, signal })),
      );
      const partial = `.${path.basename(target)}.partial-${child.pid}`;
      // Wait until the copy has started (its temporary file has data), then interrupt it.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const size = fs.statSync(path.join(dir, partial), { throwIfNoEntry: false })?.size ?? 0;
        if (size > 0) break;
        assert.equal(child.exitCode, null, "the backup was still running when interrupted");
        assert.ok(Date.now() < deadline, "the backup started within 30 s");
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      child.kill(signal);
      const end = await exited;
      assert.notEqual(end.code, 0, "the backup did not complete");
      assert.equal(sha256(target), before, "the target still holds the previous backup");
      const left = fs.existsSync(path.join(dir, partial));
      // SIGTERM is caught and the partial copy removed; kill -9 leaves it, under its own name only.
      assert.equal(left, signal === "SIGKILL");
      fs.rmSync(path.join(dir, partial), { force: true });
    });
  }

  test("on PostgreSQL it copies nothing and points to pg_dump", async () => {
    const target = path.join(dir, "pg.db");
    // Never connected to: the command refuses before opening anything.
    const result = await wisp(["backup", target], {
      DATA_DIR: dataDir,
      DATABASE_URL: "postgres://wisp:hunter2@127.0.0.1:1/wisp",
    });
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^wisp: backup copies a SQLite database; postgres:\/\/127\.0\.0\.1:1\/wisp is PostgreSQL: use pg_dump/,
    );
    assert.doesNotMatch(result.stderr, /hunter2/);
    assert.equal(fs.existsSync(target), false);
  });

  test("refuses a folder, a missing folder and the database itself, writing nothing", async () => {
    const [folder, missing, itself] = await Promise.all([
      wisp(["backup", dir], env()),
      wisp(["backup", path.join(dir, "nope", "x.db")], env()),
      wisp(["backup", path.join(dataDir, "wisp.db")], env()),
    ]);
    assert.equal(folder.code, 1);
    assert.match(folder.stderr, /is a folder: name the backup file/);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /the folder .*nope does not exist/);
    assert.equal(itself.code, 1);
    assert.match(itself.stderr, /cannot replace the database itself/);
  });
});

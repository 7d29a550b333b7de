// The audit log through the CLI (issue 29 point 3): a few representative `wisp` commands, each a
// real process on a fresh SQLite database, leave exactly one row naming the operating-system user
// who ran them (actor "cli", address "local"); a read-only command leaves none.
import assert from "node:assert/strict";
import { userInfo } from "node:os";
import { after, before, describe, test } from "node:test";
import { type Database, openDatabase } from "../../src/db/database.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, type ProcessResult, wisp } from "../support/processes.ts";

const run = (r: ProcessResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

describe("audit log of the CLI", () => {
  let database: TestDatabase;
  let opened: Database | undefined;
  let env: Env;

  before(async () => {
    database = await createTestDatabase("sqlite");
    env = databaseEnv(database);
  });
  after(async () => {
    await opened?.close();
    await database?.drop();
  });

  test("each change is one row naming the OS user; a read is none", async () => {
    // The first command migrates the database; it is audited like the rest.
    const commands: { args: string[]; resource: string; action: string }[] = [
      {
        args: ["plans", "create", "--name", "Basic", "--download", "5000"],
        resource: "plan",
        action: "create",
      },
      {
        args: ["networks", "create", "--name", "edge", "--nas-ip", "10.9.8.7", "--vendor", "mikrotik"],
        resource: "network",
        action: "create",
      },
      { args: ["plans", "update", "Basic", "--download", "none"], resource: "plan", action: "update" },
      { args: ["plans", "delete", "Basic"], resource: "plan", action: "delete" },
      { args: ["networks", "list"], resource: "", action: "" },
    ];
    const os = userInfo().username;
    let seen = 0;
    for (const command of commands) {
      const result = await wisp(command.args, env);
      assert.equal(result.code, 0, run(result));
      opened ??= openDatabase({ dataDir: database.dataDir });
      const rows = await opened.db.selectFrom("audit_log").selectAll().orderBy("id").execute();
      const added = rows.slice(seen);
      seen = rows.length;
      const name = command.args.join(" ");
      if (!command.resource) {
        assert.equal(added.length, 0, `${name}: a read writes nothing`);
        continue;
      }
      assert.equal(added.length, 1, `${name}: ${added.map((r) => `${r.resource}/${r.action}`)}`);
      const row = added[0]!;
      assert.deepEqual(
        [row.actor_type, row.actor_id, row.actor_name, row.address, row.resource, row.action],
        ["cli", os, os, "local", command.resource, command.action],
        name,
      );
    }
  });
});

// `wisp policy ...` as operators run it: real processes on a fresh SQLite database. The rules are
// tested in depth in test/http/policies.test.ts and test/policies/evaluate.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, type ProcessResult, wisp } from "../support/processes.ts";

const run = (r: ProcessResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

describe("wisp policy CLI", () => {
  let database: TestDatabase;
  let env: Env;
  const cli = (args: string[]) => wisp(args, env);

  before(async () => {
    database = await createTestDatabase("sqlite");
    env = databaseEnv(database);
    const made = await cli([
      "networks",
      "create",
      "--name",
      "hq",
      "--nas-ip",
      "127.0.0.5",
      "--time-zone",
      "Asia/Tokyo",
    ]);
    assert.equal(made.code, 0, run(made));
  });
  after(() => database?.drop());

  test("create, list with warnings, move, explain, refuse a bad VLAN, delete", async () => {
    const a = await cli([
      "policy",
      "create",
      "--name",
      "guest night",
      "--ssid",
      "Guest",
      "--time",
      "22:00-06:00",
      "--reject",
      "closed at night",
    ]);
    assert.equal(a.code, 0, run(a));
    const b = await cli([
      "policy",
      "create",
      "--name",
      "guest vlan",
      "--ssid",
      "Guest",
      "--vlan",
      "30",
      "--session-timeout",
      "3600",
    ]);
    assert.equal(b.code, 0, run(b));
    const c = await cli([
      "policy",
      "create",
      "--name",
      "late guests",
      "--ssid",
      "Guest",
      "--time",
      "23:00-01:00",
      "--vlan",
      "31",
    ]);
    assert.match(c.stdout, /warning: unreachable: policy \d+ "guest night" \(position 1\) comes first/);
    const bad = await cli(["policy", "create", "--name", "bad", "--vlan", "4095"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /outcome\.vlan must be an integer from 1 to 4094/);
    const moved = await cli(["policy", "move", "guest vlan", "1"]);
    assert.equal(moved.code, 0, run(moved));
    assert.match(moved.stdout, /^1\. guest vlan\n2\. guest night\n3\. late guests$/m);
    const listed = await cli(["policy", "list", "--json"]);
    const l = JSON.parse(listed.stdout);
    assert.deepEqual(
      l.data.map((p: { name: string }) => p.name),
      ["guest vlan", "guest night", "late guests"],
    );
    assert.equal(l.default.position, 4);
    const networks = JSON.parse((await cli(["networks", "list", "--json"])).stdout);
    const explained = await cli([
      "policy",
      "explain",
      "--network",
      String(networks[0].id),
      "--ssid",
      "Office",
      "--time",
      "2024-01-01T23:30:00Z",
    ]);
    assert.equal(explained.code, 0, run(explained));
    assert.match(explained.stdout, /1\. guest vlan: no, ssids: needs \[Guest\], the request has Office/);
    assert.match(explained.stdout, /4\. default: MATCHED \(the default rule\)/);
    assert.match(explained.stdout, /decision: accept/);
    const night = await cli([
      "policy",
      "explain",
      "--network",
      String(networks[0].id),
      "--ssid",
      "Guest",
      "--json",
    ]);
    assert.equal(JSON.parse(night.stdout).matched.name, "guest vlan");
    assert.equal((await cli(["policy", "delete", "late guests"])).code, 0);
    assert.equal(JSON.parse((await cli(["policy", "list", "--json"])).stdout).total, 2);
  });
});

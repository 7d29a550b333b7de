// `wisp plans ...` as operators run it: a real process on a fresh SQLite database (the service
// rules are tested in test/http/plans.test.ts on both databases).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import { databaseEnv, type Env, type ProcessResult, wisp } from "../support/processes.ts";

const run = (r: ProcessResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

describe("wisp plans CLI", () => {
  let database: TestDatabase;
  let env: Env;
  const cli = (args: string[]) => wisp(args, env);

  before(async () => {
    database = await createTestDatabase("sqlite");
    env = databaseEnv(database);
  });
  after(() => database?.drop());

  test("create, list, show, update, delete; bad figures refused; a network's vendor; an unknown group to assign", async () => {
    const made = await cli([
      "plans",
      "create",
      "--name",
      "Basic",
      "--download",
      "5000",
      "--upload",
      "1000",
      "--data-quota",
      "2000000000",
      "--data-period",
      "day",
      "--devices",
      "2",
    ]);
    assert.equal(made.code, 0, run(made));
    assert.match(made.stdout, /created plan \d+ "Basic"/);
    const [bad, period, network, group] = await Promise.all([
      cli(["plans", "create", "--name", "Bad", "--download", "100000001"]),
      cli(["plans", "create", "--name", "Bad", "--time-quota", "60", "--time-period", "week"]),
      cli(["networks", "create", "--name", "edge", "--nas-ip", "10.9.8.7", "--vendor", "mikrotik"]),
      cli(["plans", "assign", "Basic", "--group", "nobody"]),
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /download_kbps must be a whole number of kbit\/s from 1 to 100000000/);
    assert.match(period.stderr, /time_period must be one of day, month, validity/);
    assert.equal(network.code, 0, run(network));
    assert.match(group.stderr, /group nobody not found/);

    const [show, networkShow] = await Promise.all([
      cli(["plans", "show", "Basic"]),
      cli(["networks", "show", "1"]),
    ]);
    assert.match(show.stdout, /download\s+5000 kbit\/s/);
    assert.match(show.stdout, /data quota\s+2000000000 octets per day/);
    assert.match(show.stdout, /used by\s+0 user\(s\), 0 group\(s\), 0 batch\(es\)/);
    assert.match(networkShow.stdout, /vendor\s+mikrotik/);

    const updated = await cli(["plans", "update", "Basic", "--download", "none", "--name", "Basic2"]);
    assert.equal(updated.code, 0, run(updated));
    const [plan] = JSON.parse((await cli(["plans", "list", "--json"])).stdout);
    assert.equal(plan.name, "Basic2");
    assert.equal(plan.download_kbps, null);
    assert.equal(plan.upload_kbps, 1000);
    const deleted = await cli(["plans", "delete", "Basic2"]);
    assert.match(deleted.stdout, /deleted plan \d+ "Basic2"/);
  });
});

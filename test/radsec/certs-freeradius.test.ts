// A network reached over RadSec only has no address (nasname ''): a FreeRADIUS reading the same
// database (read_clients, deploy/freeradius/configure.sh) must still start and serve the networks
// that have one. Real FreeRADIUS 3.2 on a Wisp SQLite database.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createCore } from "../../src/core/index.ts";
import { openDatabase } from "../../src/db/database.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createTestDatabase, type TestDatabase } from "../support/databases.ts";
import {
  type FreeRadiusLab,
  freeradiusUnavailable,
  radclient,
  startFreeRadius,
} from "../support/freeradius-lab.ts";

const SECRET = "udp-site-secret-1";

describe("FreeRADIUS beside RadSec-only networks", { skip: freeradiusUnavailable() ?? false }, () => {
  let database: TestDatabase;
  let freeradius: FreeRadiusLab;

  before(async () => {
    database = await createTestDatabase("sqlite");
    const opened = openDatabase({ dataDir: database.dataDir });
    try {
      await migrate(opened);
      const core = createCore(opened, { publicUrl: "https://wifi.example.org", dataDir: database.dataDir });
      const account = await core.accounts.resolve(undefined);
      await core.networks.create(account.id, { name: "NAT site 1", nas_ip: "" });
      await core.networks.create(account.id, { name: "NAT site 2", nas_ip: "" });
      await core.networks.create(account.id, { name: "LAN", nas_ip: "127.0.0.1", secret: SECRET });
      await core.users.create(account.id, { username: "alice", password: "alice-pw-1" });
    } finally {
      await opened.close();
    }
    freeradius = await startFreeRadius(path.join(database.dataDir, "wisp.db"));
  });
  after(async () => {
    await freeradius?.stop();
    await database?.drop();
  });

  test("it starts, skips the rows without an address, and answers the network with one", async () => {
    const accept = await radclient(freeradius.authPort, "auth", SECRET, [
      ["User-Name", "alice"],
      ["User-Password", "alice-pw-1"],
    ]);
    assert.equal(accept.code, "Access-Accept", fs.readFileSync(freeradius.logFile, "utf8").slice(-2000));
    const reject = await radclient(freeradius.authPort, "auth", SECRET, [
      ["User-Name", "alice"],
      ["User-Password", "wrong"],
    ]);
    assert.equal(reject.code, "Access-Reject");
  });
});

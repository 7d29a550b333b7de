// GET /healthz tells the truth: 503 with the reason when the database cannot be read (a SQLite file
// gone, a PostgreSQL database dropped), and whether Redis answers when REDIS_URL is set.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { dialects, REDIS_URL, redisUnavailable } from "../support/databases.ts";
import { freePort } from "../support/processes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

async function health(server: TestServer) {
  const response = await fetch(`${server.url}/healthz`);
  return { status: response.status, type: response.headers.get("content-type"), body: await response.json() };
}

for (const { dialect, skip } of await dialects()) {
  describe(`/healthz on ${dialect}`, { skip }, () => {
    test("200 while the database reads; 503 in the error shape, with the reason, once it cannot", async () => {
      // With its worker: dropping the database ends the worker's connections mid-query too, and
      // the process must live on to answer 503.
      const server = await startTestServer({ dialect });
      try {
        assert.deepEqual(await health(server), {
          status: 200,
          type: "application/json; charset=utf-8",
          body: { status: "ok", database: "ok" },
        });
        if (dialect === "sqlite") {
          // The file is moved away: open connections still read the old inode, a restart would not.
          const file = path.join(server.database.dataDir, "wisp.db");
          fs.renameSync(file, `${file}.moved`);
          const broken = await health(server);
          fs.renameSync(`${file}.moved`, file);
          assert.equal(broken.status, 503);
          assert.match(broken.type ?? "", /^application\/json/);
          assert.equal(broken.body.error, true);
          assert.equal(broken.body.code, 503);
          assert.equal(broken.body.status, "unavailable");
          assert.match(broken.body.message, /^the database cannot be read: unable to open database file$/);
          assert.equal((await health(server)).status, 200, "healthy again once the file is back");
        } else {
          // Dropping the database (connections forced off) leaves nothing to reconnect to.
          await server.database.drop();
          const broken = await health(server);
          assert.equal(broken.status, 503);
          assert.equal(broken.body.error, true);
          assert.equal(broken.body.code, 503);
          assert.match(broken.body.message, /^the database cannot be read: .*(does not exist|terminat)/);
          assert.equal(
            broken.body.database,
            broken.body.message.replace("the database cannot be read: ", ""),
          );
        }
      } finally {
        await server.stop().catch(() => {});
      }
    });
  });
}

describe("/healthz with REDIS_URL", () => {
  test("says redis ok when Redis answers", async (t) => {
    const reason = await redisUnavailable();
    if (reason) return t.skip(reason);
    const server = await startTestServer({ env: { REDIS_URL }, redisPrefix: `wisp:test:${process.pid}:` });
    try {
      assert.deepEqual((await health(server)).body, { status: "ok", database: "ok", redis: "ok" });
    } finally {
      await server.stop();
    }
  });

  test("says redis unreachable (status degraded, still 200: the API answers) when it does not", async () => {
    const port = await freePort();
    const server = await startTestServer({ env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    try {
      const answer = await health(server);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.status, "degraded");
      assert.equal(answer.body.database, "ok");
      assert.match(answer.body.redis, /^unreachable: /);
      assert.equal((await server.call("GET", "/healthz")).status, 200);
    } finally {
      await server.stop();
    }
  });

  test("without REDIS_URL there is no redis field", async () => {
    const server = await startTestServer();
    try {
      assert.ok(!("redis" in (await health(server)).body));
    } finally {
      await server.stop();
    }
  });
});

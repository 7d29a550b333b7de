// Issue 25, bad input: reordering policies while RADIUS is under load. Logins are decided through
// the AAA service (the path every RADIUS door takes) 20 at a time while another task keeps
// reordering three rules that all match; every login must be answered by exactly one whole list:
// the rule first in some order the account had, its attributes alone, and the attempt recorded
// with that rule's name. On SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "../../src/core/aaa/service.ts";
import { dialects } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const ROUNDS = 15;
const PARALLEL = 20;

for (const { dialect, skip } of await dialects()) {
  describe(`policies reordered under load on ${dialect}`, { skip }, () => {
    let server: TestServer;
    let accountId: number;
    let network: Client;
    const ids: number[] = [];

    before(async () => {
      server = await startTestServer({ dialect });
      const core = server.core;
      accountId = (await server.account("default")).id;
      const made = await core.networks.create(accountId, {
        name: "hq",
        nas_ip: "127.0.0.1",
        secret: "secret-25-policies",
      });
      network = (await server.core.database.db
        .selectFrom("nas")
        .selectAll()
        .where("id", "=", made.network.id)
        .executeTakeFirstOrThrow()) as unknown as Client;
      await core.users.create(accountId, { username: "ann", password: "pw-ann-2525" });
      for (const name of ["one", "two", "three"]) {
        const outcome =
          name === "three"
            ? { action: "reject", reason: "three" }
            : { action: "accept", filter_id: name, session_timeout: name === "one" ? 100 : 200 };
        ids.push((await core.policies.create(accountId, { name, conditions: {}, outcome })).id);
      }
    });
    after(async () => server?.stop());

    test("each login is decided by one whole list while the order keeps changing", async () => {
      const orders = [
        [ids[0]!, ids[1]!, ids[2]!],
        [ids[1]!, ids[2]!, ids[0]!],
        [ids[2]!, ids[0]!, ids[1]!],
        [ids[1]!, ids[0]!, ids[2]!],
      ];
      let stop = false;
      let reorders = 0;
      const reordering = (async () => {
        while (!stop) {
          await server.core.policies.reorder(accountId, orders[reorders % orders.length]!);
          reorders++;
          // Another turn of the event loop between changes, as requests from outside would get.
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const seen = new Set<string>();
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const outcomes = await Promise.all(
            Array.from({ length: PARALLEL }, () =>
              server.core.aaa.decide(network, [{ attribute: "User-Name", op: "=", value: "ann" }], {
                password: Buffer.from("pw-ann-2525"),
              }),
            ),
          );
          for (const { result, attempt } of outcomes) {
            const name = attempt.policy?.name;
            assert.ok(name === "one" || name === "two" || name === "three", `decided by ${name}`);
            seen.add(name);
            if (name === "three") {
              assert.equal(result.accepted, false);
              assert.equal(result.reason, "three");
              continue;
            }
            assert.equal(result.accepted, true, String(result.reason));
            const filters = result.reply.filter((p) => p.attribute === "Filter-Id").map((p) => p.value);
            const timeouts = result.reply
              .filter((p) => p.attribute === "Session-Timeout")
              .map((p) => p.value);
            // One rule's attributes, whole: never one rule's Filter-Id with another's timeout.
            assert.deepEqual(filters, [name]);
            assert.deepEqual(timeouts, [name === "one" ? "100" : "200"]);
          }
          await Promise.all(outcomes.map((o) => server.core.aaa.record(o)));
        }
      } finally {
        stop = true;
        await reordering;
      }
      assert.ok(reorders >= 3, `the order changed ${reorders} times during the logins`);
      assert.ok(seen.size >= 2, `logins saw ${[...seen].join(", ")}: the reorders reached them`);
      // What was recorded says the same as what was answered.
      await server.core.aaa.drain();
      const recorded = await server.core.database.db
        .selectFrom("radpostauth")
        .select(["policy_name", "reply", "reason"])
        .where("account_id", "=", accountId)
        .execute();
      assert.equal(recorded.length, ROUNDS * PARALLEL);
      for (const row of recorded) {
        assert.ok(["one", "two", "three"].includes(String(row.policy_name)));
        if (row.policy_name === "three") assert.equal(row.reason, "three");
      }
    });
  });
}
